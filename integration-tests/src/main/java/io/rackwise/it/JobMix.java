package io.rackwise.it;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;

/**
 * The job mix shared by the integration tests and the compare runner: WordCount on generated
 * text, TeraGen, and TeraSort of TeraGen's output, one after the other or (after TeraGen)
 * WordCount and TeraSort together. Sizes stay small (tens of MB) so that two clusters' worth
 * of runs fit a 2-core machine in minutes.
 */
public final class JobMix {
  /** Queues of the allocation files in {@code allocations/}. */
  public static final String ADHOC_QUEUE = "adhoc";
  public static final String BATCH_QUEUE = "batch";

  /**
   * @param wordCountFiles        input files (one map each at the default block size)
   * @param wordCountBytesPerFile approximate size of each input file
   * @param wordCountReduces      WordCount reducers
   * @param teraRows              TeraGen rows of 100 bytes
   * @param teraGenMaps           TeraGen maps, i.e. output files and TeraSort maps
   * @param teraSortReduces       TeraSort reducers
   * @param parallel              after TeraGen, submit WordCount and TeraSort together so
   *                              they compete for the cluster, instead of one job after the
   *                              other
   * @param oneQueue              WordCount goes to the batch queue too: one user's jobs in one
   *                              leaf queue, ShuffleWatcher's setting, where the core orders
   *                              them against each other. Otherwise FairScheduler shares the
   *                              cluster between the two queues first.
   * @param teraSortStatedRatio   shuffle/input ratio TeraSort's submitter states in the
   *                              {@code rackwise.shuffle-ratio} tag, if any
   */
  public record Settings(int wordCountFiles, long wordCountBytesPerFile, int wordCountReduces,
      long teraRows, int teraGenMaps, int teraSortReduces, boolean parallel, boolean oneQueue,
      OptionalDouble teraSortStatedRatio) {

    /**
     * TeraSort (12 maps of 10 MB, 6 reduces) and WordCount (48 maps of 2 MB, 2 reduces) side
     * by side in one queue after TeraGen: ShuffleWatcher's setting, one user's shuffle-heavy
     * and shuffle-light jobs competing for the cluster. WordCount has many short maps so that
     * it still has maps waiting while TeraSort's maps run: only then is there other work for
     * the racks TeraSort does not prefer (with 24 maps WordCount had placed them all before
     * TeraSort's AM asked, and TeraSort's maps went wherever containers freed).
     *
     * <p>TeraSort's submitter states its shuffle/input ratio, 1.04: what every run of this
     * setup measured (materialized map output of 124.8 MB from 120 MB of rows), what the
     * core learns from one previous run of the job. Unstated, the ratio starts at the
     * paper's prior of 1.0, which is not above the shuffle-heavy threshold of 1.0, and the
     * MR AM asks for reduces after the first map finishes (5 % slow-start), before the
     * first measurement reaches the core: the reduces were then placed as a shuffle-light
     * job's, anywhere, and SARP's quotas never bound.
     */
    public static Settings shuffleComparison() {
      return new Settings(48, 2L << 20, 2, 1_200_000, 12, 6, true, true,
          OptionalDouble.of(1.04));
    }

    /** {@code base} overridden by system properties {@code rackwise.mix.<component>}. */
    public static Settings fromSystemProperties(Settings base) {
      return new Settings(
          Integer.getInteger("rackwise.mix.wordCountFiles", base.wordCountFiles),
          Long.getLong("rackwise.mix.wordCountBytesPerFile", base.wordCountBytesPerFile),
          Integer.getInteger("rackwise.mix.wordCountReduces", base.wordCountReduces),
          Long.getLong("rackwise.mix.teraRows", base.teraRows),
          Integer.getInteger("rackwise.mix.teraGenMaps", base.teraGenMaps),
          Integer.getInteger("rackwise.mix.teraSortReduces", base.teraSortReduces),
          Boolean.parseBoolean(System.getProperty("rackwise.mix.parallel",
              Boolean.toString(base.parallel))),
          Boolean.parseBoolean(System.getProperty("rackwise.mix.oneQueue",
              Boolean.toString(base.oneQueue))),
          statedRatio(System.getProperty("rackwise.mix.teraSortStatedRatio"),
              base.teraSortStatedRatio));
    }

    /** Absent keeps {@code base}; {@code none} states no ratio. */
    private static OptionalDouble statedRatio(String property, OptionalDouble base) {
      if (property == null) {
        return base;
      }
      return property.equals("none") ? OptionalDouble.empty()
          : OptionalDouble.of(Double.parseDouble(property));
    }
  }

