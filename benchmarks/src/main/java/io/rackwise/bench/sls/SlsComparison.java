package io.rackwise.bench.sls;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairSchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator;
import org.apache.hadoop.yarn.sls.conf.SLSConfiguration;
import org.apache.hadoop.yarn.sls.scheduler.NodeUpdateTimes;
import org.apache.hadoop.yarn.sls.scheduler.RackwiseSlsScheduler;
import org.apache.hadoop.yarn.sls.scheduler.StockSlsScheduler;

/**
 * One run of Hadoop's Scheduler Load Simulator (hadoop-sls) in this JVM, with stock FairScheduler
 * or Rackwise inside the same SLS wrapper code, then the cost of every NODE_UPDATE the scheduler
 * handled: mean, p50, p99 and updates per second, over the first 120 s and over the whole run.
 *
 * <p>Usage: {@code SlsComparison <nodes> <stock|rackwise> <output dir> [policy] [jobs]} (run it
 * through {@code benchmarks/sls/run.sh}). The inputs are generated into the output directory:
 * a topology of racks of 20 nodes (SLS node file) and a Rumen trace of {@code jobs}
 * MapReduce jobs (default 300) submitted over the first 60 s, 10 to 100 maps each with one
 * input location (traces carry one host per task), a tenth as many reduces, maps of 10-30 s
 * and reduces of 10-20 s, in 10 queues of one user each; a fixed seed makes every run's inputs
 * the same. Every queue's {@code <rackwise>} element names {@code policy} (default
 * shufflewatcher); stock FairScheduler ignores the element.
 */
public final class SlsComparison {
  private static final int NODES_PER_RACK = 20;
  private static final int QUEUES = 10;
  private static final long SUBMIT_WINDOW_MS = 60_000;
  private static final long FIRST_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(120);
  private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(90);
  private static final long RUN_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(30);

