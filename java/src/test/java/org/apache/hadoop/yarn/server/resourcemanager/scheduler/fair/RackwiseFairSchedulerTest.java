package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.TASK_MB;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RackwiseFairScheduler inside a real ResourceManager (MockRM) on two racks, with the native core
 * required: a fallback to stock FairScheduler fails these tests instead of passing them.
 */
class RackwiseFairSchedulerTest {
  private static final Map<String, List<String>> TWO_RACKS = new LinkedHashMap<>();

  static {
    TWO_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    TWO_RACKS.put("/r2", Arrays.asList("h3", "h4"));
  }

  private static final String STEERED_AND_PLAIN = MockRackCluster.allocationFile(
      "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy>"
          // Not about the locality wait (its own tests are in the core): no wait on the
          // real clock between this test's heartbeats. These cases check Figure 3's NASS
          // categories across a user's jobs, so NASS orders the jobs (jobOrder=nass).
          + "<localityWaitMs>0</localityWaitMs><rackWaitMs>0</rackWaitMs>"
          + "<jobOrder>nass</jobOrder></rackwise></queue>\n"
          + "<queue name=\"plain\"/>");

  @TempDir
  Path workDir;

  private MockRackCluster start(Class<?> scheduler, String allocation, String... settings)
      throws Exception {
    Map<String, String> extra = new LinkedHashMap<>();
    extra.put("yarn.scheduler.rackwise.native.required", "true");
    for (int i = 0; i < settings.length; i += 2) {
      extra.put(settings[i], settings[i + 1]);
    }
    return new MockRackCluster(scheduler, allocation, extra, TWO_RACKS, workDir);
  }

  static Set<String> ratio(double value) {
    return Collections.singleton("rackwise.shuffle-ratio=" + value);
  }

  /**
   * A job of the unsteered queue shuffles across racks: its map finished on rack 1 and its
   * reduce runs on rack 2, so the model sees rack 1's 100 Mbit/s link carrying a 200 Mbit/s
   * fetch: rack 1 is saturated for the next ~27 s.
   */
  static void saturateRackOne(MockRackCluster cluster) throws Exception {
    MockRackCluster.Job bulk = cluster.submit("bulk", "plain", "bob", ratio(5), "h4");
    cluster.ask(bulk, 1, List.of("h1"), 0);
    cluster.heartbeat("h1", bulk);
    assertEquals(List.of(MAP), bulk.priorities());
    cluster.nodes.get("h1").nodeHeartbeat(bulk.am.getApplicationAttemptId(),
        bulk.containers.get(0).getId().getContainerId(), ContainerState.COMPLETE);
    cluster.rm.drainEvents();
    cluster.ask(bulk, 0, List.of(), 1);
    cluster.heartbeat("h3", bulk);
    assertEquals(List.of(MAP, REDUCE), bulk.priorities());
  }