  private JobMix() {
  }

  /** Generates the WordCount input; not part of any job's time. */
  public static Path prepare(MultiRackCluster cluster, Settings s) throws Exception {
    Path text = cluster.dataPath("text");
    new ExampleJobs(cluster).writeText(text, s.wordCountFiles(), s.wordCountBytesPerFile(),
        42L);
    return text;
  }

  /** Runs the mix; results in the order wordcount, teragen, terasort. */
  public static List<JobResult> run(MultiRackCluster cluster, Settings s) throws Exception {
    ExampleJobs jobs = new ExampleJobs(cluster);
    Path text = prepare(cluster, s);
    Path counts = cluster.dataPath("wordcount-out");
    Path gen = cluster.dataPath("teragen-out");
    Path sorted = cluster.dataPath("terasort-out");
    String wordCountQueue = s.oneQueue() ? BATCH_QUEUE : ADHOC_QUEUE;
    Callable<JobResult> wordCount = () ->
        jobs.wordCount("wordcount", text, counts, s.wordCountReduces(), wordCountQueue);

    List<JobResult> results = new ArrayList<>();
    if (!s.parallel()) {
      results.add(wordCount.call());
    }
    JobResult g = jobs.teraGen("teragen", s.teraRows(), s.teraGenMaps(), gen, BATCH_QUEUE);
    if (!g.succeeded()) {
      results.add(g);
      return results;
    }
    Callable<JobResult> teraSort = () ->
        jobs.teraSort("terasort", gen, sorted, s.teraSortReduces(), BATCH_QUEUE,
            s.teraSortStatedRatio());
    if (!s.parallel()) {
      results.add(g);
      results.add(teraSort.call());
      return results;
    }
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<JobResult> wc = pool.submit(wordCount);
      // TeraSort goes in once WordCount runs a task, so it arrives at an occupied cluster as a
      // job does on a busy one. Submitted earlier, whichever AM asks first finds the cluster
      // idle and takes every free container in one wave (no policy leaves a free node idle),
      // and the run measures the race between two AM start-ups instead of the scheduler. The
      // AM merely running is not enough: once, WordCount's AM asked for its maps 6 s after
      // TeraSort's, whose maps then filled both racks.
      awaitFirstTask(cluster, ExampleJobs.WORD_COUNT_JOB_NAME, wc);
      Future<JobResult> sort = pool.submit(teraSort);
      return List.of(wc.get(), g, sort.get());
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Waits until an application of that name holds a container besides its AM's (its AM has
   * asked for tasks and got one), or the job's future has finished.
   */
  private static void awaitFirstTask(MultiRackCluster cluster, String appName, Future<?> job)
      throws InterruptedException {
    ResourceManager rm = cluster.resourceManager();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (!job.isDone() && System.nanoTime() < deadline) {
      boolean runsTask = rm.getRMContext().getRMApps().values().stream()
          .filter(app -> app.getName().equals(appName)
              && app.getState() == RMAppState.RUNNING
              && app.getCurrentAppAttempt() != null)
          .map(app -> rm.getResourceScheduler()
              .getAppResourceUsageReport(app.getCurrentAppAttempt().getAppAttemptId()))
          .anyMatch(usage -> usage != null && usage.getNumUsedContainers() > 1);
      if (runsTask) {
        return;
      }
      Thread.sleep(200);
    }
  }
}
