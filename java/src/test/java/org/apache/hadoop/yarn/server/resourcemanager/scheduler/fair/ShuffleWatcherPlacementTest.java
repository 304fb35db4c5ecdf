package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShuffleWatcher's placements in a real ResourceManager on three racks: SARP's reduce quotas
 * follow the map output per rack, and no node is left idle while the user has runnable work.
 */
class ShuffleWatcherPlacementTest {
  @TempDir
  java.nio.file.Path workDir;

  @Test
  void heavyReducesFollowMapOutputPerRackAndNoNodeIsLeftIdle() throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    racks.put("/r3", List.of("h5", "h6"));
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(
            "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy>"
          // Not about the locality wait (its own tests are in the core): no wait on the
          // real clock between this test's heartbeats.
          + "<localityWaitMs>0</localityWaitMs><rackWaitMs>0</rackWaitMs></rackwise></queue>"),
        Map.of("yarn.scheduler.rackwise.native.required", "true"), racks, workDir)) {
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice",
          Collections.singleton("rackwise.shuffle-ratio=3"), "h6");
      cluster.ask(heavy, 12, List.of("h1", "h3", "h5"), 0);
      // Run the 12 maps 6 / 4 / 2 over the racks, then let them finish there.
      for (String host : List.of("h1", "h2", "h1", "h2", "h1", "h2", "h3", "h4", "h3", "h4",
          "h5", "h5")) {
        cluster.heartbeat(host, heavy);
      }
      assertEquals(12, heavy.count(MAP));
      for (Container map : heavy.containers) {
        cluster.nodes.get(map.getNodeId().getHost()).nodeHeartbeat(
            heavy.am.getApplicationAttemptId(), map.getId().getContainerId(),
            ContainerState.COMPLETE);
      }
      cluster.rm.drainEvents();
      heavy.containers.clear();

      // A second job of the same user keeps runnable maps around the whole time.
      MockRackCluster.Job light = cluster.submit("light", "sw", "alice",
          Collections.singleton("rackwise.shuffle-ratio=0.1"), "h6");
      cluster.ask(light, 30, List.of("h2", "h4", "h6"), 0);
      cluster.ask(heavy, 0, List.of(), 6);

      List<String> round = List.of("h1", "h2", "h3", "h4", "h5", "h6");
      int offers = 0;
      for (int pass = 0; pass < 3; pass++) {
        for (String host : round) {
          int before = heavy.containers.size() + light.containers.size();
          cluster.heartbeat(host, heavy, light);
          offers++;
          assertEquals(before + 1, heavy.containers.size() + light.containers.size(),
              "offer " + offers + " on " + host + " placed nothing while alice had work");
        }
      }
      Map<String, Integer> reducesPerRack = new TreeMap<>();
      for (Container reduce : heavy.containers) {
        assertEquals(REDUCE, reduce.getPriority().getPriority());
        reducesPerRack.merge(cluster.rackOf.get(reduce.getNodeId().getHost()), 1, Integer::sum);
      }
      // Map output sits 6/12, 4/12, 2/12 on the racks: 6 reduces split 3 / 2 / 1.
      assertEquals(Map.of("/r1", 3, "/r2", 2, "/r3", 1), reducesPerRack);
      assertTrue(light.count(MAP) > 0, "the other job filled nodes whose rack quota was used");
    }
  }
}
