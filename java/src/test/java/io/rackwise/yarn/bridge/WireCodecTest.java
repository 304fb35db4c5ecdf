package io.rackwise.yarn.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.Diagnostics;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.LearnedRatio;
import io.rackwise.wire.v1.Locality;
import io.rackwise.wire.v1.LogLevel;
import io.rackwise.wire.v1.LogRecord;
import io.rackwise.wire.v1.MarketInterval;
import io.rackwise.wire.v1.NodeScore;
import io.rackwise.wire.v1.PerformanceClass;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.Plan;
import io.rackwise.wire.v1.PlanEntry;
import io.rackwise.wire.v1.QueueAccount;
import io.rackwise.wire.v1.QueuePlan;
import io.rackwise.wire.v1.QueueWeight;
import io.rackwise.yarn.nativecore.NativeProtocolException;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.UnaryOperator;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

class WireCodecTest {
  private static final Resource TASK = Resource.newInstance(1024, 1);

  /** A response with every field set, as the core sends it. */
  private static OfferResponse.Builder fullResponse() {
    return OfferResponse.newBuilder()
        .setPlan(Plan.newBuilder().addQueues(QueuePlan.newBuilder().setQueue("root.sw")
            .addSteered("app_1").addSteered("app_2").addSteered("app_4")
            .addEntries(PlanEntry.newBuilder().setApp("app_1").setPriority(20)
                .setLocality(Locality.LOCALITY_NODE_LOCAL).setReason("nass:node-local-map"))
            .addEntries(PlanEntry.newBuilder().setApp("app_2").setPriority(10)
                .setLocality(Locality.LOCALITY_OFF_SWITCH).setReason("sarp:reduce"))))
        .addLearned(LearnedRatio.newBuilder().setJobName("etl").setRatio(0.5).setRuns(3))
        .addLearned(LearnedRatio.newBuilder().setJobName("grep").setRatio(0).setRuns(0)
            .setMapMs(20_000).setReduceMs(60_000).setProfileRuns(2))
        .setDiagnostics(Diagnostics.newBuilder().setRack("/r1").setRackUtilization(0.25)
            .setRackSaturated(false).addStarved("app_3"))
        .addLogs(LogRecord.newBuilder().setLevel(LogLevel.LOG_LEVEL_WARN)
            .setTarget("rackwise_core::state").setMessage("feed figure ignored"))
        .addQueueWeights(QueueWeight.newBuilder().setQueue("root.sw").setWeight(2.5))
        .addIntervals(MarketInterval.newBuilder().setMarket("root.users").setSequence(4)
            .setEndMs(80_000).setPrice(3)
            .addQueues(QueueAccount.newBuilder().setQueue("root.users.bob").setBudget(94)
                .setSpending(2).setUsed(4).setChargedUnits(3).setCharge(6).setShare(0.5)))
        .addNodeScores(NodeScore.newBuilder().setQueue("root.dr").setNode("h4:8041")
            .setCpuSpeed(0.5).setCpuFree(0.25).setDisk(0.2).setDiskFromFeed(false).setNet(0.9)
            .setNetFromFeed(true).setMapInfluence(0.2).setReduceInfluence(1).setMapScore(0.3)
            .setMapClass(PerformanceClass.PERFORMANCE_CLASS_LOW).setReduceScore(0.8)
            .setReduceClass(PerformanceClass.PERFORMANCE_CLASS_MEDIUM));
  }

