package io.rackwise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.metrics.RackwiseMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The job mix under RackwiseFairScheduler with the native core required: the jobs must
 * succeed exactly as under stock FairScheduler, on the same two racks, and the counters must
 * show the core decided the offers rather than the shim falling back to FairScheduler.
 */
class RackwiseJobsIT extends AbstractJobsIT {
  @Override
  MultiRackCluster.Builder configure(MultiRackCluster.Builder builder) {
    return builder
        .schedulerClass(MultiRackCluster.RACKWISE_SCHEDULER)
        .allocationResource("allocations/rackwise-fair-scheduler.xml")
        // A load failure must stop the RM instead of quietly scheduling as FairScheduler.
        .set(MultiRackCluster.RACKWISE_NATIVE_REQUIRED, "true");
  }

  /** ShuffleWatcher may keep a job's tasks on one rack to save cross-rack shuffle. */
  @Override
  boolean expectTasksOnEveryRack() {
    return false;
  }

  @Test
  @Order(0)
  void resourceManagerRunsRackwise() {
    RackwiseFairScheduler scheduler =
        assertInstanceOf(RackwiseFairScheduler.class, cluster.scheduler());
    assertTrue(scheduler.isNativeActive(), "native core not active");
  }

  @Test
  @Order(10)
  void nativeCoreDecidedTheOffersWithoutFallingBack() {
    RackwiseFairScheduler scheduler = (RackwiseFairScheduler) cluster.scheduler();
    RackwiseMetrics m = scheduler.getRackwiseMetrics();
    String seen = String.format("offers=%d steeredOffers=%d steeredContainers=%d vetoes=%d "
            + "nativeFailures=%d fallbackOffers=%d", m.getOffers(), m.getSteeredOffers(),
        m.getSteeredContainers(), m.getVetoes(), m.getNativeFailures(), m.getFallbackOffers());
    System.out.println("RackwiseJobsIT metrics: " + seen);
    assertTrue(scheduler.isNativeActive(), "fell back during the run: " + seen);
    assertEquals(0, m.getNativeFailures(), seen);
    assertEquals(0, m.getFallbackOffers(), seen);
    assertTrue(m.getOffers() > 0, "no offer reached the core: " + seen);
    // Both queues the jobs ran in carry <policy>shufflewatcher</policy>, so their containers
    // were placed on the core's plan, not by FairScheduler's own walk.
    assertTrue(m.getSteeredOffers() > 0, "no offer was steered: " + seen);
    assertTrue(m.getSteeredContainers() > 0, "no container followed the plan: " + seen);
  }
}
