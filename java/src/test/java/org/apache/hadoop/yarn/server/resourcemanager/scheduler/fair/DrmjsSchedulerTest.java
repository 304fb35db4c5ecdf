package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.metrics.DrmjsNodeScores;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.hadoop.metrics2.AbstractMetric;
import org.apache.hadoop.metrics2.MetricsRecord;
import org.apache.hadoop.metrics2.MetricsTag;
import org.apache.hadoop.metrics2.impl.MetricsCollectorImpl;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.util.ControlledClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DRMJS inside a real ResourceManager (MockRM), native core required, on four nodes. h4's
 * NodeManager reports 6 of its 8 vcores busy with every heartbeat, and the first job's map on h4
 * takes 50 s where the others take 10 s (the scheduler's clock is stepped by hand). h4 then
 * scores Low for maps, and the second job's twelve maps go to h1..h3 while they have room:
 * stock FairScheduler, one container per heartbeat, would give each node three. Every task of
 * both jobs then runs and both jobs finish.
 */
class DrmjsSchedulerTest {
  private static final List<String> HOSTS = List.of("h1", "h2", "h3", "h4");
  private static final String SLOW = "h4";

  @TempDir
  Path workDir;

  @Test
  void aBusyNodeWithSlowMapsGetsNoMapsWhileTheOthersHaveRoomAndEveryJobFinishes()
      throws Exception {
    Map<String, List<String>> racks = new LinkedHashMap<>();
    racks.put("/r1", List.of("h1", "h2"));
    racks.put("/r2", List.of("h3", "h4"));
    String allocation = MockRackCluster.allocationFile(
        "<queue name=\"dr\"><rackwise><policy>drmjs</policy>"
            // The scheduler's clock jumps 50 s below; the guard would lift DRMJS's hold on h4
            // after 30 s. This test is about the hold itself (the core's tests cover the guard).
            + "<starvationGuardMs>3600000</starvationGuardMs></rackwise></queue>");
    Map<String, String> settings = Map.of("yarn.scheduler.rackwise.native.required", "true");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class, allocation,
        settings, racks, workDir)) {
      ControlledClock clock = new ControlledClock();
      clock.setTime(1_000_000);
      cluster.rackwise().setClock(clock);
      cluster.reportedUtilization.put(SLOW, ResourceUtilization.newInstance(6144, 0, 6.0f));

      MockRackCluster.Job first = cluster.submit("first", "dr", "alice", Set.of(), "h1");
      cluster.ask(first, 4, HOSTS, 0);
      for (String host : HOSTS) {
        cluster.heartbeat(host, first);
      }
      assertEquals(List.of(1L, 1L, 1L, 1L), mapsPerHost(first), "one map of the first job each");
      clock.tickMsec(10_000);
      complete(cluster, first, MAP, host -> !host.equals(SLOW));
      clock.tickMsec(40_000);
      complete(cluster, first, MAP, SLOW::equals);

      MockRackCluster.Job second = cluster.submit("second", "dr", "alice", Set.of(), "h1");
      cluster.ask(second, 12, HOSTS, 0);
      for (int round = 0; round < 4; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, first, second);
        }
      }
      assertEquals(List.of(4L, 4L, 4L, 0L), mapsPerHost(second),
          "h4 (6 of 8 vcores busy, maps 5x slower) gets none of the maps while h1..h3 have room");
      assertSlowNodeInMetrics(cluster.rackwise().getRackwiseMetrics().drmjsNodeScores());

      clock.tickMsec(10_000);
      complete(cluster, second, MAP, host -> true);
      cluster.ask(second, 0, List.of(), 2);
      for (int round = 0; round < 2 && second.count(REDUCE) < 2; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, first, second);
        }
      }
      assertEquals(2, second.count(REDUCE), "the second job's reduces run");
      clock.tickMsec(10_000);
      complete(cluster, second, REDUCE, host -> true);
      for (MockRackCluster.Job job : List.of(first, second)) {
        MockRM.finishAMAndVerifyAppState(job.app, cluster.rm, cluster.nodes.get("h1"), job.am);
      }

      RackwiseMetrics metrics = cluster.rackwise().getRackwiseMetrics();
      assertTrue(metrics.isNativeActive(), "the native core steered throughout");
      assertEquals(0, metrics.getNativeFailures());
      assertEquals(0, metrics.getFallbackOffers());
      assertEquals(List.of(), cluster.dispatcherFailures);
    }
  }

  /**
   * The host-class file reaches the core's CPU term through the scheduler: h1 runs at 2, h3 and
   * h4 at 0.5, h2 matches no rule (1). Relative to the fastest: 1, 0.5, 0.25, 0.25.
   */
  @Test
  void theHostClassFileGivesEachNodeItsRelativeCpuSpeed() throws Exception {
    Path hostClasses = workDir.resolve("host-classes");
    Files.writeString(hostClasses, "# host or pattern  speed\nh1 2.0\nh[34] 0.5\n");
    Map<String, List<String>> racks = Map.of("/r1", HOSTS);
    String allocation = MockRackCluster.allocationFile(
        "<queue name=\"dr\"><rackwise><policy>drmjs</policy></rackwise></queue>");
    Map<String, String> settings = Map.of("yarn.scheduler.rackwise.native.required", "true",
        "yarn.scheduler.rackwise.feed.host-class-file", hostClasses.toString(),
        "yarn.scheduler.rackwise.feed.poll-interval-ms", "10");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class, allocation,
        settings, racks, workDir)) {
      awaitTrue(() -> cluster.rackwise().hostClasses().filesSent() == 1,
          "the host-class file is read");
      MockRackCluster.Job job = cluster.submit("job", "dr", "alice", Set.of(), "h1");
      cluster.ask(job, 4, HOSTS, 0);
      cluster.heartbeat("h2", job);
      DrmjsNodeScores scores = cluster.rackwise().getRackwiseMetrics().drmjsNodeScores();
      List<Double> speeds = new ArrayList<>();
      for (String host : HOSTS) {
        speeds.add(scores.score("root.dr", host + ":1234").cpuSpeed());
      }
      assertEquals(List.of(1.0, 0.5, 0.25, 0.25), speeds);
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  /**
   * The board behind that, as metrics2 publishes it: h4's CPU is 1 × (1 − 6/8) = 0.25, its
   * map influence (and, without a feed, its disk term) 10 s / 20 s ÷ 50 s / 20 s = 0.2, so
   * MPS = (0.25 + 0.2 + 0.2) / 3 against 1 on the other nodes: Low.
   */
  private static void assertSlowNodeInMetrics(DrmjsNodeScores scores) {
    MetricsCollectorImpl collector = new MetricsCollectorImpl();
    scores.getMetrics(collector, true);
    Map<String, MetricsRecord> byNode = new LinkedHashMap<>();
    for (MetricsRecord record : collector.getRecords()) {
      assertEquals("root.dr", tag(record, "Queue"));
      byNode.put(tag(record, "Node"), record);
    }
    assertEquals(Set.of("h1:1234", "h2:1234", "h3:1234", "h4:1234"), byNode.keySet());
    MetricsRecord slow = byNode.get("h4:1234");
    assertEquals("Low", tag(slow, "MapClass"));
    assertEquals("High", tag(slow, "ReduceClass"));
    assertEquals("Observed", tag(slow, "DiskSource"));
    assertEquals(0.25, gauge(slow, "CpuFree"), 1e-9);
    assertEquals(1.0, gauge(slow, "CpuSpeed"), 1e-9);
    assertEquals(0.2, gauge(slow, "MapInfluence"), 1e-9);
    assertEquals(0.65 / 3, gauge(slow, "MapScore"), 1e-9);
    assertEquals("High", tag(byNode.get("h1:1234"), "MapClass"));
  }

  private static String tag(MetricsRecord record, String name) {
    return record.tags().stream().filter(t -> t.name().equals(name)).findFirst()
        .map(MetricsTag::value).orElse(null);
  }

  private static double gauge(MetricsRecord record, String name) {
    for (AbstractMetric metric : record.metrics()) {
      if (metric.name().equals(name)) {
        return metric.value().doubleValue();
      }
    }
    throw new AssertionError(name + " not in " + record);
  }

  /** The job's maps on h1..h4, in that order. */
  private static List<Long> mapsPerHost(MockRackCluster.Job job) {
    List<Long> counts = new ArrayList<>();
    for (String host : HOSTS) {
      counts.add(job.containers.stream().filter(c -> c.getPriority().getPriority() == MAP
          && c.getNodeId().getHost().equals(host)).count());
    }
    return counts;
  }

  /** Completes the job's containers of {@code priority} on the hosts {@code where} accepts. */
  private static void complete(MockRackCluster cluster, MockRackCluster.Job job, int priority,
      Predicate<String> where) throws Exception {
    List<Container> done = new ArrayList<>();
    for (Container c : job.containers) {
      if (c.getPriority().getPriority() == priority && where.test(c.getNodeId().getHost())) {
        done.add(c);
      }
    }
    for (Container c : done) {
      cluster.nodes.get(c.getNodeId().getHost()).nodeHeartbeat(job.am.getApplicationAttemptId(),
          c.getId().getContainerId(), ContainerState.COMPLETE);
      cluster.rm.drainEvents();
    }
  }
}
