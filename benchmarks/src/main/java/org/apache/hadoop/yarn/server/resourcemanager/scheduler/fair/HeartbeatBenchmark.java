package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.net.DNSToSwitchMapping;
import org.apache.hadoop.net.StaticMapping;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.test.GenericTestUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one NodeManager heartbeat costs the scheduler thread: {@code attemptScheduling(node)} on
 * a real ResourceManager (Hadoop's MockRM) running stock FairScheduler or Rackwise, with the same
 * cluster and jobs.
 *
 * <p>The state: {@code nodes} NodeManagers of 8 GB / 8 vcores in racks of 20, 500 MapReduce apps
 * in 20 queues (50 users) with their ApplicationMasters running, each app asking for 100 maps
 * (priority 20) whose splits have 3 replicas (one rack holds one, another rack two) as host, rack
 * and ANY requests, and one app in five also for 10 reduces (priority 10, ANY). Every request goes
 * through the AM protocol (MockAM), as a MapReduce AM's would.
 *
 * <p>Steady state: a heartbeat that places a container changes the cluster. After every
 * measured call (JMH {@code Level.Invocation} tear-down, not timed) the containers it placed are
 * killed and the app's AM re-sends its whole ask table, as a MapReduce AM does after each
 * allocation; the re-sent map count alternates between 100 and 101, so that Rackwise sees the
 * change and reports the table to its core on the next heartbeat, as it would in a live RM.
 * Nodes are offered in turn. The ResourceManager's threads (dispatcher, FairScheduler's update
 * thread every 500 ms) run as in a live RM.
 *
 * <p>{@code scheduler}: {@code stock} (FairScheduler), or Rackwise with every queue under one
 * policy ({@code rackwise-none} is Rackwise's floor: the shim and the native call without any
 * steering). Each value runs in its own forked JVM, one after the other in one JMH run. Run it
 * with {@code benchmarks/jmh.sh} (see BENCHMARK.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(1)
public class HeartbeatBenchmark {
  private static final int NODE_MB = 8192;
  private static final int NODE_VCORES = 8;
  private static final int TASK_MB = 1024;
  private static final int NODES_PER_RACK = 20;
  private static final int APPS = 500;
  private static final int QUEUES = 20;
  private static final int USERS = 50;
  private static final int MAPS = 100;
  private static final int REDUCES = 10;
  private static final int REDUCING_EVERY = 5;
  private static final int MAP_PRIORITY = 20;
  private static final int REDUCE_PRIORITY = 10;

  @Param({"stock", "rackwise-none", "rackwise-shufflewatcher", "rackwise-nas"})
  public String scheduler;

  @Param({"1000"})
  public int nodes;

  private MockRM rm;
  private FairScheduler fairScheduler;
  private final List<FSSchedulerNode> offered = new ArrayList<>();
  private final Map<ApplicationId, SteadyApp> apps = new HashMap<>();
  private int nextNode;
  private FSSchedulerNode lastOffered;

  /** An app's AM and the two versions of its ask table it re-sends in turn. */
  private static final class SteadyApp {
    final MockAM am;
    final List<List<ResourceRequest>> tables;
    int resent;

    SteadyApp(MockAM am, List<List<ResourceRequest>> tables) {
      this.am = am;
      this.tables = tables;
    }

    void resendAsks() throws Exception {
      resent++;
      am.allocate(tables.get(resent % tables.size()), Collections.<ContainerId>emptyList());
    }
  }

  @Setup(Level.Trial)
  public void startCluster() throws Exception {
    Path workDir = Files.createTempDirectory("rackwise-jmh");
    String policy = scheduler.startsWith("rackwise-") ? scheduler.substring(9) : "none";
    Path allocation = workDir.resolve("fair-scheduler.xml");
    Files.write(allocation, allocationFile(policy).getBytes(StandardCharsets.UTF_8));

    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, scheduler.equals("stock")
        ? FairScheduler.class.getName() : RackwiseFairScheduler.class.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, allocation.toString());
    // One container per heartbeat, FairScheduler's default since 3.x.
    conf.setBoolean(FairSchedulerConfiguration.ASSIGN_MULTIPLE, false);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, TASK_MB);
    // No AMs to poll: the apps are MockAMs.
    conf.setBoolean("yarn.scheduler.rackwise.stats.enabled", false);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    // Nodes and AMs heartbeat only in the set-up; the RM's liveness monitors (10 min by
    // default) outlast a fork of this benchmark.
    conf.setClass(CommonConfigurationKeysPublic.NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
        StaticMapping.class, DNSToSwitchMapping.class);
    List<String> hosts = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      String host = host(i);
      StaticMapping.addNodeToRack(host, rack(i / NODES_PER_RACK));
      hosts.add(host);
    }
    // Container tokens name their NM by host name: the benchmark's hosts have no address.
    SecurityUtil.setTokenServiceUseIp(false);

    rm = new MockRM(conf);
    // MockRM turns the root logger to DEBUG for tests; a live RM logs at INFO, and what the
    // scheduler logs per heartbeat at DEBUG would be measured with it.
    GenericTestUtils.setRootLogLevel(org.slf4j.event.Level.WARN);
    rm.start();
    fairScheduler = (FairScheduler) rm.getResourceScheduler();
    List<MockNM> managers = new ArrayList<>();
    for (String host : hosts) {
      managers.add(rm.registerNode(host + ":1234", NODE_MB, NODE_VCORES));
    }
    rm.drainEvents();
    for (MockNM manager : managers) {
      offered.add(fairScheduler.getSchedulerNode(manager.getNodeId()));
    }

    Random random = new Random(42);
    for (int a = 0; a < APPS; a++) {
      RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
          .createWithMemory(TASK_MB, rm).withAppName("job-" + (a % 37))
          .withQueue("root.q" + (a % QUEUES)).withUser("user" + (a % USERS))
          .withAppType("MAPREDUCE").build());
      fairScheduler.update();
      MockAM am = MockRM.launchAndRegisterAM(app, rm, managers.get(a % managers.size()));
      apps.put(app.getApplicationId(), new SteadyApp(am, List.of(
          askTable(am, random, a, MAPS), askTable(am, random, a, MAPS + 1))));
    }
    // Once every AM runs: with one container per heartbeat, a heartbeat that launches an AM
    // would otherwise place an earlier app's map instead.
    for (SteadyApp app : apps.values()) {
      app.resendAsks();
    }
    rm.drainEvents();
    fairScheduler.update();
  }

  /** The app's asks; {@code random} draws the same splits for both versions of a table. */
  private List<ResourceRequest> askTable(MockAM am, Random random, int app, int maps)
      throws Exception {
    Random splits = new Random(random.nextLong() ^ app);
    Map<String, Integer> hostCounts = new TreeMap<>();
    Map<String, Integer> rackCounts = new TreeMap<>();
    int racks = nodes / NODES_PER_RACK;
    for (int split = 0; split < MAPS; split++) {
      int first = splits.nextInt(racks);
      int second = (first + 1 + splits.nextInt(racks - 1)) % racks;
      int near = splits.nextInt(NODES_PER_RACK);
      int far = (near + 1 + splits.nextInt(NODES_PER_RACK - 1)) % NODES_PER_RACK;
      int[][] replicas = {{first, splits.nextInt(NODES_PER_RACK)}, {second, near}, {second, far}};
      for (int[] replica : replicas) {
        hostCounts.merge(host(replica[0] * NODES_PER_RACK + replica[1]), 1, Integer::sum);
      }
      rackCounts.merge(rack(first), 1, Integer::sum);
      rackCounts.merge(rack(second), 1, Integer::sum);
    }
    List<ResourceRequest> table = new ArrayList<>();
    for (Map.Entry<String, Integer> entry : hostCounts.entrySet()) {
      table.add(am.createResourceReq(entry.getKey(), TASK_MB, MAP_PRIORITY, entry.getValue()));
    }
    for (Map.Entry<String, Integer> entry : rackCounts.entrySet()) {
      table.add(am.createResourceReq(entry.getKey(), TASK_MB, MAP_PRIORITY, entry.getValue()));
    }
    table.add(am.createResourceReq(ResourceRequest.ANY, TASK_MB, MAP_PRIORITY, maps));
    if (app % REDUCING_EVERY == 0) {
      table.add(am.createResourceReq(ResourceRequest.ANY, TASK_MB, REDUCE_PRIORITY, REDUCES));
    }
    return table;
  }

  private static String host(int index) {
    return "r" + (index / NODES_PER_RACK) + "n" + (index % NODES_PER_RACK);
  }

  private static String rack(int rack) {
    return "/rack" + rack;
  }

  private static String allocationFile(String policy) {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<allocations>\n");
    // FairScheduler checks the AM share against fair shares its update thread computes later.
    xml.append("<queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>\n");
    for (int q = 0; q < QUEUES; q++) {
      xml.append("<queue name=\"q").append(q).append("\"><rackwise><policy>").append(policy)
          .append("</policy></rackwise></queue>\n");
    }
    return xml.append("</allocations>\n").toString();
  }

  @Benchmark
  public void heartbeat() {
    lastOffered = offered.get(nextNode);
    nextNode = (nextNode + 1) % offered.size();
    fairScheduler.attemptScheduling(lastOffered);
  }

  /** Undoes what the measured heartbeat placed (not timed). */
  @TearDown(Level.Invocation)
  public void releasePlaced() throws Exception {
    for (RMContainer container : lastOffered.getCopiedListOfRunningContainers()) {
      if (container.isAMContainer()) {
        continue;
      }
      ContainerStatus status = ContainerStatus.newInstance(container.getContainerId(),
          ContainerState.COMPLETE, "released by the benchmark", ContainerExitStatus.ABORTED);
      fairScheduler.completedContainer(container, status, RMContainerEventType.KILL);
      apps.get(container.getApplicationAttemptId().getApplicationId()).resendAsks();
    }
    rm.drainEvents();
  }

  @TearDown(Level.Trial)
  public void stopCluster() {
    if (fairScheduler instanceof RackwiseFairScheduler) {
      RackwiseFairScheduler rackwise = (RackwiseFairScheduler) fairScheduler;
      // Proof that the native path ran, not the fallback.
      System.out.printf("%nrackwise: native active %s, offers %d, steered %d, vetoes %d, "
          + "fallback offers %d, native failures %d%n", rackwise.isNativeActive(),
          rackwise.getRackwiseMetrics().getOffers(),
          rackwise.getRackwiseMetrics().getSteeredOffers(),
          rackwise.getRackwiseMetrics().getVetoes(),
          rackwise.getRackwiseMetrics().getFallbackOffers(),
          rackwise.getRackwiseMetrics().getNativeFailures());
    }
    rm.stop();
  }
}
