package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.TASK_MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.testing.CapturedLog;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.log4j.Level;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Storage without locality ({@code file:///}, object stores): a job's splits name
 * {@code localhost} on {@code /default-rack}, where no node is. Neither ShuffleWatcher's
 * locality wait nor NAS's data-local wait applies to such a job: nodes take its maps at once,
 * on an RM clock that never moves, and the RM log says why once per job. ShuffleWatcher still
 * concentrates the maps on the racks SAMP chose (racks with nodes: here {@code /r1}, able to
 * hold all six), which is SAMP's rack preference, not a wait for locality: those racks' nodes
 * take them at once.
 */
class StorageWithoutLocalityTest {
  @TempDir
  java.nio.file.Path workDir;

  @ParameterizedTest
  @CsvSource({"shufflewatcher, h1 h2", "nas, h1 h2 h3"})
  void mapsAreNotHeldForLocalityAndTheLogSaysSoOnce(String policy, String offeredHosts)
      throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    try (CapturedLog nativeLog = CapturedLog.of("io.rackwise.yarn.native");
        MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
            MockRackCluster.allocationFile("<queue name=\"steered\"><rackwise><policy>" + policy
                + "</policy></rackwise></queue>"),
            Map.of("yarn.scheduler.rackwise.native.required", "true"), racks, workDir)) {
      // Frozen: no wait of either policy (2 s, 5 s) can end during the test.
      long frozen = System.currentTimeMillis() + 86_400_000L;
      cluster.rackwise().setClock(() -> frozen);
      MockRackCluster.Job job = cluster.submit("localfs", "steered", "alice",
          Collections.singleton("rackwise.shuffle-ratio=2"), "h4");
      askMapsOnLocalhost(cluster, job, 6);
      askMapsOnLocalhost(cluster, job, 6);

      for (String host : offeredHosts.split(" ")) {
        long before = job.count(MAP);
        cluster.heartbeat(host, job);
        assertEquals(before + 1, job.count(MAP), host + " took no map of a job without locality");
      }

      List<String> said = new ArrayList<>();
      for (String message : nativeLog.messages(Level.INFO)) {
        if (message.contains("job 'localfs'") && message.contains("no split names a node")) {
          said.add(message);
        }
      }
      assertEquals(1, said.size(), "once per job: " + said);
      assertTrue(said.get(0).contains(policy), said.get(0));
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getFallbackOffers());
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
      assertTrue(cluster.dispatcherFailures.isEmpty(), cluster.dispatcherFailures.toString());
    }
  }

  /** Map asks as MapReduce makes them for splits read through {@code file:///}. */
  private static void askMapsOnLocalhost(MockRackCluster cluster, MockRackCluster.Job job,
      int maps) throws Exception {
    List<ResourceRequest> asks = new ArrayList<>();
    for (String resource : List.of("localhost", "/default-rack", ResourceRequest.ANY)) {
      asks.add(job.am.createResourceReq(resource, TASK_MB, MAP, maps));
    }
    job.am.allocate(asks, new ArrayList<ContainerId>());
    cluster.rm.drainEvents();
  }
}