  @Test
  void aFullResponseIsReadIntoThePlanAndTheRest() {
    WireResponse response = WireCodec.decodeResponse(fullResponse().build().toByteArray());

    OfferPlan plan = response.plan();
    assertTrue(plan.steers("app_1") && plan.steers("app_2"));
    assertFalse(plan.steers("app_3"));
    assertFalse(plan.holdsStart("app_1") || plan.holdsStart("app_3"),
        "an app with an entry, or not steered, is not held");
    assertTrue(plan.holdsStart("app_4"), "a steered app without an entry is held");
    OfferPlan.Entry head = plan.head("app_2", entry -> true);
    assertEquals("app_1", head.app());
    assertEquals(20, head.priority());
    assertEquals(NodeType.NODE_LOCAL, head.locality());
    plan.markFailed(head);
    OfferPlan.Entry next = plan.head("app_2", entry -> true);
    assertEquals("app_2", next.app());
    assertEquals(NodeType.OFF_SWITCH, next.locality());
    assertEquals("sarp:reduce", next.reason());

    assertEquals(List.of(new io.rackwise.yarn.state.LearnedRatio("etl", 0.5, 3),
        new io.rackwise.yarn.state.LearnedRatio("grep", 0, 0, OptionalDouble.of(20_000),
            OptionalDouble.of(60_000), 2)), response.learned());
    assertEquals(new WireResponse.Diagnostics("/r1", OptionalDouble.of(0.25), false,
        List.of("app_3")),
        response.diagnostics());
    assertEquals(List.of(new WireResponse.LogLine(Level.WARN, "rackwise_core::state",
        "feed figure ignored")), response.logs());
    assertEquals(List.of(new WireResponse.QueueWeight("root.sw", 2.5)), response.queueWeights());
    assertEquals(List.of(new WireResponse.MarketInterval("root.users", 4, 80_000, 3,
        List.of(new WireResponse.QueueAccount("root.users.bob", 94, 2, 4, 3, 6, 0.5)))),
        response.intervals());
    assertEquals(List.of(new WireResponse.NodeScore("root.dr", "h4:8041", 0.5, 0.25, 0.2,
        false, 0.9, true, 0.2, 1, 0.3, "Low", 0.8, "Medium")), response.nodeScores());
  }

  @Test
  void aResponseForAnUnknownNodeHasNoRackAndAnEmptyPlan() {
    OfferResponse unknownNode = OfferResponse.newBuilder().setPlan(Plan.getDefaultInstance())
        .setDiagnostics(Diagnostics.newBuilder().setRackUtilization(0).setRackSaturated(false))
        .build();
    WireResponse response = WireCodec.decodeResponse(unknownNode.toByteArray());
    assertTrue(response.plan().isEmpty());
    assertNull(response.diagnostics().rack());
  }

  /** With no queue under a policy that reads NetSat the core sends no rack utilization. */
  @Test
  void aResponseWithoutARackUtilizationIsRead() {
    OfferResponse unread = fullResponse()
        .setDiagnostics(fullResponse().getDiagnostics().toBuilder().clearRackUtilization())
        .build();
    WireResponse.Diagnostics diagnostics =
        WireCodec.decodeResponse(unread.toByteArray()).diagnostics();
    assertEquals(OptionalDouble.empty(), diagnostics.rackUtilization());
    assertFalse(diagnostics.rackSaturated());
  }

  private static void refused(String field, String reason,
      UnaryOperator<OfferResponse.Builder> breakIt) {
    byte[] bytes = breakIt.apply(fullResponse()).build().toByteArray();
    NativeProtocolException e = assertThrows(NativeProtocolException.class,
        () -> WireCodec.decodeResponse(bytes), field);
    assertTrue(e.getMessage().startsWith("rackwise.wire.v1." + field + " "), e.getMessage());
    assertTrue(e.getMessage().contains(reason), e.getMessage());
  }

  private static final String MISSING = "is missing (required)";
  private static final String EMPTY = "is empty (required";

