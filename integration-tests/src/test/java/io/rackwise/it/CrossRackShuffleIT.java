package io.rackwise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.mapreduce.TaskCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ShuffleWatcher end to end (issue 3): stock TeraSort and a shuffle-light WordCount run side by
 * side by one user ({@link CompareRunner.Setup#shuffleComparison()}), once under
 * RackwiseFairScheduler (native core required, queue policy {@code shufflewatcher}) and once
 * under each stock setting a user could pick instead ({@link CompareRunner#STOCK_SCHEDULERS}:
 * FairScheduler as installed, with delay scheduling, with FIFO leaf queues, with speculative
 * attempts), each on a fresh 2-rack cluster with HDFS. The cross-rack shuffle of each job is
 * read from its history (per reduce attempt: shuffle bytes times the share of the job's map
 * output on other racks, {@code ExampleJobs#crossRackShuffle}); every job's figure and the
 * ratios go to the test output, and Rackwise must move at most half of the bytes the best stock
 * setting moved across racks.
 */
class CrossRackShuffleIT {
  /** Rackwise must move at most this share of the best stock setting's cross-rack shuffle. */
  private static final double MAX_RATIO_TO_STOCK = 0.5;

  @Test
  // Five clusters, three jobs each, on a 2-core machine: about 2.7 min per cluster on an idle
  // box (four took 651 s in CI), up to 7 at load average 35 (two clusters took 14.3 min beside
  // two simulator runs).
  @Timeout(value = 35, unit = TimeUnit.MINUTES)
  void rackwiseMovesLessShuffleAcrossRacksThanEveryStockSetting() throws Exception {
    CompareRunner.Setup setup = CompareRunner.Setup.shuffleComparison();
    List<String> schedulers = new ArrayList<>();
    schedulers.add("rackwise");
    schedulers.addAll(CompareRunner.STOCK_SCHEDULERS);
    List<CompareRunner.Run> runs = CompareRunner.compare(setup, schedulers, System.out);
    CompareRunner.Run rackwise = runs.get(0);
    List<CompareRunner.Run> stock = runs.subList(1, runs.size());

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

    long shuffled = totalShuffle(rackwise);
    for (CompareRunner.Run run : runs) {
      assertEquals(shuffled, totalShuffle(run),
          run.label() + " must shuffle the same data as every other run");
      for (JobResult r : shuffling(run)) {
        long jobShuffle = r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES);
        System.out.printf("CrossRackShuffleIT: %s %s: cross-rack %d B of %d B shuffled "
                + "(%.1f %%)%n", run.label(), r.name(), r.crossRackShuffleBytes(), jobShuffle,
            jobShuffle == 0 ? 0.0 : 100.0 * r.crossRackShuffleBytes() / jobShuffle);
      }
    }
    long rackwiseBytes = crossRackShuffle(rackwise);
    for (CompareRunner.Run run : stock) {
      long bytes = crossRackShuffle(run);
      System.out.printf("CrossRackShuffleIT: cross-rack shuffle of terasort + wordcount: "
              + "Rackwise %d B (%.1f %%), %s %d B (%.1f %%) of %d B shuffled; ratio %.3f%n",
          rackwiseBytes, 100.0 * rackwiseBytes / shuffled, run.label(), bytes,
          100.0 * bytes / shuffled, shuffled, bytes == 0 ? Double.NaN
              : (double) rackwiseBytes / bytes);
    }
    CompareRunner.Run best = stock.stream()
        .min(Comparator.comparingLong(CrossRackShuffleIT::crossRackShuffle)).orElseThrow();
    long bestBytes = crossRackShuffle(best);
    System.out.printf("CrossRackShuffleIT: Rackwise / best stock (%s) = %.3f (required <= "
            + "%.1f)%n", best.label(),
        bestBytes == 0 ? Double.NaN : (double) rackwiseBytes / bestBytes, MAX_RATIO_TO_STOCK);
    // Half of the best stock setting's is a margin no run that merely happened to place a few
    // reduces well can meet by chance; the README lists the recorded ratios.
    assertTrue(rackwiseBytes <= MAX_RATIO_TO_STOCK * bestBytes, "Rackwise moved "
        + rackwiseBytes + " B of shuffle across racks, " + best.label() + " " + bestBytes
        + " B: more than " + MAX_RATIO_TO_STOCK + " of the best stock setting's");
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
