package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.ContainerAllocated;
import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.net.DNSToSwitchMapping;
import org.apache.hadoop.net.StaticMapping;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.apache.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the core holds of a job by rack is built from facts. On a work-preserving
 * ResourceManager restart the NodeManagers re-register with their containers, and the core of
 * the new RM hears of each (node, priority), a finished one as finished, so it holds the job as
 * the first RM's core did instead of rebuilding it from its remaining asks only. And a
 * container that ended without its task (preempted) frees its slot but is no finished map.
 */
class RecoveredContainersTest {
  private static final int MAP = MockRackCluster.MAP;
  private static final int REDUCE = MockRackCluster.REDUCE;
  private static final int MB = MockRackCluster.TASK_MB;
  private static final int NODE_MB = 8192;

  @TempDir
  Path workDir;

  /**
   * Five maps, three on /r1 and two on /r2; two finish on /r1 and one on /r2, then a reduce is
   * asked (too large to be placed, so nothing moves while SARP runs). The job as SARP saw it on
   * each RM's core must be the same line: measured shares /r1=0.67,/r2=0.33, 3 of 5 maps
   * finished, one map running on each rack. A recovery that lost the containers' nodes would
   * put them on a rack of no node, one that lost them would count none.
   */
  @Test
  void theNewCoreHoldsTheJobByRackAsTheFirstDid() throws Exception {
    YarnConfiguration conf = conf();
    MockRM rm1 = new MockRM(conf);
    MockRM rm2 = null;
    try (CapturedLog nativeLog = CapturedLog.of("io.rackwise.yarn.native")) {
      rm1.start();
      JobOnTwoRacks job = startJobOnTwoRacks(rm1);
      MockNM nm1 = job.nm1();
      MockNM nm2 = job.nm2();
      RMApp app = job.app();
      MockAM am = job.am();
      List<Container> onFirst = new ArrayList<>();
      List<Container> onSecond = new ArrayList<>();
      placeMaps(rm1, am, List.of(nm1, nm1, nm1, nm2, nm2), onFirst, onSecond);
      assertEquals(3, onFirst.size(), "maps on /r1: " + onFirst);
      assertEquals(2, onSecond.size(), "maps on /r2: " + onSecond);
      nm1.nodeHeartbeat(List.of(finished(onFirst.get(0)), finished(onFirst.get(1))), true);
      nm2.nodeHeartbeat(List.of(finished(onSecond.get(0))), true);
      rm1.drainEvents();
      // The AM's first look at the finished maps: they stay on their NodeManagers until it
      // acknowledges them with its next call, so the NodeManagers report them again below.
      am.allocate(List.of(unplaceableReduce(am)), new ArrayList<ContainerId>());
      nm1.nodeHeartbeat(true);
      rm1.drainEvents();
      ContainerId amContainer = ContainerId.newContainerId(am.getApplicationAttemptId(), 1);
      ContainerEventRecordingScheduler first =
          (ContainerEventRecordingScheduler) rm1.getResourceScheduler();

      rm2 = new MockRM(conf, rm1.getRMStateStore());
      rm2.start();
      nm1.setResourceTrackerService(rm2.getResourceTrackerService());
      nm2.setResourceTrackerService(rm2.getResourceTrackerService());
      nm1.registerNode(List.of(status(amContainer, ContainerState.RUNNING, 0, app),
          status(onFirst.get(0).getId(), ContainerState.COMPLETE, MAP, app),
          status(onFirst.get(1).getId(), ContainerState.COMPLETE, MAP, app),
          status(onFirst.get(2).getId(), ContainerState.RUNNING, MAP, app)), null);
      nm2.registerNode(List.of(status(onSecond.get(0).getId(), ContainerState.COMPLETE, MAP, app),
          status(onSecond.get(1).getId(), ContainerState.RUNNING, MAP, app)), null);
      rm2.drainEvents();
      // The AM resyncs as MapReduce's does: registers again and asks anew for what it lacks.
      am.setAMRMProtocol(rm2.getApplicationMasterService(), rm2.getRMContext());
      am.registerAppAttempt(true);
      am.allocate(List.of(unplaceableReduce(am)), new ArrayList<ContainerId>());
      ContainerEventRecordingScheduler second =
          (ContainerEventRecordingScheduler) rm2.getResourceScheduler();
      nm1.nodeHeartbeat(true);
      rm2.drainEvents();

      for (ContainerEventRecordingScheduler scheduler : List.of(first, second)) {
        assertTrue(scheduler.isNativeActive());
        assertEquals(0, scheduler.getRackwiseMetrics().getNativeFailures());
      }
      Set<String> expected = new TreeSet<>();
      expected.add(amContainer + "@" + nm1.getNodeId() + "/0");
      for (Container map : onFirst) {
        expected.add(map.getId() + "@" + nm1.getNodeId() + "/" + MAP);
      }
      for (Container map : onSecond) {
        expected.add(map.getId() + "@" + nm2.getNodeId() + "/" + MAP);
      }
      assertEquals(expected, allocations(first), "what the first RM's core was told");
      assertEquals(expected, allocations(second), "the new core is told the same");
      Set<String> finished = new TreeSet<>(List.of(onFirst.get(0).getId().toString(),
          onFirst.get(1).getId().toString(), onSecond.get(0).getId().toString()));
      assertEquals(finished, finishes(first), "the maps that finished, for the first core");
      assertEquals(finished, finishes(second), "the same maps finished for the new core");

      List<String> sarp = sarpLines(nativeLog);
      assertEquals(2, sarp.size(), "SARP once on each RM's core: " + sarp);
      assertTrue(sarp.get(0).endsWith("SARP reduce shares /r1=0.67,/r2=0.33 (3 of 5 maps "
          + "finished; running maps /r1=1,/r2=1, running reduces none)"), sarp.get(0));
      assertEquals(sarp.get(0), sarp.get(1), "the job by rack before and after the restart");
    } finally {
      if (rm2 != null) {
        rm2.stop();
      }
      rm1.stop();
    }
  }

