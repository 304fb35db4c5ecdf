package io.rackwise.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.fs.Path;

/**
 * The job mix shared by the integration tests and the compare runner: WordCount on generated
 * text, then TeraGen followed by TeraSort. Sizes stay small (tens of MB) so that two clusters'
 * worth of runs fit a 2-core machine in minutes.
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
   * @param parallel              run WordCount concurrently with TeraGen+TeraSort (two
   *                              queues competing) instead of one job after the other
   */
  public record Settings(int wordCountFiles, long wordCountBytesPerFile, int wordCountReduces,
      long teraRows, int teraGenMaps, int teraSortReduces, boolean parallel) {

    /** 4 x 6 MB of text, 400k rows (40 MB) of TeraGen, 4 TeraSort reduces, sequential. */
    public static Settings defaults() {
      return new Settings(4, 6L << 20, 2, 400_000, 4, 4, false);
    }

    /** Defaults overridden by system properties {@code rackwise.mix.<component>}. */
    public static Settings fromSystemProperties() {
      Settings d = defaults();
      return new Settings(
          Integer.getInteger("rackwise.mix.wordCountFiles", d.wordCountFiles),
          Long.getLong("rackwise.mix.wordCountBytesPerFile", d.wordCountBytesPerFile),
          Integer.getInteger("rackwise.mix.wordCountReduces", d.wordCountReduces),
          Long.getLong("rackwise.mix.teraRows", d.teraRows),
          Integer.getInteger("rackwise.mix.teraGenMaps", d.teraGenMaps),
          Integer.getInteger("rackwise.mix.teraSortReduces", d.teraSortReduces),
          Boolean.parseBoolean(System.getProperty("rackwise.mix.parallel",
              Boolean.toString(d.parallel))));
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

    if (!s.parallel()) {
      List<JobResult> results = new ArrayList<>();
      results.add(jobs.wordCount("wordcount", text, counts, s.wordCountReduces(), ADHOC_QUEUE));
      results.addAll(tera(jobs, s, gen, sorted));
      return results;
    }
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<JobResult> wc = pool.submit(() ->
          jobs.wordCount("wordcount", text, counts, s.wordCountReduces(), ADHOC_QUEUE));
      Future<List<JobResult>> tera = pool.submit(() -> tera(jobs, s, gen, sorted));
      List<JobResult> results = new ArrayList<>();
      results.add(wc.get());
      results.addAll(tera.get());
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<JobResult> tera(ExampleJobs jobs, Settings s, Path gen, Path sorted)
      throws Exception {
    JobResult g = jobs.teraGen("teragen", s.teraRows(), s.teraGenMaps(), gen, BATCH_QUEUE);
    if (!g.succeeded()) {
      return List.of(g);
    }
    return List.of(g, jobs.teraSort("terasort", gen, sorted, s.teraSortReduces(), BATCH_QUEUE));
  }
}
