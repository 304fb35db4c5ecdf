package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.TASK_MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.util.Records;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Inputs a ResourceManager really produces, which must never break the native path: a
 * NODE_UPDATE for a node removed while the event waited, an app without a name, type or tags,
 * asks without a priority or at an empty resource name, and the table of hostile inputs (empty
 * names, huge tag lists, undeclared queues, unknown priorities, an app removed twice, a node
 * removed with containers on it). The native core is required here, so a failure would be thrown rather than fall back.
 */
class RmInputsTest {
  private static final Map<String, List<String>> TWO_RACKS = new LinkedHashMap<>();

  static {
    TWO_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    TWO_RACKS.put("/r2", Arrays.asList("h3", "h4"));
  }

  @TempDir
  Path workDir;

  private MockRackCluster start(Class<?> scheduler, String queuesXml) throws Exception {
    return new MockRackCluster(scheduler, MockRackCluster.allocationFile(queuesXml),
        Map.of("yarn.scheduler.rackwise.native.required", "true"), TWO_RACKS, workDir);
  }

  /** Our scheduler with one ShuffleWatcher queue, {@code root.sw}. */
  private MockRackCluster startSteered() throws Exception {
    return start(RackwiseFairScheduler.class,
        "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy></rackwise></queue>");
  }

  /** A MapReduce job of alice's in {@code root.sw}, its split on h1. */
  private static MockRackCluster.Job submitSteeredJob(MockRackCluster cluster) throws Exception {
    return cluster.submit("job", "sw", "alice", RackwiseFairSchedulerTest.ratio(3), "h1");
  }

  /**
   * Hadoop's own {@code TestFairScheduler#testRemovedNodeDecomissioningNode}: the node leaves
   * the scheduler's node tracker (decommissioned meanwhile) while its NODE_UPDATE waits; the
   * update then finds no scheduler node. FairScheduler skips the offer; so must we, without an
   * exception (the scheduler dispatcher of Hadoop 3.4 exits the RM on one) and without asking
   * the core. No {@code <rackwise>} element anywhere: this concerns every installation.
   */
  @ParameterizedTest
  @ValueSource(classes = {FairScheduler.class, RackwiseFairScheduler.class})
  void aNodeUpdateForARemovedNodeIsSkippedWithoutAnOffer(Class<?> schedulerClass)
      throws Exception {
    try (MockRackCluster cluster = start(schedulerClass, "<queue name=\"plain\"/>")) {
      MockRackCluster.Job job = cluster.submit("job", "plain", "alice", Set.of(), "h1");
      cluster.ask(job, 2, List.of("h2"), 0);
      FairScheduler scheduler = (FairScheduler) cluster.rm.getResourceScheduler();
      NodeId h2 = cluster.nodes.get("h2").getNodeId();
      RMNode node = cluster.rm.getRMContext().getRMNodes().get(h2);
      long offersBefore = offers(scheduler);

      scheduler.getNodeTracker().removeNode(h2);
      scheduler.handle(new NodeUpdateSchedulerEvent(node));

      assertNull(scheduler.getSchedulerNode(h2));
      cluster.collect(job);
      assertEquals(List.of(), job.priorities(), "nothing placed on the removed node");
      assertEquals(offersBefore, offers(scheduler), "the core was not asked");
      // The other nodes are still scheduled.
      cluster.heartbeat("h1", job);
      assertEquals(List.of(MAP), job.priorities());
    }
  }

  private static long offers(FairScheduler scheduler) {
    return scheduler instanceof RackwiseFairScheduler
        ? ((RackwiseFairScheduler) scheduler).getRackwiseMetrics().getOffers() : 0;
  }

