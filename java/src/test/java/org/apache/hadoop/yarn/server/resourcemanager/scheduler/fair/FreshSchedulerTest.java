package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FRESH inside a real ResourceManager (MockRM), native core required: a map-heavy and a
 * reduce-heavy job in one {@code fresh} queue with one job per phase (k = 1). Johnson's order
 * admits the reduce-heavy job first; it runs its maps while its reduces, asked with them as at
 * MapReduce's slow-start, stay pending, and the map-heavy job places nothing until the first
 * leaves its map phase. Then each phase has its job, and every task of both jobs runs. And a
 * job not admitted does not get its ApplicationMaster's container while the admitted job has
 * maps pending; it gets it once the admitted job has none left to place.
 */
class FreshSchedulerTest {
  private static final List<String> HOSTS = List.of("h1", "h2", "h3");

  @TempDir
  Path workDir;

  @Test
  void withOneJobPerPhaseTheSecondJobWaitsAndReducesWaitForTheirJobsMaps() throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    String allocation = MockRackCluster.allocationFile(
        "<queue name=\"fresh\"><rackwise><policy>fresh</policy>"
            + "<jobsPerPhase>1</jobsPerPhase>"
            // The global guard would lift FRESH's holds after 30 s of wall clock on a slow
            // build machine; the queue's own hour, as docs/fresh.md advises for fresh queues,
            // keeps this test about FRESH alone.
            + "<starvationGuardMs>3600000</starvationGuardMs></rackwise></queue>");
    Map<String, String> settings = Map.of("yarn.scheduler.rackwise.native.required", "true");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class, allocation,
        settings, racks, workDir)) {
      MockRackCluster.Job mapHeavy =
          cluster.submit("map-heavy", "fresh", "alice", Set.of(), "h4");
      MockRackCluster.Job reduceHeavy =
          cluster.submit("reduce-heavy", "fresh", "alice", Set.of(), "h4");
      // At the default profile (30 s maps, 60 s reduces) map-heavy has 120 s of map and 120 s
      // of reduce work, reduce-heavy 60 s and 240 s: Johnson's rule takes reduce-heavy first
      // (both have map work no larger than reduce work; the smaller map work goes first).
      cluster.ask(mapHeavy, 4, List.of("h1", "h3"), 2);
      cluster.ask(reduceHeavy, 2, List.of("h1", "h3"), 4);
      for (int round = 0; round < 2; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, mapHeavy, reduceHeavy);
        }
      }
      assertEquals(List.of(MAP, MAP), reduceHeavy.priorities(),
          "the admitted job runs its maps; its reduces wait for them");
      assertEquals(List.of(), mapHeavy.priorities(), "the second job waits for admission");

      complete(cluster, reduceHeavy, MAP, mapHeavy);
      for (int round = 0; round < 4 && !(mapHeavy.count(MAP) == 4
          && reduceHeavy.count(REDUCE) == 4); round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, mapHeavy, reduceHeavy);
        }
      }
      assertEquals(4, mapHeavy.count(MAP), "map-heavy admitted to the map phase");
      assertEquals(4, reduceHeavy.count(REDUCE), "reduce-heavy admitted to the reduce phase");
      assertEquals(0, mapHeavy.count(REDUCE), "map-heavy holds its reduces while it maps");

      // Reduce-heavy leaves R, map-heavy leaves M: its reduces run.
      complete(cluster, reduceHeavy, REDUCE, mapHeavy);
      complete(cluster, mapHeavy, MAP, reduceHeavy);
      for (int round = 0; round < 4 && mapHeavy.count(REDUCE) < 2; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, mapHeavy, reduceHeavy);
        }
      }
      assertEquals(2, mapHeavy.count(REDUCE), "every task of both jobs ran");
      assertEquals(List.of(), cluster.dispatcherFailures);
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  @Test
  void theApplicationMasterOfAJobNotAdmittedWaitsWhileTheAdmittedJobHasMapsPending()
      throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    String allocation = MockRackCluster.allocationFile(
        "<queue name=\"fresh\"><rackwise><policy>fresh</policy>"
            + "<jobsPerPhase>1</jobsPerPhase><startsAhead>0</startsAhead>"
            // The queue's own hour: a slow build machine must not lift the hold (see above).
            + "<starvationGuardMs>3600000</starvationGuardMs></rackwise></queue>");
    Map<String, String> settings = Map.of("yarn.scheduler.rackwise.native.required", "true");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class, allocation,
        settings, racks, workDir)) {
      MockRackCluster.Job admitted = cluster.submit("admitted", "fresh", "alice", Set.of(), "h4");
      cluster.ask(admitted, 8, List.of("h1", "h3"), 1);
      RMApp late = cluster.submitWithoutAM("late", "fresh", "alice", Set.of());
      // Six heartbeats, one container each: the admitted job's maps, never late's AM.
      for (int round = 0; round < 2; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, admitted);
        }
      }
      assertEquals(6, admitted.count(MAP), "the admitted job maps");
      assertNull(late.getCurrentAppAttempt().getMasterContainer(),
          "the AM of a job not admitted waits while the admitted job has maps pending");
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());

      // Two more place the admitted job's last maps; its reduce waits for them, so nothing of
      // the queue's plan can use the next container: late's AM gets it, and runs.
      for (int beat = 0; beat < 6
          && late.getCurrentAppAttempt().getMasterContainer() == null; beat++) {
        cluster.heartbeat(HOSTS.get(beat % HOSTS.size()), admitted);
      }
      assertEquals(8, admitted.count(MAP), "every map of the admitted job placed first");
      assertNotNull(late.getCurrentAppAttempt().getMasterContainer(), "late's AM placed");
      assertEquals(RMAppState.RUNNING, cluster.launch(late).app.getState(), "late's AM runs");
      assertEquals(List.of(), cluster.dispatcherFailures);
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  /**
   * Completes {@code job}'s containers of {@code priority} on their nodes, and collects what
   * those heartbeats gave either job.
   */
  private static void complete(MockRackCluster cluster, MockRackCluster.Job job, int priority,
      MockRackCluster.Job other) throws Exception {
    List<Container> done = new ArrayList<>();
    for (Container c : job.containers) {
      if (c.getPriority().getPriority() == priority) {
        done.add(c);
      }
    }
    for (Container c : done) {
      cluster.nodes.get(c.getNodeId().getHost()).nodeHeartbeat(job.am.getApplicationAttemptId(),
          c.getId().getContainerId(), ContainerState.COMPLETE);
      cluster.rm.drainEvents();
      cluster.collect(job, other);
    }
  }
}