  /**
   * Three maps, two on /r1 and one on /r2. One on /r1 finishes; the one on /r2 is preempted
   * (its exit status says so). SARP must see one finished map, on /r1, one running, and the
   * preempted one in neither (the AM asks for it again):
   * counting the preempted container as a finished map would put map output on /r2 (shares
   * /r1=0.50,/r2=0.50) that does not exist.
   */
  @Test
  void aPreemptedMapFreesItsSlotButIsNoFinishedMap() throws Exception {
    MockRM rm = new MockRM(conf());
    try (CapturedLog nativeLog = CapturedLog.of("io.rackwise.yarn.native")) {
      rm.start();
      JobOnTwoRacks job = startJobOnTwoRacks(rm);
      MockNM nm1 = job.nm1();
      MockNM nm2 = job.nm2();
      MockAM am = job.am();
      List<Container> onFirst = new ArrayList<>();
      List<Container> onSecond = new ArrayList<>();
      placeMaps(rm, am, List.of(nm1, nm1, nm2), onFirst, onSecond);
      assertEquals(2, onFirst.size(), "maps on /r1: " + onFirst);
      assertEquals(1, onSecond.size(), "maps on /r2: " + onSecond);
      nm1.nodeHeartbeat(List.of(finished(onFirst.get(0))), true);
      nm2.nodeHeartbeat(List.of(ContainerStatus.newInstance(onSecond.get(0).getId(),
          ContainerState.COMPLETE, "preempted", ContainerExitStatus.PREEMPTED)), true);
      rm.drainEvents();
      am.allocate(List.of(unplaceableReduce(am)), new ArrayList<ContainerId>());
      nm1.nodeHeartbeat(true);
      rm.drainEvents();

      ContainerEventRecordingScheduler scheduler =
          (ContainerEventRecordingScheduler) rm.getResourceScheduler();
      assertTrue(scheduler.isNativeActive());
      assertEquals(0, scheduler.getRackwiseMetrics().getNativeFailures());
      assertEquals(Set.of(onFirst.get(0).getId().toString(), onSecond.get(0).getId().toString()),
          finishes(scheduler), "both ends reached the core");
      List<String> sarp = sarpLines(nativeLog);
      assertEquals(1, sarp.size(), "SARP once: " + sarp);
      assertTrue(sarp.get(0).endsWith("SARP reduce shares /r1=1.00 (1 of 2 maps finished; "
          + "running maps /r1=1, running reduces none)"), sarp.get(0));
    } finally {
      rm.stop();
    }
  }

  /** Two NodeManagers, one per rack, and a MapReduce job whose AM runs on the first. */
  private record JobOnTwoRacks(MockNM nm1, MockNM nm2, RMApp app, MockAM am) { }

