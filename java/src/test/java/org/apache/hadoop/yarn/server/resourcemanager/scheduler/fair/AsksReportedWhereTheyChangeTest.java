package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.TASK_MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.AskRow;
import io.rackwise.wire.v1.AsksChanged;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Asks reach the core from the points where they change (the AM's allocate call, an allocation,
 * a container recovered to asks), only for MapReduce apps, and an offer with nothing changed
 * carries no asks. Read from the requests the real library received under MockRM.
 */
class AsksReportedWhereTheyChangeTest {
  private static final Map<String, List<String>> TWO_RACKS = new LinkedHashMap<>();

  static {
    TWO_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    TWO_RACKS.put("/r2", Arrays.asList("h3", "h4"));
  }

  /**
   * {@code capped} holds the AM and one task: the rest of a job's asks stay outstanding and
   * unchanged, so offers after that have nothing new to carry.
   */
  private static final String QUEUES = MockRackCluster.allocationFile(
      "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy></rackwise></queue>\n"
      + "<queue name=\"capped\"><maxResources>2048 mb, 8 vcores</maxResources>"
      + "<rackwise><policy>shufflewatcher</policy></rackwise></queue>");

  @TempDir
  Path workDir;

  private MockRackCluster start() throws Exception {
    return new MockRackCluster(AskRecordingScheduler.class, QUEUES,
        Map.of("hadoop.tmp.dir", workDir.resolve("tmp").toString()), TWO_RACKS, workDir);
  }

  private static AskRecordingScheduler scheduler(MockRackCluster cluster) {
    return (AskRecordingScheduler) cluster.rm.getResourceScheduler();
  }

  /** The ask changes for {@code app} that offers made after {@code fromOffer} carried. */
  private static List<AsksChanged> sentFor(AskRecordingScheduler scheduler, String app,
      int fromOffer) {
    List<AsksChanged> found = new ArrayList<>();
    List<List<AsksChanged>> sent = scheduler.sent;
    for (List<AsksChanged> offer : sent.subList(fromOffer, sent.size())) {
      offer.stream().filter(change -> change.getApp().equals(app)).forEach(found::add);
    }
    return found;
  }

  private static AskRow row(List<AsksChanged> changes, int priority) {
    AskRow last = null;
    for (AsksChanged change : changes) {
      for (AskRow row : change.getRowsList()) {
        if (row.getPriority() == priority) {
          last = row;
        }
      }
    }
    return last;
  }

  @Test
  void anAllocateCallsAsksReachTheCoreAndAnOfferWithoutChangesCarriesNone() throws Exception {
    try (MockRackCluster cluster = start()) {
      AskRecordingScheduler scheduler = scheduler(cluster);
      MockRackCluster.Job job =
          cluster.submit("wordcount", "capped", "alice", Set.of(), "h4");
      String app = job.app.getApplicationId().toString();
      int before = scheduler.sent.size();
      cluster.ask(job, 3, List.of("h1", "h3"), 2);
      cluster.heartbeat("h2");

      List<AsksChanged> changes = sentFor(scheduler, app, before);
      AskRow maps = row(changes, MAP);
      assertNotNull(maps, changes.toString());
      assertEquals(3, maps.getAny());
      assertEquals(List.of("h1", "h3"), maps.getHostsList().stream().sorted().toList());
      assertEquals(TASK_MB, maps.getResources().getMemoryMb());
      AskRow reduces = row(changes, REDUCE);
      assertNotNull(reduces, changes.toString());
      assertEquals(2, reduces.getAny());
      assertTrue(scheduler.isNativeActive());

      // The queue's one task placed and collected, then one more offer that reports that
      // change: from then on the job's asks stay as they are, and offers carry none and build
      // none, also after the AM's allocate call repeats an ask unchanged.
      String[] hosts = {"h1", "h2", "h3", "h4"};
      for (int round = 0; round < 20 && job.containers.isEmpty(); round++) {
        cluster.heartbeat(hosts[round % hosts.length], job);
      }
      assertEquals(1, job.containers.size(), "the capped queue's one task placed");
      cluster.heartbeat("h2", job);
      int quiet = scheduler.sent.size();
      int builtBefore = scheduler.builtFor.size();
      FSAppAttempt attempt = scheduler.getSchedulerApp(job.am.getApplicationAttemptId());
      SchedulerRequestKey reduceKey = attempt.getSchedulerKeys().stream()
          .filter(key -> key.getPriority().getPriority() == REDUCE).findFirst()
          .orElseThrow(() -> new AssertionError("no reduce key"));
      int reducesPending = attempt.getPendingAsk(reduceKey, ResourceRequest.ANY).getCount();
      assertTrue(reducesPending > 0, "reduces still asked");
      job.am.allocate(List.of(job.am.createResourceReq(ResourceRequest.ANY, TASK_MB, REDUCE,
          reducesPending)), new ArrayList<ContainerId>());
      cluster.rm.drainEvents();
      cluster.heartbeat("h1", job);
      cluster.heartbeat("h3", job);
      assertTrue(scheduler.sent.size() >= quiet + 2, "two more native offers");
      assertEquals(1, job.containers.size(), "nothing more placed while quiet");
      assertEquals(List.of(), sentFor(scheduler, app, quiet), "no change, no asks");
      assertEquals(builtBefore, scheduler.builtFor.size(), "no ask rows built either");
    }
  }