  @Test
  void everyRequiredFieldOfTheResponseIsChecked() {
    refused("OfferResponse.plan", MISSING, r -> r.clearPlan());
    refused("OfferResponse.diagnostics", MISSING, r -> r.clearDiagnostics());
    refused("OfferResponse.plan.queues[0].queue", EMPTY,
        r -> r.setPlan(r.getPlan().toBuilder().setQueues(0,
            r.getPlan().getQueues(0).toBuilder().clearQueue())));
    refused("OfferResponse.plan.queues[0].steered[1]", EMPTY,
        r -> r.setPlan(r.getPlan().toBuilder().setQueues(0,
            r.getPlan().getQueues(0).toBuilder().setSteered(1, ""))));
    refused("OfferResponse.plan.queues[0].entries[1].app", EMPTY,
        r -> withEntry(r, 1, e -> e.clearApp()));
    refused("OfferResponse.plan.queues[0].entries[1].priority", MISSING,
        r -> withEntry(r, 1, e -> e.clearPriority()));
    refused("OfferResponse.plan.queues[0].entries[0].locality", "LOCALITY_UNSPECIFIED",
        r -> withEntry(r, 0, e -> e.setLocality(Locality.LOCALITY_UNSPECIFIED)));
    refused("OfferResponse.plan.queues[0].entries[0].locality", "unknown value",
        r -> withEntry(r, 0, e -> e.setLocalityValue(9)));
    refused("OfferResponse.learned[0].job_name", EMPTY,
        r -> r.setLearned(0, r.getLearned(0).toBuilder().clearJobName()));
    refused("OfferResponse.learned[0].ratio", MISSING,
        r -> r.setLearned(0, r.getLearned(0).toBuilder().clearRatio()));
    refused("OfferResponse.learned[0].runs", MISSING,
        r -> r.setLearned(0, r.getLearned(0).toBuilder().clearRuns()));
    refused("OfferResponse.diagnostics.rack_saturated", MISSING,
        r -> r.setDiagnostics(r.getDiagnostics().toBuilder().clearRackSaturated()));
    refused("OfferResponse.diagnostics.starved[0]", EMPTY,
        r -> r.setDiagnostics(r.getDiagnostics().toBuilder().setStarved(0, "")));
    refused("OfferResponse.logs[0].level", "LOG_LEVEL_UNSPECIFIED",
        r -> r.setLogs(0, r.getLogs(0).toBuilder().setLevel(LogLevel.LOG_LEVEL_UNSPECIFIED)));
    refused("OfferResponse.logs[0].level", "unknown value",
        r -> r.setLogs(0, r.getLogs(0).toBuilder().setLevelValue(42)));
    refused("OfferResponse.queue_weights[0].queue", EMPTY,
        r -> r.setQueueWeights(0, r.getQueueWeights(0).toBuilder().clearQueue()));
    refused("OfferResponse.queue_weights[0].weight", MISSING,
        r -> r.setQueueWeights(0, r.getQueueWeights(0).toBuilder().clearWeight()));
    refused("OfferResponse.queue_weights[0].weight", "a finite weight >= 0",
        r -> r.setQueueWeights(0, r.getQueueWeights(0).toBuilder().setWeight(-1)));
    refused("OfferResponse.queue_weights[0].weight", "a finite weight >= 0",
        r -> r.setQueueWeights(0, r.getQueueWeights(0).toBuilder().setWeight(Double.NaN)));
    refused("OfferResponse.intervals[0].market", EMPTY,
        r -> r.setIntervals(0, r.getIntervals(0).toBuilder().clearMarket()));
    refused("OfferResponse.intervals[0].sequence", MISSING,
        r -> r.setIntervals(0, r.getIntervals(0).toBuilder().clearSequence()));
    refused("OfferResponse.intervals[0].price", MISSING,
        r -> r.setIntervals(0, r.getIntervals(0).toBuilder().clearPrice()));
    refused("OfferResponse.intervals[0].queues[0].budget", "finite and >= 0",
        r -> r.setIntervals(0, r.getIntervals(0).toBuilder().setQueues(0,
            r.getIntervals(0).getQueues(0).toBuilder().setBudget(-0.5))));
    refused("OfferResponse.intervals[0].queues[0].charge", MISSING,
        r -> r.setIntervals(0, r.getIntervals(0).toBuilder().setQueues(0,
            r.getIntervals(0).getQueues(0).toBuilder().clearCharge())));
    refused("OfferResponse.node_scores[0].node", EMPTY,
        r -> r.setNodeScores(0, r.getNodeScores(0).toBuilder().clearNode()));
    refused("OfferResponse.node_scores[0].map_score", MISSING,
        r -> r.setNodeScores(0, r.getNodeScores(0).toBuilder().clearMapScore()));
    refused("OfferResponse.node_scores[0].net_from_feed", MISSING,
        r -> r.setNodeScores(0, r.getNodeScores(0).toBuilder().clearNetFromFeed()));
    refused("OfferResponse.node_scores[0].reduce_class", MISSING,
        r -> r.setNodeScores(0, r.getNodeScores(0).toBuilder().clearReduceClass()));
  }

  private static OfferResponse.Builder withEntry(OfferResponse.Builder response, int index,
      UnaryOperator<PlanEntry.Builder> change) {
    QueuePlan queue = response.getPlan().getQueues(0);
    return response.setPlan(response.getPlan().toBuilder().setQueues(0,
        queue.toBuilder().setEntries(index, change.apply(queue.getEntries(index).toBuilder()))));
  }