  /**
   * An app whose RMApp has no name, type or tags, built the way Hadoop's own FairScheduler
   * tests build theirs (a real RMAppImpl given nulls): the core receives "" and no tags, and
   * the offers after it are still decided natively, steering a MapReduce job beside it.
   */
  @Test
  void anAppWithoutNameTypeOrTagsDoesNotBreakTheNativePath() throws Exception {
    try (MockRackCluster cluster = startSteered()) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      MockRackCluster.Job job = submitSteeredJob(cluster);
      cluster.ask(job, 2, List.of("h2"), 0);

      ApplicationId bare = ApplicationId.newInstance(cluster.rm.getRMContext().getEpoch() + 7,
          1);
      ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(bare, 1);
      ApplicationSubmissionContext context = ApplicationSubmissionContext.newInstance(bare, null,
          "root.sw", null, Records.newRecord(ContainerLaunchContext.class), false, false, 0,
          Resources.createResource(TASK_MB), null);
      RMApp rmApp = new RMAppImpl(bare, cluster.rm.getRMContext(), cluster.rm.getConfig(), null,
          "bob", null, context, scheduler, null, 0, null, null, null,
          new ApplicationPlacementContext("root.sw"), -1);
      assertNull(rmApp.getName());
      assertNull(rmApp.getApplicationTags());
      cluster.rm.getRMContext().getRMApps().put(bare, rmApp);
      scheduler.handle(new AppAddedSchedulerEvent(bare, "root.sw", "bob",
          new ApplicationPlacementContext("root.sw")));
      scheduler.handle(new AppAttemptAddedSchedulerEvent(attempt, false));

      twoOffersStayNative(cluster, scheduler, job, "an app without a name, type or tags");
      assertEquals(List.of(MAP, MAP), job.priorities());
      assertTrue(scheduler.getRackwiseMetrics().getSteeredContainers() > 0,
          "the MapReduce job beside it is still steered");
      assertTrue(scheduler.getSchedulerApp(attempt) instanceof RackwiseAppAttempt,
          "the bare app is the scheduler's");
    }
  }
  /**
   * The RM keeps whatever resource name an AM asks at, also an empty one (it only checks ANY's
   * label expression): such a row reaches the core without that location, and the offers stay
   * native, still placing the job's maps on the hosts its splits name.
   */
  @Test
  void anAskAtAnEmptyResourceNameDoesNotBreakTheNativePath() throws Exception {
    try (MockRackCluster cluster = startSteered()) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      MockRackCluster.Job job = submitSteeredJob(cluster);
      job.am.allocate(List.of(job.am.createResourceReq("", TASK_MB, MAP, 2),
          job.am.createResourceReq("h2", TASK_MB, MAP, 2),
          job.am.createResourceReq("/r1", TASK_MB, MAP, 2),
          job.am.createResourceReq(ResourceRequest.ANY, TASK_MB, MAP, 2)), List.of());
      cluster.rm.drainEvents();
      FSAppAttempt attempt =
          scheduler.getSchedulerApp(job.app.getCurrentAppAttempt().getAppAttemptId());
      assertTrue(attempt.getAppPlacementAllocator(attempt.getSchedulerKeys().iterator().next())
          .getResourceRequests().containsKey(""), "the RM holds the empty resource name");

      twoOffersStayNative(cluster, scheduler, job, "an ask at an empty resource name");
      assertEquals(List.of(MAP, MAP), job.priorities());
    }
  }
  /**
   * An AM may send a request without a priority, and the RM keeps it as a scheduler key whose
   * priority is null: the core is not told of that ask (it steers no such priority), and the
   * offers after it are still decided natively.
   */
  @Test
  void anAskWithoutAPriorityDoesNotBreakTheNativePath() throws Exception {
    try (MockRackCluster cluster = startSteered()) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      MockRackCluster.Job job = submitSteeredJob(cluster);
      cluster.ask(job, 2, List.of("h2"), 0);
      job.am.allocate(List.of(ResourceRequest.newInstance(null, ResourceRequest.ANY,
          Resources.createResource(TASK_MB), 1)), List.of());
      cluster.rm.drainEvents();
      FSAppAttempt attempt =
          scheduler.getSchedulerApp(job.app.getCurrentAppAttempt().getAppAttemptId());
      assertTrue(attempt.getSchedulerKeys().stream().anyMatch(key -> key.getPriority() == null),
          "the RM holds the ask without a priority");

      twoOffersStayNative(cluster, scheduler, job, "an ask without a priority");
      assertEquals(List.of(MAP, MAP), job.priorities());
    }
  }

  /** One input the RM can produce, done to a running cluster beside a steered job. */
  interface HostileInput {
    void apply(MockRackCluster cluster, RackwiseFairScheduler scheduler) throws Exception;
  }

  static Stream<Arguments> hostileInputs() {
    // The largest tag list the RM lets through: 10 tags (yarn.resourcemanager.application.
    // max-tags) of 100 characters each (the longest it accepts).
    Set<String> manyTags = new HashSet<>();
    for (int i = 0; i < 10; i++) {
      manyTags.add(String.valueOf(i).repeat(100));
    }
    return Stream.of(
        Arguments.of("an empty app name and no tags", (HostileInput) (cluster, scheduler) ->
            cluster.submit("", "sw", "bob", Set.of(), "h3")),
        Arguments.of("the longest tag list the RM accepts", (HostileInput) (cluster, scheduler) ->
            cluster.submit("tagged", "sw", "bob", manyTags, "h3")),
        Arguments.of("an app in an undeclared queue", (HostileInput) (cluster, scheduler) ->
            cluster.submit("elsewhere", "adhoc", "bob", Set.of(), "h3")),
        Arguments.of("asks at a priority MapReduce does not use",
            (HostileInput) (cluster, scheduler) -> {
              MockRackCluster.Job odd = cluster.submit("odd", "sw", "bob", Set.of(), "h3");
              odd.am.allocate(List.of(odd.am.createResourceReq(ResourceRequest.ANY, TASK_MB, 7,
                  2)), List.of());
              cluster.rm.drainEvents();
            }),
        Arguments.of("an app removed twice", (HostileInput) (cluster, scheduler) -> {
          MockRackCluster.Job gone = cluster.submit("gone", "sw", "bob", Set.of(), "h3");
          ApplicationId appId = gone.app.getApplicationId();
          cluster.rm.killApp(appId);
          cluster.rm.waitForState(appId, RMAppState.KILLED);
          cluster.rm.drainEvents();
          scheduler.handle(new AppRemovedSchedulerEvent(appId, RMAppState.KILLED));
        }),
        Arguments.of("a node removed with containers on it",
            (HostileInput) (cluster, scheduler) -> {
              MockRackCluster.Job victim = cluster.submit("victim", "sw", "bob", Set.of(), "h4");
              cluster.ask(victim, 2, List.of("h4"), 0);
              cluster.heartbeat("h4", victim);
              assertTrue(victim.containers.size() > 0, "a map runs on h4 besides the AM");
              scheduler.handle(new NodeRemovedSchedulerEvent(
                  cluster.rm.getRMContext().getRMNodes().get(cluster.nodes.get("h4")
                      .getNodeId())));
            }));
  }

  /**
   * The list of hostile inputs, each done beside a steered MapReduce job with the
   * native core required: the offers after it are decided natively, none fails, and the job
   * still gets its maps where its splits are.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileInputs")
  void aHostileInputDoesNotBreakTheNativePath(String what, HostileInput input) throws Exception {
    try (MockRackCluster cluster = startSteered()) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      MockRackCluster.Job job = submitSteeredJob(cluster);
      cluster.ask(job, 2, List.of("h2"), 0);

      input.apply(cluster, scheduler);
      twoOffersStayNative(cluster, scheduler, job, what);
      assertEquals(List.of(), cluster.dispatcherFailures, what);
      // FairScheduler may give one of the two containers to the other app (fair share); the
      // steered job still gets maps, at its split's node.
      assertTrue(job.count(MAP) >= 1, what + ": " + job.priorities());
      assertEquals(job.priorities().size(), job.count(MAP), what + ": " + job.priorities());
    }
  }

  /**
   * Two heartbeats of h2, where {@code job}'s split is: no native failure, the core still active,
   * and both offers decided by it. (Not the dispatcher's failures: an ask without a priority can
   * make Hadoop's own LocalityAppPlacementAllocator throw, timing-dependent, stock or not.)
   */
  private static void twoOffersStayNative(MockRackCluster cluster,
      RackwiseFairScheduler scheduler, MockRackCluster.Job job, String what) throws Exception {
    long offersBefore = scheduler.getRackwiseMetrics().getOffers();
    cluster.heartbeat("h2", job);
    cluster.heartbeat("h2", job);

    assertEquals(0, scheduler.getRackwiseMetrics().getNativeFailures(), what);
    assertTrue(scheduler.isNativeActive(), what);
    assertEquals(offersBefore + 2, scheduler.getRackwiseMetrics().getOffers(),
        what + ": both offers decided natively");
  }
}
