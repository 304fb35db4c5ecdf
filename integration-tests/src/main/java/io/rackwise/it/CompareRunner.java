package io.rackwise.it;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairSchedulerConfiguration;

/**
 * The "main job" runner: the same {@link JobMix} on a fresh multi-rack cluster per scheduler,
 * then per-job wall times and shuffle figures side by side. By default it runs {@link
 * Setup#shuffleComparison()}, the setting {@code CrossRackShuffleIT} asserts on.
 *
 * <p>Launched by {@code mvn -B -pl integration-tests -am -Pcompare -DskipTests verify} (see
 * docs/minicluster.md). Knobs are system properties, forwarded by the profile from the Maven
 * command line:
 * <ul>
 *   <li>{@code rackwise.compare.schedulers}: comma list of {@code rackwise} and the stock
 *       settings {@code stock} (FairScheduler as installed), {@code stock-delay} (with delay
 *       scheduling), {@code stock-fifo} (FIFO leaf queues) and {@code stock-speculative}
 *       (MapReduce's speculative attempts on); default {@link #DEFAULT_SCHEDULERS}, in run
 *       order</li>
 *   <li>{@code rackwise.compare.racks}, {@code rackwise.compare.nodesPerRack} (2, 2)</li>
 *   <li>{@code rackwise.compare.nmMemoryMb}: memory each NodeManager offers (2048, i.e. four
 *       512 MB task containers)</li>
 *   <li>{@code rackwise.compare.hdfs}: {@code false} runs on the local file system (no
 *       split locality) instead of a DataNode per node (default {@code true})</li>
 *   <li>{@code rackwise.mix.*}: job sizes and order, see {@link JobMix.Settings}</li>
 *   <li>{@code rackwise.compare.conf.<key>=<value>}: extra cluster configuration for every
 *       run, e.g. {@code -Drackwise.compare.conf.yarn.scheduler.fair.assignmultiple=true}</li>
 * </ul>
 * Exit status 0 only if every job of every run succeeded. A CSV copy of the table goes to
 * {@code target/rackwise-it/compare.csv}.
 */
public final class CompareRunner {
  private static final String CONF_PREFIX = "rackwise.compare.conf.";

  /**
   * The stock settings a user could pick instead of Rackwise: FairScheduler as installed,
   * with delay scheduling, with FIFO leaf queues (the simulator's {@code fair}, {@code delay}
   * and {@code fair-fifo}), and with MapReduce's speculative attempts, which Hadoop has on by
   * default and the harness turns off for every other run. A claim against "stock" is a claim
   * against the best of them.
   */
  public static final List<String> STOCK_SCHEDULERS =
      List.of("stock", "stock-delay", "stock-fifo", "stock-speculative");

  /** The main job's run order: Rackwise, then every stock setting. */
  public static final String DEFAULT_SCHEDULERS = "rackwise," + String.join(",", STOCK_SCHEDULERS);

  private static final String STOCK_ALLOCATIONS = "allocations/stock-fair-scheduler.xml";

