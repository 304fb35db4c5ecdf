package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShuffleWatcher's map locality wait runs on the ResourceManager's clock, the one
 * FairScheduler's own time-based decisions use: a job relaxes from node-local to its SAMP
 * rack after {@code localityWaitMs}, then to any rack after {@code rackWaitMs}. The clock is the
 * scheduler's, stepped by the test, so no wall-clock time passes and the steps are exact.
 */
class LocalityWaitOnRmClockTest {
  private static final long WAIT_MS = 2_000;
  private static final long RACK_WAIT_MS = 5_000;

  @TempDir
  java.nio.file.Path workDir;

  @Test
  void mapsRelaxFromNodeToRackToAnyOneWaitAtATime() throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile("<queue name=\"sw\"><rackwise>"
            + "<policy>shufflewatcher</policy><localityWaitMs>" + WAIT_MS
            + "</localityWaitMs><rackWaitMs>" + RACK_WAIT_MS + "</rackWaitMs></rackwise></queue>"),
        Map.of("yarn.scheduler.rackwise.native.required", "true"), racks, workDir)) {
      // A day past the real clock: any wait measured in wall-clock time would never end here.
      AtomicLong now = new AtomicLong(System.currentTimeMillis() + 86_400_000L);
      cluster.rackwise().setClock(now::get);
      MockRackCluster.Job job = cluster.submit("job", "sw", "alice",
          Collections.emptySet(), "h4");
      // Every split on h1: SAMP prefers /r1.
      cluster.ask(job, 6, List.of("h1"), 0);

      // Level 0: only node-local maps. The offer starts the job's wait.
      assertPlaces(cluster, job, "h2", 0, "a rack-local node before any wait");
      assertPlaces(cluster, job, "h1", 1, "the split's own node at once");
      now.addAndGet(WAIT_MS - 1);
      assertPlaces(cluster, job, "h2", 0, "a rack-local node 1 ms before the wait ends");

      // Level 1: rack-local on the preferred rack, not yet another rack.
      now.addAndGet(1);
      assertPlaces(cluster, job, "h2", 1, "a rack-local node once the wait ends");
      // The placement set the level it needed (1) from now: another rack waits the rack wait.
      now.addAndGet(RACK_WAIT_MS - 1);
      assertPlaces(cluster, job, "h3", 0, "another rack within the rack wait");
      now.addAndGet(1);
      assertPlaces(cluster, job, "h3", 1, "another rack once the rack wait ends");
      assertEquals(3, job.count(MAP));
      assertTrue(cluster.dispatcherFailures.isEmpty(), cluster.dispatcherFailures.toString());
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getFallbackOffers(),
          "decided natively, not by a fallback");
    }
  }

  private static void assertPlaces(MockRackCluster cluster, MockRackCluster.Job job,
      String host, int maps, String why) throws Exception {
    long before = job.count(MAP);
    cluster.heartbeat(host, job);
    assertEquals(before + maps, job.count(MAP), host + ": " + why);
  }
}