  private static JobOnTwoRacks startJobOnTwoRacks(MockRM rm) throws Exception {
    MockNM nm1 = rm.registerNode("recovery1:1234", NODE_MB, 8);
    MockNM nm2 = rm.registerNode("recovery2:1234", NODE_MB, 8);
    RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(MB, rm).withAppName("job").withQueue("sw").withUser("alice")
        .withAppType("MAPREDUCE").build());
    return new JobOnTwoRacks(nm1, nm2, app, MockRM.launchAndRegisterAM(app, rm, nm1));
  }

  /** The core's SARP lines for the test's job, in the order they were logged. */
  private static List<String> sarpLines(CapturedLog nativeLog) {
    return nativeLog.messages(Level.INFO).stream()
        .filter(m -> m.contains("job 'job'") && m.contains("SARP reduce shares"))
        .collect(Collectors.toList());
  }

  /**
   * Asks for as many maps as `heartbeats` and heartbeats those NodeManagers in turn, one
   * container each (assignmultiple is off), sorting the maps by the first node or not.
   */
  private static void placeMaps(MockRM rm, MockAM am, List<MockNM> heartbeats,
      List<Container> onFirst, List<Container> onSecond) throws Exception {
    am.allocate(List.of(am.createResourceReq(ResourceRequest.ANY, MB, MAP, heartbeats.size())),
        new ArrayList<ContainerId>());
    for (MockNM nm : heartbeats) {
      ((FairScheduler) rm.getResourceScheduler()).update();
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      for (Container map : am.allocate(new ArrayList<ResourceRequest>(),
          new ArrayList<ContainerId>()).getAllocatedContainers()) {
        (map.getNodeId().equals(heartbeats.get(0).getNodeId()) ? onFirst : onSecond).add(map);
      }
    }
  }

  /** A reduce no node can hold while maps run on it, so the offer after its ask places none. */
  private static ResourceRequest unplaceableReduce(MockAM am) throws Exception {
    return am.createResourceReq(ResourceRequest.ANY, NODE_MB, REDUCE, 1);
  }

  private static ContainerStatus finished(Container container) {
    return ContainerStatus.newInstance(container.getId(), ContainerState.COMPLETE, "done", 0);
  }

  /** The containers the core was told finished. */
  private static Set<String> finishes(ContainerEventRecordingScheduler scheduler) {
    return scheduler.containerEvents.stream().filter(Event::hasContainerFinished)
        .map(e -> e.getContainerFinished().getContainer())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** Each container allocation the core received, as container@node/priority. */
  private static Set<String> allocations(ContainerEventRecordingScheduler scheduler) {
    return scheduler.containerEvents.stream().filter(Event::hasContainerAllocated)
        .map(Event::getContainerAllocated).map(RecoveredContainersTest::describe)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static String describe(ContainerAllocated allocated) {
    return allocated.getContainer() + "@" + allocated.getNode() + "/" + allocated.getPriority();
  }

  private static NMContainerStatus status(ContainerId id, ContainerState state, int priority,
      RMApp app) {
    return NMContainerStatus.newInstance(id, 0, state,
        Resources.createResource(MB), "recovered",
        state == ContainerState.COMPLETE ? 0 : -1000,
        Priority.newInstance(priority), app.getSubmitTime());
  }

  private YarnConfiguration conf() throws Exception {
    Path allocation = workDir.resolve("fair-scheduler.xml");
    Files.write(allocation, MockRackCluster.allocationFile("<queue name=\"sw\"><rackwise>"
        + "<policy>shufflewatcher</policy>"
          // Not about the locality wait (its own tests are in the core): no wait on the
          // real clock between this test's heartbeats.
          + "<localityWaitMs>0</localityWaitMs><rackWaitMs>0</rackWaitMs></rackwise></queue>")
        .getBytes(StandardCharsets.UTF_8));
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, ContainerEventRecordingScheduler.class.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, allocation.toString());
    conf.setBoolean(FairSchedulerConfiguration.ASSIGN_MULTIPLE, false);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, MB);
    conf.setBoolean("yarn.scheduler.rackwise.stats.enabled", false);
    conf.setBoolean("yarn.scheduler.rackwise.native.required", true);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    conf.setClass(CommonConfigurationKeysPublic.NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
        StaticMapping.class, DNSToSwitchMapping.class);
    StaticMapping.addNodeToRack("recovery1", "/r1");
    StaticMapping.addNodeToRack("recovery2", "/r2");
    SecurityUtil.setTokenServiceUseIp(false);
    return conf;
  }
}
