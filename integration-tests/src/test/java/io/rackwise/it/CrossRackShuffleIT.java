package io.rackwise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.mapreduce.TaskCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ShuffleWatcher end to end (issue 3): stock TeraSort and a shuffle-light WordCount run side by
 * side by one user ({@link CompareRunner.Setup#shuffleComparison()}), once under RackwiseFairScheduler (native core required, queue policy
 * {@code shufflewatcher}) and once under stock FairScheduler, each on a fresh 2-rack cluster
 * with HDFS. The cross-rack shuffle of each job is read from its history (per reduce attempt:
 * shuffle bytes times the share of the job's map output on other racks, {@code
 * ExampleJobs#crossRackShuffle}); every job's figure and the ratio go to the test output, and
 * Rackwise must move at most half of FairScheduler's bytes across racks.
 */
class CrossRackShuffleIT {
  /** Rackwise must move at most this share of stock FairScheduler's cross-rack shuffle. */
  private static final double MAX_RATIO_TO_STOCK = 0.5;

  @Test
  // Two clusters, three jobs each, on a 2-core machine: 9-11 min in all at load average
  // 20-30, 14.3 min at 35 (a fresh-clone CI run beside two simulator runs).
  @Timeout(value = 25, unit = TimeUnit.MINUTES)
  void rackwiseMovesLessShuffleAcrossRacksThanFairScheduler() throws Exception {
    CompareRunner.Setup setup = CompareRunner.Setup.shuffleComparison();
    List<CompareRunner.Run> runs =
        CompareRunner.compare(setup, List.of("rackwise", "stock"), System.out);
    CompareRunner.Run rackwise = runs.get(0);
    CompareRunner.Run stock = runs.get(1);

    for (CompareRunner.Run run : runs) {
      for (JobResult r : run.results()) {
        assertTrue(r.succeeded(), run.label() + ": " + r);
      }
    }
    // The comparison is about the native path: a run that fell back to FairScheduler for
    // any offer would be comparing FairScheduler with itself.
    Map<String, Object> m = rackwise.rackwiseMetrics();
    assertEquals(true, m.get("NativeActive"), "native core not active: " + m);
    assertEquals(0L, m.get("NativeFailures"), m.toString());
    assertEquals(0L, m.get("FallbackOffers"), m.toString());
    assertTrue((Long) m.get("SteeredContainers") > 0, "no container followed the plan: " + m);

    long rackwiseBytes = crossRackShuffle(rackwise);
    long stockBytes = crossRackShuffle(stock);
    long shuffled = totalShuffle(stock);
    assertEquals(shuffled, totalShuffle(rackwise), "both runs must shuffle the same data");
    for (CompareRunner.Run run : runs) {
      for (JobResult r : shuffling(run)) {
        long jobShuffle = r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES);
        System.out.printf("CrossRackShuffleIT: %s %s: cross-rack %d B of %d B shuffled "
                + "(%.1f %%)%n", run.label(), r.name(), r.crossRackShuffleBytes(), jobShuffle,
            jobShuffle == 0 ? 0.0 : 100.0 * r.crossRackShuffleBytes() / jobShuffle);
      }
    }
    double ratio = stockBytes == 0 ? Double.NaN : (double) rackwiseBytes / stockBytes;
    System.out.printf("CrossRackShuffleIT: cross-rack shuffle of terasort + wordcount: "
            + "Rackwise %d B (%.1f %%), FairScheduler %d B (%.1f %%) of %d B shuffled; "
            + "Rackwise / FairScheduler = %.3f (required <= %.1f)%n",
        rackwiseBytes, 100.0 * rackwiseBytes / shuffled, stockBytes,
        100.0 * stockBytes / shuffled, shuffled, ratio, MAX_RATIO_TO_STOCK);
    // Half of stock's is a margin no run that merely happened to place a few reduces well can
    // meet by chance; the README lists the recorded ratios (about 0.02, and one run at 0.519).
    assertTrue(rackwiseBytes <= MAX_RATIO_TO_STOCK * stockBytes, "Rackwise moved "
        + rackwiseBytes + " B of shuffle across racks, stock FairScheduler " + stockBytes
        + " B: more than " + MAX_RATIO_TO_STOCK + " of stock's");
  }

  /** The jobs that shuffle (TeraGen has no reduces). */
  private static List<JobResult> shuffling(CompareRunner.Run run) {
    return run.results().stream().filter(r -> !r.name().equals("teragen")).toList();
  }

  private static long crossRackShuffle(CompareRunner.Run run) {
    long total = 0;
    for (JobResult r : shuffling(run)) {
      assertTrue(r.crossRackShuffleBytes() >= 0, "cross-rack shuffle unknown: " + r);
      total += r.crossRackShuffleBytes();
    }
    return total;
  }

  private static long totalShuffle(CompareRunner.Run run) {
    return shuffling(run).stream()
        .mapToLong(r -> r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES)).sum();
  }
}
