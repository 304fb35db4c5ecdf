package io.rackwise.it;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * The "main job" runner: the same {@link JobMix} on a fresh multi-rack cluster per scheduler,
 * then per-job wall times and shuffle figures side by side.
 *
 * <p>Launched by {@code mvn -B -pl integration-tests -am -Pcompare -DskipTests verify} (see
 * docs/minicluster.md). Knobs are system properties, forwarded by the profile from the Maven
 * command line:
 * <ul>
 *   <li>{@code rackwise.compare.schedulers}: comma list of {@code rackwise}, {@code stock}
 *       (default {@code rackwise,stock}; order = run order)</li>
 *   <li>{@code rackwise.compare.racks}, {@code rackwise.compare.nodesPerRack} (2, 2)</li>
 *   <li>{@code rackwise.compare.hdfs}: {@code false} runs on the local file system (no
 *       split locality) instead of a DataNode per node (default {@code true})</li>
 *   <li>{@code rackwise.mix.*}: job sizes, see {@link JobMix.Settings#fromSystemProperties}</li>
 *   <li>{@code rackwise.compare.conf.<key>=<value>}: extra cluster configuration for every
 *       run, e.g. {@code -Drackwise.compare.conf.yarn.scheduler.fair.assignmultiple=true}</li>
 * </ul>
 * Exit status 0 only if every job of every run succeeded. A CSV copy of the table goes to
 * {@code target/rackwise-it/compare.csv}.
 */
public final class CompareRunner {
  private static final String CONF_PREFIX = "rackwise.compare.conf.";

  /** One scheduler setup to run the mix under. */
  private record Variant(String label, String schedulerClass, String allocationResource,
      Map<String, String> conf) {
    static Variant of(String name) {
      switch (name.trim().toLowerCase(Locale.ROOT)) {
        case "rackwise":
          // native.required: a run that silently fell back to stock FS would compare FS
          // with itself.
          return new Variant("Rackwise", MultiRackCluster.RACKWISE_SCHEDULER,
              "allocations/rackwise-fair-scheduler.xml",
              Map.of(MultiRackCluster.RACKWISE_NATIVE_REQUIRED, "true"));
        case "stock":
          return new Variant("FairScheduler", MultiRackCluster.FAIR_SCHEDULER,
              "allocations/stock-fair-scheduler.xml", Map.of());
        default:
          throw new IllegalArgumentException("unknown scheduler '" + name
              + "' in rackwise.compare.schedulers (use rackwise, stock)");
      }
    }
  }

  private CompareRunner() {
  }

  public static void main(String[] args) throws Exception {
    int status;
    try {
      status = run(System.out) ? 0 : 1;
    } catch (Throwable t) {
      t.printStackTrace();
      status = 2;
    }
    // Hadoop daemons leave non-daemon threads behind even after a clean stop.
    System.exit(status);
  }

  /** Runs every variant and prints the comparison; true if all jobs succeeded. */
  public static boolean run(PrintStream out) throws Exception {
    int racks = Integer.getInteger("rackwise.compare.racks", 2);
    int nodesPerRack = Integer.getInteger("rackwise.compare.nodesPerRack", 2);
    boolean hdfs = Boolean.parseBoolean(System.getProperty("rackwise.compare.hdfs", "true"));
    JobMix.Settings mix = JobMix.Settings.fromSystemProperties();
    Map<String, String> extra = new TreeMap<>();
    System.getProperties().stringPropertyNames().stream()
        .filter(k -> k.startsWith(CONF_PREFIX))
        .forEach(k -> extra.put(k.substring(CONF_PREFIX.length()), System.getProperty(k)));

    List<Variant> variants = new ArrayList<>();
    for (String name : System.getProperty("rackwise.compare.schedulers", "rackwise,stock")
        .split(",")) {
      variants.add(Variant.of(name));
    }

    out.printf("Rackwise compare: %d racks x %d nodes, %s, %s%n", racks, nodesPerRack,
        hdfs ? "HDFS" : "local file system", mix);
    if (!extra.isEmpty()) {
      out.println("extra configuration: " + extra);
    }
    Map<String, List<JobResult>> byVariant = new LinkedHashMap<>();
    for (Variant v : variants) {
      out.printf("%n== %s (%s)%n", v.label, v.schedulerClass);
      long start = System.nanoTime();
      try (MultiRackCluster cluster = MultiRackCluster.builder("compare-" + v.label)
          .racks(racks)
          .nodesPerRack(nodesPerRack)
          .hdfs(hdfs)
          .schedulerClass(v.schedulerClass)
          .allocationResource(v.allocationResource)
          .setAll(v.conf)
          .setAll(extra)
          .start()) {
        out.println("scheduler nodes -> racks: " + cluster.schedulerNodeRacks());
        List<JobResult> results = JobMix.run(cluster, mix);
        for (JobResult r : results) {
          out.printf("  %-9s %s in %.1f s (%s)%n", r.name(), r.succeeded() ? "ok" : "FAILED",
              r.wallMillis() / 1000.0, r.jobId());
          if (!r.succeeded()) {
            out.println("            " + r.diagnostics());
          }
        }
        printSchedulerMetrics(out, cluster.scheduler());
        byVariant.put(v.label, results);
        out.printf("  cluster log: %s%n", cluster.workDir().resolve("hadoop.log"));
      }
      out.printf("  run took %.1f s including cluster start/stop%n",
          (System.nanoTime() - start) / 1e9);
    }

    List<String[]> rows = table(byVariant);
    out.println();
    printAligned(out, rows);
    writeCsv(Path.of("target", "rackwise-it", "compare.csv"), rows);
    return byVariant.values().stream().flatMap(List::stream).allMatch(JobResult::succeeded);
  }

  /** One row per job and scheduler, the schedulers of a job next to each other. */
  private static List<String[]> table(Map<String, List<JobResult>> byVariant) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"job", "scheduler", "ok", "wall_s", "app_s",
        "map_out_materialized_B", "reduce_shuffle_B", "xrack_shuffle_est_B",
        "maps_data_local", "maps_rack_local", "maps_off_rack", "maps", "reduces"});
    List<String> jobs = new ArrayList<>();
    byVariant.values().forEach(rs -> rs.forEach(r -> {
      if (!jobs.contains(r.name())) {
        jobs.add(r.name());
      }
    }));
    for (String job : jobs) {
      byVariant.forEach((label, results) -> results.stream()
          .filter(r -> r.name().equals(job))
          .forEach(r -> rows.add(new String[] {
              job, label, r.succeeded() ? "yes" : "NO",
              String.format(Locale.ROOT, "%.1f", r.wallMillis() / 1000.0),
              String.format(Locale.ROOT, "%.1f", r.appMillis() / 1000.0),
              Long.toString(r.counter(TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES)),
              Long.toString(r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES)),
              r.crossRackShuffleEstimate() < 0 ? "-"
                  : Long.toString(r.crossRackShuffleEstimate()),
              Long.toString(r.counter(JobCounter.DATA_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.RACK_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.OTHER_LOCAL_MAPS)),
              Long.toString(r.counter(JobCounter.TOTAL_LAUNCHED_MAPS)),
              Long.toString(r.counter(JobCounter.TOTAL_LAUNCHED_REDUCES))})));
    }
    return rows;
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
   * Prints the Rackwise counters if the scheduler has them. Reflection, because this module
   * must also run (stock only) against a plugin jar that predates the accessor, and a missing
   * accessor should not hide the timing table.
   */
  private static void printSchedulerMetrics(PrintStream out, ResourceScheduler scheduler) {
    Object metrics;
    try {
      metrics = scheduler.getClass().getMethod("getRackwiseMetrics").invoke(scheduler);
    } catch (NoSuchMethodException e) {
      return;
    } catch (ReflectiveOperationException e) {
      out.println("  rackwise metrics unavailable: " + e);
      return;
    }
    if (metrics == null) {
      out.println("  rackwise metrics: null");
      return;
    }
    Map<String, Object> values = new TreeMap<>();
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
    out.println("  rackwise metrics: " + values);
  }
}