  /** One scheduler setup to run the mix under. */
  private record Variant(String name, String label, String schedulerClass,
      String allocationResource, Map<String, String> conf) {
    static Variant of(String requested) {
      String name = requested.trim().toLowerCase(Locale.ROOT);
      switch (name) {
        case "rackwise":
          // native.required: a run that silently fell back to stock FS would compare FS
          // with itself.
          return new Variant(name, "Rackwise", MultiRackCluster.RACKWISE_SCHEDULER,
              "allocations/rackwise-compare-fair-scheduler.xml",
              Map.of(MultiRackCluster.RACKWISE_NATIVE_REQUIRED, "true"));
        case "stock":
          return new Variant(name, "FairScheduler", MultiRackCluster.FAIR_SCHEDULER,
              STOCK_ALLOCATIONS, Map.of());
        case "stock-delay":
          // The longest wait FairScheduler allows: a whole cluster's worth of scheduling
          // opportunities for a node-local container, as many again for a rack-local one
          // (the simulator's `delay` baseline).
          return new Variant(name, "FairScheduler+delay", MultiRackCluster.FAIR_SCHEDULER,
              STOCK_ALLOCATIONS, Map.of(
                  FairSchedulerConfiguration.LOCALITY_THRESHOLD_NODE, "1.0",
                  FairSchedulerConfiguration.LOCALITY_THRESHOLD_RACK, "1.0"));
        case "stock-fifo":
          return new Variant(name, "FairScheduler/FIFO", MultiRackCluster.FAIR_SCHEDULER,
              "allocations/stock-fifo-fair-scheduler.xml", Map.of());
        case "stock-speculative":
          // mapred-default.xml's values, over the harness's "off" (MultiRackCluster says why).
          return new Variant(name, "FairScheduler+speculation",
              MultiRackCluster.FAIR_SCHEDULER, STOCK_ALLOCATIONS, Map.of(
                  MRJobConfig.MAP_SPECULATIVE, "true",
                  MRJobConfig.REDUCE_SPECULATIVE, "true"));
        default:
          throw new IllegalArgumentException("unknown scheduler '" + requested
              + "' in rackwise.compare.schedulers (use rackwise, "
              + String.join(", ", STOCK_SCHEDULERS) + ")");
      }
    }
  }

  /**
   * Cluster shape, job mix and extra configuration, the same for every scheduler compared.
   *
   * @param nmMemoryMb memory each NodeManager offers (2048 = four 512 MB task containers)
   * @param extraConf  cluster settings on top of the harness's, e.g.
   *                   {@code yarn.scheduler.fair.assignmultiple=true}
   */
  public record Setup(int racks, int nodesPerRack, int nmMemoryMb, boolean hdfs,
      JobMix.Settings mix, Map<String, String> extraConf) {

    /**
     * ShuffleWatcher's setting in miniature, the runner's default: {@link
     * JobMix.Settings#shuffleComparison()} on 2 racks x 2 nodes of four 512 MB containers, so
     * that a rack one job prefers is taken by the other job's work rather than left idle.
     *
     * <p>The Rackwise run's queues (allocations/rackwise-compare-fair-scheduler.xml) raise the
     * starvation guard and {@code rackWaitMs} to 180 s (ShuffleWatcher's defaults are 60 s): on
     * a 2-core machine running a dozen task JVMs a task takes 20-40 s, and the file says what
     * 30 s waits did here.
     */
    public static Setup shuffleComparison() {
      return new Setup(2, 2, 2048, true, JobMix.Settings.shuffleComparison(), Map.of());
    }

    /** {@link #shuffleComparison()} overridden by the system properties on the class. */
    public static Setup fromSystemProperties() {
      Setup base = shuffleComparison();
      Map<String, String> extra = new TreeMap<>(base.extraConf());
      System.getProperties().stringPropertyNames().stream()
          .filter(k -> k.startsWith(CONF_PREFIX))
          .forEach(k -> extra.put(k.substring(CONF_PREFIX.length()), System.getProperty(k)));
      return new Setup(
          Integer.getInteger("rackwise.compare.racks", base.racks()),
          Integer.getInteger("rackwise.compare.nodesPerRack", base.nodesPerRack()),
          Integer.getInteger("rackwise.compare.nmMemoryMb", base.nmMemoryMb()),
          Boolean.parseBoolean(System.getProperty("rackwise.compare.hdfs",
              Boolean.toString(base.hdfs()))),
          JobMix.Settings.fromSystemProperties(base.mix()),
          extra);
    }
  }

  /**
   * What one scheduler did with the mix.
   *
   * @param rackwiseMetrics the scheduler's Rackwise counters by name (e.g. {@code
   *                        FallbackOffers}), read before the cluster stopped; empty for stock
   *                        FairScheduler
   */
  public record Run(String label, List<JobResult> results, Map<String, Object> rackwiseMetrics) {
  }