  @Test
  void aContainerRecoveredToAsksIsReportedAgain() throws Exception {
    try (MockRackCluster cluster = start()) {
      AskRecordingScheduler scheduler = scheduler(cluster);
      MockRackCluster.Job job = cluster.submit("wordcount", "sw", "alice", Set.of(), "h4");
      String app = job.app.getApplicationId().toString();
      cluster.ask(job, 1, List.of("h1"), 0);
      // The map is allocated on h1, and its AM has not pulled it yet.
      cluster.heartbeat("h1");
      FSAppAttempt attempt = scheduler.getSchedulerApp(job.am.getApplicationAttemptId());
      RMContainer map = attempt.getLiveContainers().stream()
          .filter(c -> c.getAllocatedSchedulerKey().getPriority().getPriority() == MAP)
          .findFirst().orElseThrow(() -> new AssertionError("no map allocated on h1"));
      int afterAllocation = scheduler.sent.size();
      cluster.heartbeat("h2");
      AskRow drained = row(sentFor(scheduler, app, afterAllocation), MAP);
      assertNotNull(drained, "the allocation emptied the map row");
      assertEquals(0, drained.getAny());

      int beforeKill = scheduler.sent.size();
      scheduler.killContainer(map);
      cluster.rm.drainEvents();
      cluster.heartbeat("h2");
      AskRow recovered = row(sentFor(scheduler, app, beforeKill), MAP);
      assertNotNull(recovered, "the recovered ask reached the core");
      assertEquals(1, recovered.getAny());
      assertEquals(List.of("h1"), recovered.getHostsList());
    }
  }

  @Test
  void aNonMapReduceAppsAsksAreNeverEncoded() throws Exception {
    try (MockRackCluster cluster = start()) {
      AskRecordingScheduler scheduler = scheduler(cluster);
      RMApp app = MockRMAppSubmitter.submit(cluster.rm, MockRMAppSubmissionData.Builder
          .createWithMemory(TASK_MB, cluster.rm).withAppName("spark").withQueue("sw")
          .withUser("bob").withAppType("SPARK").build());
      MockAM am = MockRM.launchAndRegisterAM(app, cluster.rm, cluster.nodes.get("h4"));
      List<ResourceRequest> asks = new ArrayList<>();
      asks.add(am.createResourceReq("h1", TASK_MB, 1, 3));
      asks.add(am.createResourceReq("/r1", TASK_MB, 1, 3));
      asks.add(am.createResourceReq(ResourceRequest.ANY, TASK_MB, 1, 3));
      am.allocate(asks, new ArrayList<ContainerId>());
      cluster.rm.drainEvents();
      int before = scheduler.offers.get();
      cluster.heartbeat("h1");
      cluster.heartbeat("h2");
      assertTrue(scheduler.offers.get() >= before + 2, "native offers were made");
      String id = app.getApplicationId().toString();
      assertEquals(List.of(), sentFor(scheduler, id, 0));
      assertFalse(scheduler.builtFor.contains(id), "no ask rows built for " + id);
      assertTrue(scheduler.isNativeActive());
    }
  }
}
