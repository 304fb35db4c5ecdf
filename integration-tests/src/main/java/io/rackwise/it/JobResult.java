package io.rackwise.it;

import java.util.List;
import java.util.Map;

/**
 * What one finished MapReduce job looked like.
 *
 * @param name        label given by the caller (e.g. "terasort")
 * @param jobId       MapReduce job id, {@code null} if the job never reached YARN
 * @param succeeded   the job's final status was SUCCEEDED
 * @param wallMillis  client stopwatch around submission and completion (TeraSort's client-side
 *                    partition sampling included)
 * @param appMillis   ResourceManager start-to-finish time of the application
 * @param counters    selected job counters by enum constant name (see {@link ExampleJobs#COUNTERS})
 * @param mapHosts    host of every successful map attempt
 * @param reduceHosts host of every successful reduce attempt
 * @param crossRackShuffleBytes shuffle bytes that crossed racks: per reduce attempt, its
 *                    shuffle bytes times the share of the job's map output on other racks
 *                    (see {@code ExampleJobs#crossRackShuffle}); -1 when unknown
 * @param diagnostics why the job failed (job failure info and YARN diagnostics), empty on
 *                    success
 */
public record JobResult(String name, String jobId, boolean succeeded, long wallMillis,
    long appMillis, Map<String, Long> counters, List<String> mapHosts, List<String> reduceHosts,
    long crossRackShuffleBytes, String diagnostics) {

  /** A counter value, 0 if the job did not report it. */
  public long counter(Enum<?> key) {
    return counters.getOrDefault(key.name(), 0L);
  }
}
