package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.net.DNSToSwitchMapping;
import org.apache.hadoop.net.StaticMapping;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatResponse;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceTrackerService;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;

/**
 * A real ResourceManager (Hadoop's MockRM) with hand-stepped NodeManagers whose hosts are mapped
 * to racks, and MapReduce-shaped jobs: maps ask at priority 20 with host, rack and ANY requests,
 * reduces at priority 10 with ANY only, as {@code RMContainerAllocator} does. One container per
 * heartbeat, so a test reads the scheduler's order container by container.
 */
final class MockRackCluster implements AutoCloseable {
  // What the jobs ask with, as RMContainerAllocator does (PRIORITY_MAP, PRIORITY_REDUCE): the
  // cluster's jobs play the ApplicationMaster, and some tests run it without the native library
  // the shim reads the core's priorities from (NativeCoreTest checks the core's are these).
  static final int MAP = 20;
  static final int REDUCE = 10;
  static final int NODE_MB = 8192;
  static final int TASK_MB = 1024;

  final MockRM rm;
  /** Whatever reached the scheduler's event dispatcher (Hadoop 3.4's exits the RM on it). */
  final List<Throwable> dispatcherFailures = new CopyOnWriteArrayList<>();
  final Map<String, MockNM> nodes = new LinkedHashMap<>();
  final Map<String, String> rackOf = new LinkedHashMap<>();
  /**
   * The node utilization each host's NodeManager reports with its heartbeats (MockNM reports
   * none): set here, it travels in the heartbeat's NodeStatus as a real NodeManager's would.
   */
  final Map<String, ResourceUtilization> reportedUtilization = new ConcurrentHashMap<>();

  /** A job of the cluster: its AM and everything it has been given so far. */
  static final class Job {
    final RMApp app;
    final MockAM am;
    final List<Container> containers = new ArrayList<>();

    Job(RMApp app, MockAM am) {
      this.app = app;
      this.am = am;
    }

    /** Priorities of the containers received so far, in order. */
    List<Integer> priorities() {
      List<Integer> list = new ArrayList<>();
      for (Container c : containers) {
        list.add(c.getPriority().getPriority());
      }
      return list;
    }

    long count(int priority) {
      return priorities().stream().filter(p -> p == priority).count();
    }
  }