  private CompareRunner() {
  }

  public static void main(String[] args) throws Exception {
    int status;
    try {
      // The Maven profile forwards the property even when nobody set it, as an empty value.
      String requested = System.getProperty("rackwise.compare.schedulers", "");
      List<String> schedulers =
          List.of((requested.isBlank() ? DEFAULT_SCHEDULERS : requested).split(","));
      List<Run> runs = compare(Setup.fromSystemProperties(), schedulers, System.out);
      status = runs.stream().flatMap(r -> r.results().stream()).allMatch(JobResult::succeeded)
          ? 0 : 1;
    } catch (Throwable t) {
      t.printStackTrace();
      status = 2;
    }
    // Hadoop daemons leave non-daemon threads behind even after a clean stop.
    System.exit(status);
  }

  /**
   * Runs the mix on a fresh cluster per scheduler (names as in {@link #DEFAULT_SCHEDULERS}, in
   * the given order), prints each run and then the side-by-side table, and writes the table to
   * {@code target/rackwise-it/compare.csv}.
   */
  public static List<Run> compare(Setup setup, List<String> schedulers, PrintStream out)
      throws Exception {
    List<Variant> variants = schedulers.stream().map(Variant::of).toList();
    out.printf("Rackwise compare: %d racks x %d nodes of %d MB, %s, %s%n", setup.racks(),
        setup.nodesPerRack(), setup.nmMemoryMb(),
        setup.hdfs() ? "HDFS" : "local file system", setup.mix());
    if (!setup.extraConf().isEmpty()) {
      out.println("extra configuration: " + setup.extraConf());
    }
    List<Run> runs = new ArrayList<>();
    for (Variant v : variants) {
      out.printf("%n== %s (%s)%n", v.label, v.schedulerClass);
      long start = System.nanoTime();
      try (MultiRackCluster cluster = MultiRackCluster.builder("compare-" + v.name)
          .racks(setup.racks())
          .nodesPerRack(setup.nodesPerRack())
          .nmMemoryMb(setup.nmMemoryMb())
          .hdfs(setup.hdfs())
          .schedulerClass(v.schedulerClass)
          .allocationResource(v.allocationResource)
          .setAll(v.conf)
          .setAll(setup.extraConf())
          .start()) {
        out.println("scheduler nodes -> racks: " + cluster.schedulerNodeRacks());
        List<JobResult> results = JobMix.run(cluster, setup.mix());
        for (JobResult r : results) {
          out.printf("  %-9s %s in %.1f s (%s)%n", r.name(), r.succeeded() ? "ok" : "FAILED",
              r.wallMillis() / 1000.0, r.jobId());
          if (!r.succeeded()) {
            out.println("            " + r.diagnostics());
          }
        }
        Map<String, Object> metrics = rackwiseMetrics(cluster.scheduler());
        if (!metrics.isEmpty()) {
          out.println("  rackwise metrics: " + metrics);
        }
        runs.add(new Run(v.label, results, metrics));
        out.printf("  cluster log: %s%n", cluster.workDir().resolve("hadoop.log"));
      }
      out.printf("  run took %.1f s including cluster start/stop%n",
          (System.nanoTime() - start) / 1e9);
    }

    List<String[]> rows = table(runs);
    out.println();
    printAligned(out, rows);
    writeCsv(Path.of("target", "rackwise-it", "compare.csv"), rows);
    return runs;
  }

