package io.rackwise.yarn.stats;

import java.util.Objects;

/**
 * One reading of a MapReduce job's progress and byte counters, as read from its
 * ApplicationMaster. Immutable, so the poller thread can hand it to the scheduler thread
 * without copying or locking.
 *
 * <p>This is the Java side of the core's {@code Event::JobStats}
 * ({@code native/rackwise-core/src/protocol.rs}); {@code WireCodec.jobStats} sends it.
 *
 * @param appId          the YARN application id, e.g. {@code application_1700000000000_0001}
 * @param mapsTotal      map tasks of the job ({@code mapsTotal} of the AM's job resource)
 * @param mapsCompleted  map tasks that have finished, whether they succeeded, failed or were
 *                       killed (that is how the AM counts {@code mapsCompleted})
 * @param reducesTotal   reduce tasks of the job
 * @param mapInputBytes  {@code FileInputFormatCounter.BYTES_READ}, summed over the maps that
 *                       have succeeded (running maps left out: they have read input whose
 *                       output is not materialised yet)
 * @param mapOutputBytes {@code TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES}, summed over the
 *                       same succeeded maps
 */
public record JobStats(
    String appId,
    int mapsTotal,
    int mapsCompleted,
    int reducesTotal,
    long mapInputBytes,
    long mapOutputBytes) {

  public JobStats {
    Objects.requireNonNull(appId, "appId");
    // The core's fields are unsigned. A negative value would be refused there and fail the
    // whole offer, so it is refused here, where the bad reading can simply be dropped.
    if (mapsTotal < 0 || mapsCompleted < 0 || reducesTotal < 0
        || mapInputBytes < 0 || mapOutputBytes < 0) {
      throw new IllegalArgumentException("negative figure in job stats of " + appId
          + ": maps_total=" + mapsTotal + " maps_completed=" + mapsCompleted
          + " reduces_total=" + reducesTotal + " map_input_bytes=" + mapInputBytes
          + " map_output_bytes=" + mapOutputBytes);
    }
  }
}
