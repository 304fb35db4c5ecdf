package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.ContainerAllocated;
import io.rackwise.wire.v1.Event;
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
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A work-preserving ResourceManager restart: the NodeManagers re-register with their
 * containers, and the core of the new RM hears of each (node, priority), a finished one as
 * finished, instead of rebuilding the job from its remaining asks only.
 */
class RecoveredContainersTest {
  private static final int MAP = MockRackCluster.MAP;
  private static final int MB = MockRackCluster.TASK_MB;

  @TempDir
  Path workDir;

  @Test
  void recoveredContainersReachTheNewCoreWithTheirNodesAndPriorities() throws Exception {
    YarnConfiguration conf = conf();
    MockRM rm1 = new MockRM(conf);
    MockRM rm2 = null;
    try {
      rm1.start();
      MockNM nm1 = rm1.registerNode("recovery1:1234", 8192, 8);
      MockNM nm2 = rm1.registerNode("recovery2:1234", 8192, 8);
      RMApp app = MockRMAppSubmitter.submit(rm1, MockRMAppSubmissionData.Builder
          .createWithMemory(MB, rm1).withAppName("job").withQueue("sw").withUser("alice")
          .withAppType("MAPREDUCE").build());
      MockAM am = MockRM.launchAndRegisterAM(app, rm1, nm1);
      List<ResourceRequest> asks = new ArrayList<>();
      asks.add(am.createResourceReq(ResourceRequest.ANY, MB, MAP, 2));
      am.allocate(asks, new ArrayList<ContainerId>());
      List<Container> maps = new ArrayList<>();
      for (MockNM nm : List.of(nm1, nm2)) {
        ((FairScheduler) rm1.getResourceScheduler()).update();
        nm.nodeHeartbeat(true);
        rm1.drainEvents();
        maps.addAll(am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>())
            .getAllocatedContainers());
      }
      assertEquals(2, maps.size(), "one map on each node");
      Container onFirst = maps.stream().filter(c -> c.getNodeId().getHost().equals("recovery1"))
          .findFirst().orElseThrow();
      Container onSecond = maps.stream().filter(c -> c.getNodeId().getHost().equals("recovery2"))
          .findFirst().orElseThrow();
      ContainerId amContainer = ContainerId.newContainerId(am.getApplicationAttemptId(), 1);
      // One more offer, which carries the last allocation to the first RM's core.
      nm1.nodeHeartbeat(true);
      rm1.drainEvents();
      Set<String> allocatedBefore =
          allocations((ContainerEventRecordingScheduler) rm1.getResourceScheduler());

      rm2 = new MockRM(conf, rm1.getRMStateStore());
      rm2.start();
      nm1.setResourceTrackerService(rm2.getResourceTrackerService());
      nm2.setResourceTrackerService(rm2.getResourceTrackerService());
      // The map on recovery1 still runs, the one on recovery2 finished while the RM was down.
      nm1.registerNode(List.of(status(amContainer, ContainerState.RUNNING, 0, app),
          status(onFirst.getId(), ContainerState.RUNNING, MAP, app)), null);
      nm2.registerNode(List.of(status(onSecond.getId(), ContainerState.COMPLETE, MAP, app)), null);
      rm2.drainEvents();
      ContainerEventRecordingScheduler scheduler =
          (ContainerEventRecordingScheduler) rm2.getResourceScheduler();
      nm1.nodeHeartbeat(true);
      rm2.drainEvents();

      assertTrue(scheduler.isNativeActive());
      assertEquals(0, scheduler.getRackwiseMetrics().getNativeFailures());
      assertTrue(scheduler.getRackwiseMetrics().getOffers() > 0, "the new core was offered");
      Set<String> expected = new TreeSet<>(Set.of(amContainer + "@" + onFirst.getNodeId() + "/0",
          onFirst.getId() + "@" + onFirst.getNodeId() + "/" + MAP,
          onSecond.getId() + "@" + onSecond.getNodeId() + "/" + MAP));
      assertEquals(expected, allocatedBefore, "what the first RM's core was told");
      assertEquals(expected, allocations(scheduler), "the new core is told the same");
      assertEquals(List.of(onSecond.getId().toString()), scheduler.containerEvents.stream()
          .filter(Event::hasContainerFinished)
          .map(e -> e.getContainerFinished().getContainer()).collect(Collectors.toList()),
          "the map that finished on recovery2 is finished for the core too");
    } finally {
      if (rm2 != null) {
        rm2.stop();
      }
      rm1.stop();
    }
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