  /** One row per job and scheduler, the schedulers of a job next to each other. */
  private static List<String[]> table(List<Run> runs) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"job", "scheduler", "ok", "wall_s", "app_s",
        "map_out_materialized_B", "reduce_shuffle_B", "xrack_shuffle_B",
        "maps_data_local", "maps_rack_local", "maps_off_rack", "maps", "reduces",
        "maps_per_rack", "reduces_per_rack"});
    List<String> jobs = new ArrayList<>();
    runs.forEach(run -> run.results().forEach(r -> {
      if (!jobs.contains(r.name())) {
        jobs.add(r.name());
      }
    }));
    for (String job : jobs) {
      runs.forEach(run -> run.results().stream()
          .filter(r -> r.name().equals(job))
          .forEach(r -> rows.add(new String[] {
              job, run.label(), r.succeeded() ? "yes" : "NO",
              String.format(Locale.ROOT, "%.1f", r.wallMillis() / 1000.0),
              String.format(Locale.ROOT, "%.1f", r.appMillis() / 1000.0),
              Long.toString(r.counter(TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES)),
              Long.toString(r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES)),
              r.crossRackShuffleBytes() < 0 ? "-"
                  : Long.toString(r.crossRackShuffleBytes()),
              Long.toString(r.counter(JobCounter.DATA_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.RACK_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.OTHER_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.TOTAL_LAUNCHED_MAPS)),
              Long.toString(r.counter(JobCounter.TOTAL_LAUNCHED_REDUCES)),
              perRack(r.mapHosts()), perRack(r.reduceHosts())})));
    }
    return rows;
  }

  /** Task count per rack, e.g. {@code rack1=12;rack2=4} (no commas: it goes into the CSV). */
  private static String perRack(List<String> hosts) {
    Map<String, Integer> counts = new TreeMap<>();
    hosts.forEach(h -> counts.merge(
        String.valueOf(LoopbackTopology.rackOf(h)).replaceFirst("^/", ""), 1, Integer::sum));
    StringBuilder text = new StringBuilder();
    counts.forEach((rack, n) -> text.append(text.length() == 0 ? "" : ";")
        .append(rack).append('=').append(n));
    return text.length() == 0 ? "-" : text.toString();
  }

  private static void printAligned(PrintStream out, List<String[]> rows) {
    int[] width = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        width[i] = Math.max(width[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.length; i++) {
        // Text columns left-aligned, numbers right-aligned.
        String fmt = i < 3 ? "%-" + width[i] + "s  " : "%" + width[i] + "s  ";
        line.append(String.format(Locale.ROOT, fmt, row[i]));
      }
      out.println(line.toString().stripTrailing());
    }
  }

  private static void writeCsv(Path file, List<String[]> rows) throws Exception {
    Files.createDirectories(file.getParent());
    StringBuilder csv = new StringBuilder();
    for (String[] row : rows) {
      csv.append(String.join(",", row)).append('\n');
    }
    Files.writeString(file, csv, StandardCharsets.UTF_8);
  }

  /**
   * The scheduler's Rackwise counters by name, empty if it has none. Reflection, because this
   * module must also run (stock only) against a plugin jar that predates the accessor, and a
   * missing accessor should not hide the timing table.
   */
  private static Map<String, Object> rackwiseMetrics(ResourceScheduler scheduler) {
    Map<String, Object> values = new TreeMap<>();
    Object metrics;
    try {
      metrics = scheduler.getClass().getMethod("getRackwiseMetrics").invoke(scheduler);
    } catch (NoSuchMethodException e) {
      return values;
    } catch (ReflectiveOperationException e) {
      values.put("unavailable", e.toString());
      return values;
    }
    if (metrics == null) {
      values.put("unavailable", "getRackwiseMetrics() returned null");
      return values;
    }
    for (Method m : metrics.getClass().getMethods()) {
      String n = m.getName();
      if (m.getParameterCount() == 0 && m.getDeclaringClass() != Object.class
          && (n.startsWith("get") || n.startsWith("is"))
          && (m.getReturnType().isPrimitive() || Number.class.isAssignableFrom(
              m.getReturnType()))) {
        try {
          values.put(n.replaceFirst("^(get|is)", ""), m.invoke(metrics));
        } catch (ReflectiveOperationException e) {
          values.put(n, e.getClass().getSimpleName());
        }
      }
    }
    return values;
  }
}