  @Test
  void aContainerEndsAsAFinishedTaskOnlyWhenItsExitStatusAllowsIt() {
    for (int finished : new int[] {ContainerExitStatus.SUCCESS,
        ContainerExitStatus.KILLED_BY_APPMASTER, ContainerExitStatus.INVALID, 143, 137}) {
      assertTrue(WireCodec.containerFinished("app_1", "c1", finished, 9)
          .getContainerFinished().getTaskCompleted(), "exit status " + finished);
    }
    for (int ended : new int[] {ContainerExitStatus.PREEMPTED, ContainerExitStatus.ABORTED,
        ContainerExitStatus.DISKS_FAILED, ContainerExitStatus.KILLED_EXCEEDED_PMEM,
        ContainerExitStatus.KILLED_BY_RESOURCEMANAGER, 1, 65}) {
      assertFalse(WireCodec.containerFinished("app_1", "c1", ended, 9)
          .getContainerFinished().getTaskCompleted(), "exit status " + ended);
    }
  }

  @Test
  void bytesThatAreNoResponseAreRefused() {
    NativeProtocolException e = assertThrows(NativeProtocolException.class,
        () -> WireCodec.decodeResponse(new byte[] {(byte) 0x0a, 0x05, 'a', 'b'}));
    assertTrue(e.getMessage().startsWith("rackwise.wire.v1.OfferResponse cannot be decoded"),
        e.getMessage());
  }

  @Test
  void theBuildersRefuseMissingIdsNamingTheField() {
    assertRefused("rackwise.wire.v1.AppAdded.app is null",
        () -> WireCodec.appAdded(null, "n", "u", "root.q", "MAPREDUCE", null, 1));
    assertRefused("rackwise.wire.v1.AppAdded.queue is empty",
        () -> WireCodec.appAdded("app_1", "n", "u", "", "MAPREDUCE", null, 1));
    assertRefused("rackwise.wire.v1.NodeAdded.rack is empty",
        () -> WireCodec.nodeAdded("h1:1", "h1", "", TASK));
    assertRefused("rackwise.wire.v1.ContainerAllocated.container is null",
        () -> WireCodec.containerAllocated("app_1", null, "h1:1", 20, NodeType.NODE_LOCAL,
            TASK, 1));
    assertRefused("rackwise.wire.v1.NodeOffer.node is empty",
        () -> WireCodec.offerRequest(1, List.of(), "", TASK, null));
    assertRefused("rackwise.wire.v1.HostFigures of h1 carries no figure",
        () -> WireCodec.hostFigures("h1", 1, null, null, null, null));
    assertRefused("rackwise.wire.v1.AskRow.any is -1",
        () -> WireCodec.askRow(20, -1, TASK, Map.of(), Map.of()));
  }

  private static void assertRefused(String start, Runnable build) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
    assertTrue(e.getMessage().startsWith(start), e.getMessage());
  }

  @Test
  void anAppWithoutNameUserTypeOrTagsIsSentWithEmptyOnes() {
    Event event = WireCodec.appAdded("app_1", null, null, "root.q", null, null, 7);
    assertEquals("", event.getAppAdded().getName());
    assertEquals("", event.getAppAdded().getAppType());
    assertEquals(0, event.getAppAdded().getTagsCount());
    assertTrue(event.getAppAdded().hasSubmitMs());
  }

  @Test
  void theRequestCarriesTheNodeItsUtilizationAndEveryRequiredNumber() {
    OfferRequest request = WireCodec.offerRequest(5, List.of(WireCodec.nodeRemoved("h9:1")),
        "h1:1", Resource.newInstance(2048, 2), ResourceUtilization.newInstance(512, 0, 1.5f));
    assertTrue(request.hasNowMs());
    assertEquals(5, request.getNowMs());
    assertEquals("h9:1", request.getEvents(0).getNodeRemoved().getNode());
    assertEquals(2048, request.getNode().getUnallocated().getMemoryMb());
    assertTrue(request.getNode().getUnallocated().hasVcores());
    assertEquals(512, request.getNode().getUtilization().getPmemMb());
    assertEquals(1.5, request.getNode().getUtilization().getCpu(), 1e-9);
    assertFalse(WireCodec.offerRequest(5, List.of(), "h1:1", TASK, null).getNode()
        .hasUtilization());
  }

  @Test
  void aRowWithNothingOutstandingRemovesThePriorityAndSendsNothingElse() {
    var removal = WireCodec.askRow(20, 0, TASK, Map.of("/r1", 1), Map.of("h1", 1));
    assertTrue(removal.hasPriority() && removal.hasAny());
    assertEquals(0, removal.getAny());
    assertFalse(removal.hasResources());
    assertEquals(0, removal.getHostsCount() + removal.getRacksCount());
  }
}