  /**
   * Starts an RM with {@code schedulerClass} and the given allocation file.
   *
   * @param hostsByRack e.g. {@code {"/r1": ["h1","h2"], "/r2": ["h3","h4"]}}
   */
  MockRackCluster(Class<?> schedulerClass, String allocationXml, Map<String, String> extra,
      Map<String, List<String>> hostsByRack, Path workDir) throws Exception {
    Path allocation = workDir.resolve("fair-scheduler.xml");
    Files.write(allocation, allocationXml.getBytes(StandardCharsets.UTF_8));
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, allocation.toString());
    conf.setBoolean(FairSchedulerConfiguration.ASSIGN_MULTIPLE, false);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, TASK_MB);
    conf.setBoolean("yarn.scheduler.rackwise.stats.enabled", false);
    // Schedule from the first heartbeat: the recovery wait (10 s by default) would swallow the
    // single heartbeat MockRM's AM launch makes.
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    conf.setClass(CommonConfigurationKeysPublic.NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
        StaticMapping.class, DNSToSwitchMapping.class);
    hostsByRack.forEach((rack, hosts) -> hosts.forEach(host -> {
      StaticMapping.addNodeToRack(host, rack);
      rackOf.put(host, rack);
    }));
    extra.forEach(conf::set);
    // Container tokens name their NM by address; the test hosts (h1, h2, ...) have none, so
    // tokens carry host names instead, as in Hadoop's own scheduler tests.
    SecurityUtil.setTokenServiceUseIp(false);
    rm = new MockRM(conf) {
      @Override
      protected ResourceTrackerService createResourceTrackerService() {
        // As MockRM's own (no RPC server), plus the hosts' utilization reports.
        getRMContext().getContainerTokenSecretManager().rollMasterKey();
        getRMContext().getNMTokenSecretManager().rollMasterKey();
        return new ResourceTrackerService(getRMContext(), nodesListManager, nmLivelinessMonitor,
            getRMContext().getContainerTokenSecretManager(),
            getRMContext().getNMTokenSecretManager()) {
          @Override
          public NodeHeartbeatResponse nodeHeartbeat(NodeHeartbeatRequest request)
              throws YarnException, IOException {
            ResourceUtilization reported =
                reportedUtilization.get(request.getNodeStatus().getNodeId().getHost());
            if (reported != null) {
              request.getNodeStatus().setNodeUtilization(reported);
            }
            return super.nodeHeartbeat(request);
          }

          @Override
          protected void serviceStart() {
          }

          @Override
          protected void serviceStop() {
          }
        };
      }

      @Override
      protected EventHandler<SchedulerEvent> createSchedulerEventDispatcher() {
        EventHandler<SchedulerEvent> scheduler = super.createSchedulerEventDispatcher();
        return event -> {
          try {
            scheduler.handle(event);
          } catch (RuntimeException | Error e) {
            dispatcherFailures.add(e);
            throw e;
          }
        };
      }
    };
    rm.start();
    for (String host : rackOf.keySet()) {
      nodes.put(host, rm.registerNode(host + ":1234", NODE_MB, 8));
    }
    rm.drainEvents();
  }

  /**
   * An allocation file with the given queues. The AM share limit is off: FairScheduler checks it
   * against fair shares its update thread has not computed yet when a test submits at once.
   */
  static String allocationFile(String queuesXml) {
    return "<?xml version=\"1.0\"?>\n<allocations>\n"
        + "<queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>\n" + queuesXml
        + "\n</allocations>\n";
  }

  RackwiseFairScheduler rackwise() {
    return (RackwiseFairScheduler) rm.getResourceScheduler();
  }

  /** Submits a MapReduce app and runs its AM on {@code amHost}. */
  Job submit(String name, String queue, String user, Set<String> tags, String amHost)
      throws Exception {
    RMApp app = submitWithoutAM(name, queue, user, tags);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nodes.get(amHost));
    return new Job(app, am);
  }

  /** Submits a MapReduce app whose AM ask the scheduler places when the heartbeats allow. */
  RMApp submitWithoutAM(String name, String queue, String user, Set<String> tags)
      throws Exception {
    RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(TASK_MB, rm).withAppName(name).withQueue(queue).withUser(user)
        .withAppType("MAPREDUCE").withApplicationTags(tags).build());
    rm.drainEvents();
    return app;
  }

  /**
   * Launches and registers the AM of an app whose AM container the scheduler has placed
   * already ({@code MockRM.launchAM} expects to place it with its own heartbeat).
   */
  Job launch(RMApp app) throws Exception {
    RMAppAttempt attempt = app.getCurrentAppAttempt();
    rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.ALLOCATED);
    MockAM am = rm.sendAMLaunched(attempt.getAppAttemptId());
    rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.LAUNCHED);
    am.registerAppAttempt();
    rm.waitForState(app.getApplicationId(), RMAppState.RUNNING);
    return new Job(app, am);
  }

  /** Asks for maps whose splits sit on {@code splitHosts}, and for reduces. */
  void ask(Job job, int maps, List<String> splitHosts, int reduces) throws Exception {
    List<ResourceRequest> asks = new ArrayList<>();
    if (maps > 0) {
      for (String host : splitHosts) {
        asks.add(job.am.createResourceReq(host, TASK_MB, MAP, maps));
      }
      splitHosts.stream().map(rackOf::get).distinct()
          .forEach(rack -> asks.add(request(job, rack, MAP, maps)));
      asks.add(request(job, ResourceRequest.ANY, MAP, maps));
    }
    if (reduces > 0) {
      asks.add(request(job, ResourceRequest.ANY, REDUCE, reduces));
    }
    job.am.allocate(asks, new ArrayList<ContainerId>());
    rm.drainEvents();
  }

  private static ResourceRequest request(Job job, String resource, int priority, int count) {
    try {
      return job.am.createResourceReq(resource, TASK_MB, priority, count);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * One NodeManager heartbeat, then every job's AM collects what it was given. FairScheduler's
   * update pass (demand and fair shares, every 500 ms in a live RM) runs first, as it would have
   * between two real heartbeats.
   */
  void heartbeat(String host, Job... jobs) throws Exception {
    ((FairScheduler) rm.getResourceScheduler()).update();
    nodes.get(host).nodeHeartbeat(true);
    rm.drainEvents();
    collect(jobs);
  }

  void collect(Job... jobs) throws Exception {
    for (Job job : jobs) {
      job.containers.addAll(job.am.allocate(new ArrayList<ResourceRequest>(),
          new ArrayList<ContainerId>()).getAllocatedContainers());
    }
  }

  @Override
  public void close() throws IOException {
    rm.stop();
  }
}
