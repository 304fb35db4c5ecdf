package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.bridge.DecisionCore;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeCoreException;
import io.rackwise.yarn.testing.CapturedLog;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fallback net under fault injection: a real ResourceManager (MockRM) runs two
 * MapReduce-shaped jobs on a steered queue while the engine behind the core (or one of the
 * scheduler's own steps on the native path) fails in one chosen way. Whatever fails, the RM keeps
 * scheduling and every job finishes; the failure is logged once at ERROR naming its stage,
 * counted once, and the core is off from then on, with nothing built for it.
 */
class FaultInjectionTest {
  private static final Map<String, List<String>> TWO_RACKS = new LinkedHashMap<>();

  static {
    TWO_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    TWO_RACKS.put("/r2", Arrays.asList("h3", "h4"));
  }

  private static final String STEERED = MockRackCluster.allocationFile(
      "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy>"
          // Not about the locality wait (its own tests are in the core): no wait on the
          // real clock between this test's heartbeats.
          + "<localityWaitMs>0</localityWaitMs><rackWaitMs>0</rackWaitMs></rackwise></queue>");
  private static final int MAPS = 4;
  private static final int REDUCES = 2;
  /** Native offers the core answers normally before the fault strikes. */
  private static final int SOUND_OFFERS = 3;

  @TempDir
  Path workDir;

  private MockRackCluster start(boolean required) throws Exception {
    return new MockRackCluster(FaultInjectingScheduler.class, STEERED,
        Map.of("yarn.scheduler.rackwise.native.required", Boolean.toString(required)),
        TWO_RACKS, workDir);
  }

  private static FaultInjectingScheduler scheduler(MockRackCluster cluster) {
    return (FaultInjectingScheduler) cluster.rm.getResourceScheduler();
  }

  @ParameterizedTest
  @EnumSource(value = FaultInjectingScheduler.Fault.class, names = "BLOCK",
      mode = EnumSource.Mode.EXCLUDE)
  void aFailureAtAnyStageFallsBackOnceAndEveryJobFinishes(FaultInjectingScheduler.Fault fault)
      throws Exception {
    try (MockRackCluster cluster = start(false);
        CapturedLog coreLog = CapturedLog.of(DecisionCore.class.getName());
        CapturedLog nativeLog = fault == FaultInjectingScheduler.Fault.LOG_RECORDS
            ? CapturedLog.throwingOn("io.rackwise.yarn.native", FaultInjectingScheduler.MARKER)
            : CapturedLog.of("io.rackwise.yarn.native")) {
      FaultInjectingScheduler scheduler = scheduler(cluster);
      RackwiseMetrics metrics = scheduler.getRackwiseMetrics();
      List<MockRackCluster.Job> jobs = submitJobs(cluster);
      long offersBefore = metrics.getOffers();
      scheduler.arm(fault, SOUND_OFFERS + 1);

      runToCompletion(cluster, jobs);

      assertEquals(1, metrics.getNativeFailures(), "counted exactly once");
      assertFalse(scheduler.isNativeActive(), "the core is off");
      assertFalse(metrics.isNativeActive(), "NativeActive is 0");
      assertTrue(metrics.getOffers() - offersBefore >= SOUND_OFFERS,
          "the core decided offers of these jobs before the fault: " + metrics.getOffers());
      assertTrue(metrics.getFallbackOffers() > 0, "FairScheduler scheduled after the fault");
      List<String> errors = coreLog.messages(Level.ERROR);
      assertEquals(1, errors.size(), "logged once: " + errors);
      assertTrue(errors.get(0).contains("failed while " + fault.stage), errors.get(0));
      assertEquals(0, scheduler.decisionCore().queuedEvents(), "no events queued in fallback");
      assertEquals(0, scheduler.askChangesBuiltInFallback(), "no ask changes in fallback");
      finishAll(cluster, jobs);
    }
  }

  /**
   * A native call cannot be interrupted: a 2 s call completes, its plan is used, and it is
   * logged at WARN and counted as slow, not as a failure.
   */
  @Test
  void aCallBlockingForTwoSecondsCompletesAndIsReportedAsSlow() throws Exception {
    try (MockRackCluster cluster = start(false);
        CapturedLog coreLog = CapturedLog.of(DecisionCore.class.getName())) {
      FaultInjectingScheduler scheduler = scheduler(cluster);
      RackwiseMetrics metrics = scheduler.getRackwiseMetrics();
      List<MockRackCluster.Job> jobs = submitJobs(cluster);
      scheduler.arm(FaultInjectingScheduler.Fault.BLOCK, SOUND_OFFERS + 1);

      runToCompletion(cluster, jobs);

      assertEquals(1, metrics.getSlowOffers());
      assertEquals(0, metrics.getNativeFailures());
      assertTrue(scheduler.isNativeActive());
      assertEquals(0, metrics.getFallbackOffers());
      List<String> warnings = coreLog.messages(Level.WARN);
      assertEquals(1, warnings.size(), warnings.toString());
      assertTrue(warnings.get(0).matches(".*took (19\\d\\d|[2-9]\\d\\d\\d) ms.*"),
          warnings.get(0));
      finishAll(cluster, jobs);
    }
  }

  /** With native.required the same failure reaches the caller and says the setting did it. */
  @Test
  void withNativeRequiredAFailurePropagatesNamingTheSetting() throws Exception {
    try (MockRackCluster cluster = start(true)) {
      FaultInjectingScheduler scheduler = scheduler(cluster);
      List<MockRackCluster.Job> jobs = submitJobs(cluster);
      scheduler.arm(FaultInjectingScheduler.Fault.PANIC, 1);
      NodeUpdateSchedulerEvent update = new NodeUpdateSchedulerEvent(
          cluster.rm.getRMContext().getRMNodes().get(cluster.nodes.get("h1").getNodeId()));
      NativeCoreException failure = assertThrows(NativeCoreException.class,
          () -> scheduler.handle(update));
      assertTrue(failure.getMessage().contains("yarn.scheduler.rackwise.native.required=true"),
          failure.getMessage());
      assertTrue(failure.getMessage().contains("deliberate panic"), failure.getMessage());
      assertEquals(1, scheduler.getRackwiseMetrics().getNativeFailures());
      assertTrue(scheduler.isNativeActive(), "required: no silent fallback");
      assertEquals(0, jobs.get(0).containers.size());
    }
  }

  private static List<MockRackCluster.Job> submitJobs(MockRackCluster cluster) throws Exception {
    MockRackCluster.Job first = cluster.submit("first", "sw", "alice",
        RackwiseFairSchedulerTest.ratio(3), "h4");
    MockRackCluster.Job second = cluster.submit("second", "sw", "bob",
        RackwiseFairSchedulerTest.ratio(0.2), "h3");
    cluster.ask(first, MAPS, List.of("h1", "h2"), REDUCES);
    cluster.ask(second, MAPS, List.of("h2", "h3"), REDUCES);
    return List.of(first, second);
  }

  /**
   * Heartbeats every node in turn and completes every task container as soon as its job has
   * it, until each job holds all its maps and reduces; fails if that takes unreasonably long.
   */
  private static void runToCompletion(MockRackCluster cluster, List<MockRackCluster.Job> jobs)
      throws Exception {
    MockRackCluster.Job[] all = jobs.toArray(new MockRackCluster.Job[0]);
    Set<ContainerId> completed = new HashSet<>();
    for (int round = 0; round < 20 && !allPlaced(jobs); round++) {
      for (String host : cluster.nodes.keySet()) {
        cluster.heartbeat(host, all);
      }
      for (MockRackCluster.Job job : jobs) {
        for (Container container : job.containers) {
          if (completed.add(container.getId())) {
            cluster.nodes.get(container.getNodeId().getHost()).nodeHeartbeat(
                job.am.getApplicationAttemptId(), container.getId().getContainerId(),
                ContainerState.COMPLETE);
          }
        }
      }
      cluster.rm.drainEvents();
      cluster.collect(all);
    }
    assertEquals(List.of(), cluster.dispatcherFailures, "nothing reached the dispatcher");
    for (MockRackCluster.Job job : jobs) {
      assertEquals(MAPS, job.count(MAP), job.app.getName() + " maps: " + job.priorities());
      assertEquals(REDUCES, job.count(REDUCE), job.app.getName() + " reduces");
      assertEquals(MAPS + REDUCES, job.containers.size(), job.priorities().toString());
    }
    FairScheduler fs = (FairScheduler) cluster.rm.getResourceScheduler();
    for (MockRackCluster.Job job : jobs) {
      // Only the AM is still running: every task container completed.
      assertEquals(1, fs.getSchedulerApp(job.am.getApplicationAttemptId()).getLiveContainers()
          .size(), job.app.getName());
    }
  }

  private static boolean allPlaced(List<MockRackCluster.Job> jobs) {
    return jobs.stream().allMatch(job -> job.containers.size() == MAPS + REDUCES);
  }

  private static void finishAll(MockRackCluster cluster, List<MockRackCluster.Job> jobs)
      throws Exception {
    for (MockRackCluster.Job job : jobs) {
      String amHost = job.app.getCurrentAppAttempt().getMasterContainer().getNodeId().getHost();
      MockRM.finishAMAndVerifyAppState(job.app, cluster.rm, cluster.nodes.get(amHost), job.am);
      assertEquals(RMAppState.FINISHED, job.app.getState());
    }
  }
}