  @Test
  void saturatedRackPlacesTheHeavyJobsMapsBeforeItsReduce() throws Exception {
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN,
        "yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "100",
        // Sample on every offer: the stepped heartbeats come milliseconds apart.
        "yarn.scheduler.rackwise.netsat.period-ms", "0",
        "yarn.scheduler.rackwise.netsat.smoothing", "1")) {
      saturateRackOne(cluster);
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
      cluster.ask(heavy, 3, List.of("h1", "h2"), 1);
      for (String host : List.of("h1", "h2", "h1")) {
        cluster.heartbeat(host, heavy);
      }
      assertEquals(List.of(MAP, MAP, MAP), heavy.priorities(),
          "under saturation every map goes before the heavy job's reduce");
      cluster.heartbeat("h2", heavy);
      assertEquals(REDUCE, heavy.priorities().get(3), "the reduce once no map is left");
      assertTrue(cluster.rackwise().getRackwiseMetrics().getSteeredContainers() >= 4);
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  /** The same decision driven by an operator's feed instead of the model. */
  @Test
  void aFeedReportingRackOneSaturatedPutsTheHeavyJobsMapsFirst() throws Exception {
    Path feed = workDir.resolve("rack-load.json");
    Files.write(feed, ("{\"time_ms\": " + System.currentTimeMillis()
        + ", \"racks\": {\"/r1\": 0.95}}").getBytes(StandardCharsets.UTF_8));
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN,
        "yarn.scheduler.rackwise.netsat.source", "feed",
        "yarn.scheduler.rackwise.feed.file", feed.toString(),
        "yarn.scheduler.rackwise.netsat.period-ms", "0")) {
      // The feed thread reads the file as it starts and queues the figures for the next offer.
      await().atMost(Duration.ofSeconds(10))
          .until(() -> cluster.rackwise().feed().filesSent() == 1);
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
      cluster.ask(heavy, 2, List.of("h1", "h2"), 1);
      cluster.heartbeat("h1", heavy);
      cluster.heartbeat("h2", heavy);
      assertEquals(List.of(MAP, MAP), heavy.priorities());
      cluster.heartbeat("h1", heavy);
      assertEquals(REDUCE, heavy.priorities().get(2));
    }
  }

  /**
   * The same decision from a version-2 feed giving only host figures: rack 1's hosts together
   * send 950 of its 1000 Mbit/s across racks.
   */
  @Test
  void aVersionTwoFeedOfHostFiguresSaturatingRackOnePutsTheHeavyJobsMapsFirst()
      throws Exception {
    Path feed = workDir.resolve("host-load.json");
    Files.write(feed, ("{\"version\": 2, \"time_ms\": " + System.currentTimeMillis()
        + ", \"hosts\": {\"h1\": {\"cross_rack_mbps\": 500, \"cpu_speed\": 1.0}, "
        + "\"h2\": {\"cross_rack_mbps\": 450, \"disk_utilization\": 0.2}}}")
        .getBytes(StandardCharsets.UTF_8));
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN,
        "yarn.scheduler.rackwise.netsat.source", "feed",
        "yarn.scheduler.rackwise.feed.file", feed.toString(),
        "yarn.scheduler.rackwise.netsat.period-ms", "0")) {
      await().atMost(Duration.ofSeconds(10))
          .until(() -> cluster.rackwise().feed().filesSent() == 1);
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
      cluster.ask(heavy, 2, List.of("h1", "h2"), 1);
      cluster.heartbeat("h1", heavy);
      cluster.heartbeat("h2", heavy);
      assertEquals(List.of(MAP, MAP), heavy.priorities());
      cluster.heartbeat("h1", heavy);
      assertEquals(REDUCE, heavy.priorities().get(2));
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  @Test
  void stockFairSchedulerPlacesTheReduceFirstInTheSameScenario() throws Exception {
    try (MockRackCluster cluster = start(FairScheduler.class, STEERED_AND_PLAIN)) {
      saturateRackOne(cluster);
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
      cluster.ask(heavy, 3, List.of("h1", "h2"), 1);
      cluster.heartbeat("h1", heavy);
      assertEquals(List.of(REDUCE), heavy.priorities(),
          "FairScheduler tries priority 10 (reduce) before 20 (map)");
    }
  }

  @Test
  void unsaturatedRackPlacesHeavyReducesFirstThenLightReducesThenMaps() throws Exception {
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN)) {
      MockRackCluster.Job light = cluster.submit("light", "sw", "alice", ratio(0.2), "h4");
      MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
      cluster.ask(light, 1, List.of("h1"), 1);
      cluster.ask(heavy, 1, List.of("h1"), 1);
      List<String> order = new ArrayList<>();
      // Both jobs' splits are on h1, so SAMP prefers rack 1 for both and SARP gives the heavy
      // job's reduce its quota there: offer h2, on rack 1 but holding no split.
      for (int i = 0; i < 4; i++) {
        int lightBefore = light.containers.size();
        cluster.heartbeat("h2", light, heavy);
        MockRackCluster.Job got = light.containers.size() > lightBefore ? light : heavy;
        order.add((got == light ? "light:" : "heavy:")
            + got.containers.get(got.containers.size() - 1).getPriority().getPriority());
      }
      assertEquals(List.of("heavy:10", "light:10", "light:20", "heavy:20"), order,
          "NASS unsaturated: heavy reduces, other reduces, then maps by job arrival");
    }
  }

  /**
   * FairScheduler never offers a node to an app that blacklists it, so that app's entry must
   * not head the plan: NASS ranks the heavy job's reduce before the light job's, and with the
   * heavy job blacklisting h2 the light job's reduce takes h2 instead of the queue leaving it
   * idle. Without the blacklist the heavy job's reduce takes it, as NASS ranks.
   */
  @Test
  void anAppBlacklistingTheOfferedNodeDoesNotVetoTheAppRankedAfterIt() throws Exception {
    for (boolean blacklisted : new boolean[] {false, true}) {
      try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN)) {
        MockRackCluster.Job light = cluster.submit("light", "sw", "alice", ratio(0.2), "h4");
        MockRackCluster.Job heavy = cluster.submit("heavy", "sw", "alice", ratio(3), "h4");
        cluster.ask(light, 0, List.of(), 1);
        cluster.ask(heavy, 0, List.of(), 1);
        if (blacklisted) {
          heavy.am.allocate(AllocateRequest.newInstance(0, 0F, List.of(), List.of(),
              ResourceBlacklistRequest.newInstance(List.of("h2"), List.of())));
          cluster.rm.drainEvents();
        }
        cluster.heartbeat("h2", light, heavy);
        assertEquals(blacklisted ? List.of(REDUCE) : List.of(), light.priorities(),
            "light job, heavy job blacklisting h2: " + blacklisted);
        assertEquals(blacklisted ? List.of() : List.of(REDUCE), heavy.priorities(),
            "heavy job, blacklisting h2: " + blacklisted);
      }
    }
  }

  /**
   * Design A keeps queue choice FairScheduler's: the same jobs on the same heartbeats end with
   * the same per-queue usage as under stock FairScheduler, within one container.
   */
  @Test
  void queueUsageOverARunMatchesStockFairScheduler() throws Exception {
    long[] rackwise = runTwoQueueWorkload(RackwiseFairScheduler.class);
    long[] stock = runTwoQueueWorkload(FairScheduler.class);
    assertTrue(Math.abs(rackwise[0] - stock[0]) <= TASK_MB,
        "root.sw: rackwise " + rackwise[0] + " MB vs stock " + stock[0] + " MB");
    assertTrue(Math.abs(rackwise[1] - stock[1]) <= TASK_MB,
        "root.plain: rackwise " + rackwise[1] + " MB vs stock " + stock[1] + " MB");
    assertTrue(rackwise[0] > 4 * TASK_MB && rackwise[1] > 4 * TASK_MB, "both queues ran");
  }

  private long[] runTwoQueueWorkload(Class<?> scheduler) throws Exception {
    Path dir = Files.createTempDirectory(workDir, scheduler.getSimpleName());
    try (MockRackCluster cluster = new MockRackCluster(scheduler, STEERED_AND_PLAIN,
        Map.of("yarn.scheduler.rackwise.native.required", "true"), TWO_RACKS, dir)) {
      MockRackCluster.Job[] jobs = {
          cluster.submit("a1", "sw", "alice", ratio(3), "h1"),
          cluster.submit("a2", "sw", "alice", ratio(0.5), "h2"),
          cluster.submit("p1", "plain", "bob", ratio(3), "h3"),
          cluster.submit("p2", "plain", "bob", ratio(0.5), "h4")};
      cluster.ask(jobs[0], 10, List.of("h1", "h3"), 2);
      cluster.ask(jobs[1], 10, List.of("h2", "h4"), 2);
      cluster.ask(jobs[2], 10, List.of("h1", "h2"), 2);
      cluster.ask(jobs[3], 10, List.of("h3", "h4"), 2);
      List<String> hosts = List.of("h1", "h2", "h3", "h4");
      for (int i = 0; i < 24; i++) {
        cluster.heartbeat(hosts.get(i % hosts.size()), jobs);
      }
      FairScheduler fs = (FairScheduler) cluster.rm.getResourceScheduler();
      QueueManager queues = fs.getQueueManager();
      return new long[] {
          queues.getLeafQueue("root.sw", false).getResourceUsage().getMemorySize(),
          queues.getLeafQueue("root.plain", false).getResourceUsage().getMemorySize()};
    }
  }

  @Test
  void anInvalidRackwiseElementStopsTheResourceManagerWithItsNameValueAndReason() {
    String bad = MockRackCluster.allocationFile(
        "<queue name=\"sw\"><rackwise><policy>shufflewatch</policy></rackwise></queue>");
    Exception failure = assertThrows(Exception.class,
        () -> start(RackwiseFairScheduler.class, bad).close());
    String message = rootMessage(failure);
    assertTrue(message.contains("queue root.sw <rackwise><policy>"), message);
    assertTrue(message.contains("'shufflewatch'"), message);
    assertTrue(message.contains("expected one of: none, shufflewatcher"), message);
  }

  @Test
  void theShippedExampleAllocationFileStartsTheResourceManager() throws Exception {
    String shipped = new String(Files.readAllBytes(java.nio.file.Paths.get("..", "conf",
        "fair-scheduler.xml")), StandardCharsets.UTF_8);
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, shipped)) {
      assertTrue(cluster.rackwise().isNativeActive());
    }
  }

  @Test
  void aBadYarnSiteValueStopsTheResourceManagerWithItsKey() {
    Exception failure = assertThrows(Exception.class, () -> start(RackwiseFairScheduler.class,
        STEERED_AND_PLAIN, "yarn.scheduler.rackwise.netsat.threshold", "eighty").close());
    String message = rootMessage(failure);
    assertTrue(message.contains("yarn.scheduler.rackwise.netsat.threshold: value 'eighty' is "
        + "not a number"), message);
  }

  @Test
  void reloadingTheAllocationFileSwitchesSteeringOffAndABadReloadKeepsTheLastGood()
      throws Exception {
    try (MockRackCluster cluster = start(RackwiseFairScheduler.class, STEERED_AND_PLAIN)) {
      MockRackCluster.Job job = cluster.submit("j", "sw", "alice", ratio(3), "h4");
      cluster.ask(job, 20, List.of("h1"), 0);
      RackwiseFairScheduler scheduler = cluster.rackwise();
      long steered = offersSteeredAfterHeartbeat(cluster, job);
      assertTrue(steered > 0, "the sw queue is steered");

      reload(cluster, "<queue name=\"sw\"><rackwise><policy>nonsense</policy></rackwise>"
          + "</queue><queue name=\"plain\"/>");
      assertTrue(offersSteeredAfterHeartbeat(cluster, job) > 0,
          "a refused reload keeps ShuffleWatcher on");

      reload(cluster, "<queue name=\"sw\"><rackwise><policy>none</policy></rackwise></queue>"
          + "<queue name=\"plain\"/>");
      assertEquals(0, offersSteeredAfterHeartbeat(cluster, job),
          "policy none hands the queue back to FairScheduler");
      assertTrue(scheduler.isNativeActive());
    }
  }

  private long offersSteeredAfterHeartbeat(MockRackCluster cluster, MockRackCluster.Job job)
      throws Exception {
    long before = cluster.rackwise().getRackwiseMetrics().getSteeredOffers();
    cluster.heartbeat("h2", job);
    return cluster.rackwise().getRackwiseMetrics().getSteeredOffers() - before;
  }

  private void reload(MockRackCluster cluster, String queues) throws Exception {
    Files.write(workDir.resolve("fair-scheduler.xml"),
        MockRackCluster.allocationFile(queues).getBytes(StandardCharsets.UTF_8));
    MockRM rm = cluster.rm;
    rm.getResourceScheduler().reinitialize(rm.getConfig(), rm.getRMContext());
  }

  private static String rootMessage(Throwable failure) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }
}
