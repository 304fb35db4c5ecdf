package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.TASK_MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.AskRow;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.yarn.bridge.OfferPlan;
import io.rackwise.yarn.bridge.WireCodec;
import io.rackwise.yarn.bridge.WireResponse;
import io.rackwise.yarn.config.AllocationFileExtensions;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeLibraryLoader;
import io.rackwise.yarn.nativecore.NativeProtocolException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The typed wire end to end: ask rows read from a real FairScheduler attempt (MockRM), sent with
 * the rest of an offer through the real library ({@code create}/{@code offer}), and the
 * answer read back into an {@link OfferPlan}.
 */
class WireThroughTheCoreTest {
  private static final Map<String, List<String>> TWO_RACKS = new LinkedHashMap<>();

  static {
    TWO_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    TWO_RACKS.put("/r2", Arrays.asList("h3", "h4"));
  }

  private static final String STEERED = MockRackCluster.allocationFile(
      "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy></rackwise></queue>");

  @TempDir
  Path workDir;

  @Test
  void askRowsOfARealAttemptSteerItsMapsThroughTheLibrary() throws Exception {
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    assertTrue(load.loaded(), load.message());
    // The RM's scratch files in this test's own directory, not the shared /tmp/hadoop-<user>.
    Map<String, String> extra = Map.of("hadoop.tmp.dir", workDir.resolve("tmp").toString());
    try (MockRackCluster cluster = new MockRackCluster(FairScheduler.class, STEERED, extra,
        TWO_RACKS, workDir)) {
      MockRackCluster.Job job = cluster.submit("wordcount", "sw", "alice", Set.of(), "h4");
      cluster.ask(job, 3, List.of("h1", "h3"), 2);
      FairScheduler scheduler = (FairScheduler) cluster.rm.getResourceScheduler();
      FSAppAttempt attempt = scheduler.getSchedulerApp(job.am.getApplicationAttemptId());
      String app = attempt.getApplicationId().toString();

      Event changed = WireCodec.asksChanged(attempt, attempt.getSchedulerKeys());
      Map<Integer, AskRow> rows = new HashMap<>();
      changed.getAsksChanged().getRowsList().forEach(row -> rows.put(row.getPriority(), row));
      AskRow maps = rows.get(MAP);
      assertEquals(3, maps.getAny());
      assertEquals(Map.of("h1", 3, "h3", 3),
          located(maps.getHostsList(), maps.getHostCountsList()));
      assertEquals(Map.of("/r1", 3, "/r2", 3),
          located(maps.getRacksList(), maps.getRackCountsList()));
      assertEquals(TASK_MB, maps.getResources().getMemoryMb());
      assertEquals(1, maps.getResources().getVcores());
      AskRow reduces = rows.get(REDUCE);
      assertEquals(2, reduces.getAny());
      assertEquals(0, reduces.getHostsCount() + reduces.getRacksCount());
      // The AM's own key remains with nothing outstanding: sent as a removal.
      rows.remove(MAP);
      rows.remove(REDUCE);
      rows.values().forEach(row -> assertEquals(0, row.getAny(), row.toString()));

      // Everything else of the first offer from the RM's own objects too.
      List<Event> setup = new ArrayList<>();
      for (MockNM nm : cluster.nodes.values()) {
        setup.add(WireCodec.nodeAdded(scheduler.getSchedulerNode(nm.getNodeId())));
      }
      Event added = WireCodec.appAdded(attempt.getApplicationId(), job.app, attempt.getUser(),
          attempt.getQueue().getName(), 0);
      assertEquals("root.sw", added.getAppAdded().getQueue());
      assertEquals("MAPREDUCE", added.getAppAdded().getAppType());
      assertEquals(job.app.getSubmitTime(), added.getAppAdded().getSubmitMs());
      setup.add(added);
      RMContainer am = attempt.getLiveContainers().iterator().next();
      Event amAllocated = WireCodec.containerAllocated(am, NodeType.OFF_SWITCH);
      assertEquals(0, amAllocated.getContainerAllocated().getPriority());
      assertEquals("h4:1234", amAllocated.getContainerAllocated().getNode());
      setup.add(amAllocated);
      assertEquals(am.getContainerId().toString(),
          WireCodec.containerFinished(am, 0, 5).getContainerFinished().getContainer());
      setup.add(changed);
      byte[] config = WireCodec.engineConfig(Map.of(), AllocationFileExtensions.parse(
          new ByteArrayInputStream(STEERED.getBytes(StandardCharsets.UTF_8)), "test"),
          List.of(), 0, "test", null).toByteArray();
      long handle = NativeCore.create(config);
      try {
        FSSchedulerNode h1 = scheduler.getSchedulerNode(cluster.nodes.get("h1").getNodeId());
        OfferPlan first = WireCodec.decodeResponse(NativeCore.offer(handle,
            WireCodec.offerRequest(10_000, setup, h1).toByteArray())).plan();
        assertTrue(first.steers(app), "the core steers the MapReduce app of root.sw");
        assertTrue(entries(first, app).contains(MAP + "/" + NodeType.NODE_LOCAL),
            "h1 holds a split: a node-local map is allowed: " + entries(first, app));

        // Only what changed: the maps are gone (placed elsewhere); the reduce row is not named
        // and must stay as the first offer sent it.
        Event mapsDone = Event.newBuilder().setAsksChanged(changed.getAsksChanged().toBuilder()
            .clearRows().addRows(WireCodec.askRow(MAP, 0, null, Map.of(), Map.of()))).build();
        List<String> second = entries(offer(handle, 10_001, List.of(mapsDone), "h1:1234").plan(),
            app);
        assertTrue(second.stream().noneMatch(entry -> entry.startsWith(MAP + "/")),
            "no map is left to place: " + second);
        assertTrue(second.stream().anyMatch(entry -> entry.startsWith(REDUCE + "/")),
            "the reduces are still asked for: " + second);

        // A request the Rust side must refuse: a required number missing.
        byte[] noClock = WireCodec.offerRequest(1, List.of(), "h1:1234",
            Resource.newInstance(1, 1), null).toBuilder().clearNowMs().build().toByteArray();
        NativeProtocolException refused = assertThrows(NativeProtocolException.class,
            () -> NativeCore.offer(handle, noClock));
        assertTrue(refused.getMessage().contains("rackwise.wire.v1.OfferRequest.now_ms is missing"),
            refused.getMessage());
      } finally {
        NativeCore.destroy(handle);
      }
    }
  }

  private static Map<String, Integer> located(List<String> names, List<Integer> counts) {
    assertEquals(names.size(), counts.size(), "one count per name");
    Map<String, Integer> located = new HashMap<>();
    for (int i = 0; i < names.size(); i++) {
      located.put(names.get(i), counts.get(i));
    }
    return located;
  }

  /** The plan's entries for the queue of {@code app}, in order, as "priority/locality". */
  private static List<String> entries(OfferPlan plan, String app) {
    List<String> entries = new ArrayList<>();
    for (OfferPlan.Entry entry = plan.head(app, e -> true); entry != null;
        entry = plan.head(app, e -> true)) {
      entries.add(entry.priority() + "/" + entry.locality());
      plan.markFailed(entry);
    }
    return entries;
  }

  private static WireResponse offer(long handle, long nowMs, List<Event> events, String node) {
    OfferRequest request = WireCodec.offerRequest(nowMs, events, node,
        Resource.newInstance(MockRackCluster.NODE_MB, 8), null);
    return WireCodec.decodeResponse(NativeCore.offer(handle, request.toByteArray()));
  }
}