  private SlsComparison() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      throw new IllegalArgumentException("usage: SlsComparison <nodes> <stock|rackwise> "
          + "<output dir> [policy] [jobs]; got " + args.length + " arguments");
    }
    int nodes = Integer.parseInt(args[0]);
    String scheduler = args[1];
    Path out = Paths.get(args[2]).toAbsolutePath();
    String policy = args.length > 3 ? args[3] : "shufflewatcher";
    int jobs = args.length > 4 ? Integer.parseInt(args[4]) : 300;
    Class<?> schedulerClass;
    if (scheduler.equals("stock")) {
      schedulerClass = StockSlsScheduler.class;
    } else if (scheduler.equals("rackwise")) {
      schedulerClass = RackwiseSlsScheduler.class;
    } else {
      throw new IllegalArgumentException("scheduler " + scheduler
          + ": expected stock or rackwise");
    }
    if (nodes < NODES_PER_RACK || nodes % NODES_PER_RACK != 0) {
      throw new IllegalArgumentException("nodes " + nodes + ": expected a multiple of "
          + NODES_PER_RACK + " (racks of " + NODES_PER_RACK + ")");
    }
    Files.createDirectories(out);
    Path nodeFile = out.resolve("nodes.json");
    Path trace = out.resolve("trace-rumen.json");
    Path allocation = out.resolve("fair-scheduler.xml");
    writeNodes(nodeFile, nodes);
    writeTrace(trace, nodes, jobs);
    writeAllocation(allocation, policy);

    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, allocation.toString());
    conf.setInt(SLSConfiguration.NM_HEARTBEAT_INTERVAL_MS, 1000);
    conf.setInt(SLSConfiguration.AM_HEARTBEAT_INTERVAL_MS, 1000);
    // SLS's own metrics (a web UI and CSV files) cost both schedulers time; the wrapper times
    // NODE_UPDATE itself.
    conf.setBoolean(SLSConfiguration.METRICS_SWITCH, false);
    conf.setInt(SLSConfiguration.RUNNER_POOL_SIZE, 50);
    // SLS's defaults file (sls-runner.xml) is not in its jar: name the simulated AM of the
    // trace's (Rumen's) job type.
    conf.set(SLSConfiguration.AM_TYPE_PREFIX + "mapreduce", MRAMSimulator.class.getName());
    // Simulated AMs have no web proxy to poll.
    conf.setBoolean("yarn.scheduler.rackwise.stats.enabled", false);
    // The RM's servers on free ports: other RMs may run on this machine.
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS,
        YarnConfiguration.RM_SCHEDULER_ADDRESS, YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
        YarnConfiguration.RM_ADMIN_ADDRESS, YarnConfiguration.RM_WEBAPP_ADDRESS}) {
      conf.set(key, "localhost:0");
    }

    // Container tokens name their NodeManager by host name: the simulated hosts have no
    // address to name them by.
    SecurityUtil.setTokenServiceUseIp(false);
    // SLS writes its rack table there, and does not create it.
    Path slsOutput = Files.createDirectories(out.resolve("sls"));
    SLSRunner runner = new SLSRunner(conf);
    runner.setSimulationParams(SLSRunner.TraceType.RUMEN, new String[] {trace.toString()},
        nodeFile.toString(), slsOutput.toString(), Collections.emptySet(), false);
    long started = System.nanoTime();
    runner.start();
    // Jobs are counted as the scheduler sees their apps leave: SLS 3.4.3's own count of
    // remaining apps stays at the job count. A job SLS loses (its AM container reported lost)
    // never finishes, so the run ends when every job is done, or when jobs have finished and
    // no other did for STALL_NANOS.
    NodeUpdateTimes times = NodeUpdateTimes.RECORDED;
    int finished = 0;
    long lastFinished = System.nanoTime();
    while (finished < jobs && (finished == 0 || System.nanoTime() - lastFinished < STALL_NANOS)
        && System.nanoTime() - started < RUN_LIMIT_NANOS) {
      TimeUnit.SECONDS.sleep(1);
      int now = times.appsRemoved();
      if (now != finished) {
        finished = now;
        lastFinished = System.nanoTime();
      }
    }
    int unfinished = jobs - finished;
    double elapsedSeconds = (lastFinished - started) / 1e9;

    System.out.printf(Locale.ROOT,
        "%nSLS %d nodes, %d jobs, scheduler %s%s: %s, the last %.0f s after SLS started%n",
        nodes, jobs, scheduler, scheduler.equals("rackwise") ? " (" + policy + ")" : "",
        unfinished == 0 ? "all jobs done" : unfinished + " jobs unfinished (none finished in the "
            + "last 90 s)", elapsedSeconds);
    System.out.println("| window | NODE_UPDATEs | s | updates/s | mean us | p50 us | p99 us |");
    System.out.println("|---|---|---|---|---|---|---|");
    print("first 120 s", times.window(FIRST_WINDOW_NANOS, lastFinished));
    print("whole run (to the last job done)", times.window(Long.MAX_VALUE, lastFinished));
    if (times.scheduler() instanceof RackwiseFairScheduler) {
      // Proof that the native path steered, not the fallback.
      RackwiseFairScheduler rackwise = (RackwiseFairScheduler) times.scheduler();
      RackwiseMetrics metrics = rackwise.getRackwiseMetrics();
      System.out.printf(Locale.ROOT, "rackwise: native active %s, offers %d, steered offers %d, "
          + "vetoes %d, steered containers %d, fallback offers %d, native failures %d%n",
          rackwise.isNativeActive(), metrics.getOffers(), metrics.getSteeredOffers(),
          metrics.getVetoes(), metrics.getSteeredContainers(), metrics.getFallbackOffers(),
          metrics.getNativeFailures());
    }
    System.out.flush();
    // SLS's runner threads and the RM do not all stop on request; the figures are out.
    System.exit(0);
  }

  private static void print(String name, NodeUpdateTimes.Window window) {
    System.out.printf(Locale.ROOT, "| %s | %d | %.1f | %.0f | %.0f | %.0f | %.0f |%n", name,
        window.updates(), window.seconds(), window.perSecond(), window.meanMicros(),
        window.percentileMicros(0.50), window.percentileMicros(0.99));
  }

  private static String host(int index) {
    return "r" + (index / NODES_PER_RACK) + "n" + (index % NODES_PER_RACK);
  }

  private static String rack(int index) {
    return "rack" + (index / NODES_PER_RACK);
  }

  private static void writeNodes(Path file, int nodes) throws IOException {
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int first = 0; first < nodes; first += NODES_PER_RACK) {
        out.write("{\"rack\": \"" + rack(first) + "\", \"nodes\": [");
        for (int i = first; i < first + NODES_PER_RACK; i++) {
          out.write((i == first ? "" : ", ") + "{\"node\": \"" + host(i) + "\"}");
        }
        out.write("]}\n");
      }
    }
  }

  /**
   * A Rumen trace (the job-history format SLS reads as {@code RUMEN}). SLS 3.4.3 cannot read its
   * own SLS JSON format: it parses each job as a map of strings, and a job's task list is an
   * array. Rumen carries one attempt per task; its host is the map's input location, and SLS
   * asks for every task at its host, its rack and anywhere, reduces included (a real MapReduce
   * AM asks for reduces anywhere).
   */
  private static void writeTrace(Path file, int nodes, int jobs) throws IOException {
    Random random = new Random(2026);
    long base = 1_700_000_000_000L;
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int job = 0; job < jobs; job++) {
        long submit = base + (long) (random.nextDouble() * SUBMIT_WINDOW_MS);
        int maps = 10 + random.nextInt(91);
        int reduces = Math.max(1, maps / 10);
        StringBuilder mapTasks = new StringBuilder();
        long mapsEnd = submit;
        for (int m = 0; m < maps; m++) {
          long duration = 10_000 + random.nextInt(20_001);
          mapsEnd = Math.max(mapsEnd, submit + duration);
          appendTask(mapTasks, random.nextInt(nodes), submit, submit + duration);
        }
        StringBuilder reduceTasks = new StringBuilder();
        long end = mapsEnd;
        for (int r = 0; r < reduces; r++) {
          long duration = 10_000 + random.nextInt(10_001);
          end = Math.max(end, mapsEnd + duration);
          appendTask(reduceTasks, random.nextInt(nodes), mapsEnd, mapsEnd + duration);
        }
        int queue = job % QUEUES;
        out.write(String.format(Locale.ROOT, "{\"jobID\": \"job_%d_%04d\", \"user\": \"user%d\", "
            + "\"queue\": \"q%d\", \"submitTime\": %d, \"finishTime\": %d,%n"
            + "\"mapTasks\": [%s],%n\"reduceTasks\": [%s]}%n", base, job, queue, queue, submit,
            end, mapTasks, reduceTasks));
      }
    }
  }

  private static void appendTask(StringBuilder tasks, int node, long start, long finish) {
    tasks.append(tasks.length() == 0 ? "" : ",\n").append(String.format(Locale.ROOT,
        "{\"attempts\": [{\"hostName\": \"/%s/%s\", \"startTime\": %d, \"finishTime\": %d}]}",
        rack(node), host(node), start, finish));
  }

  private static void writeAllocation(Path file, String policy) throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<allocations>\n");
    for (int q = 0; q < QUEUES; q++) {
      xml.append("  <queue name=\"q").append(q).append("\"><rackwise><policy>").append(policy)
          .append("</policy></rackwise></queue>\n");
    }
    Files.write(file, xml.append("</allocations>\n").toString().getBytes(StandardCharsets.UTF_8));
  }
}
