package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import io.rackwise.yarn.dp.DpLedger;
import io.rackwise.yarn.testing.StallingFileSystem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.util.ControlledClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic Priority through a real ResourceManager: the children of a {@code dp} parent get the
 * market's shares as FairScheduler weights, FairScheduler fills the cluster by them, and each
 * closed interval charges what the RM's own books say the queues held within their shares. The
 * scheduler's clock is stepped by hand, so intervals close exactly when the test says.
 */
class DynamicPriorityTest {
  private static final String QUEUES = "<queue name=\"users\" type=\"parent\">"
      + "<rackwise><policy>dp</policy></rackwise>"
      + "<queue name=\"alice\"/><queue name=\"bob\"/></queue>";
  private static final List<String> HOSTS = List.of("h1", "h2", "h3", "h4");
  /** Four 8 GB, 8-vcore nodes in units of the 1 GB, 1-vcore minimum allocation. */
  private static final int CLUSTER_UNITS = 32;
  private static final long INTERVAL_MS = 20_000;
  private static final String ALICE = "root.users.alice";
  private static final String BOB = "root.users.bob";

  /** Our scheduler on the four hosts, with the market of {@code QUEUES}. */
  private static MockRackCluster startMarket(Path dir) throws Exception {
    return new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), Map.of(), Map.of("/r1", HOSTS), dir);
  }

  /** A clock the test moves, standing at {@code startMs}, as the scheduler's. */
  private static ControlledClock controlledClock(RackwiseFairScheduler scheduler, long startMs) {
    ControlledClock clock = new ControlledClock();
    clock.setTime(startMs);
    scheduler.setClock(clock);
    return clock;
  }

  @Test
  void spendingOneAndTwoGetAThirdAndTwoThirdsAndPayForWhatTheyHeldWithinThem(@TempDir Path dir)
      throws Exception {
    try (MockRackCluster cluster = startMarket(dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      scheduler.setDpAccount(ALICE, 1000, 1, "admin");
      scheduler.setDpAccount(BOB, 1000, 2, "admin");

      // Alice's AM launch makes the market's first offer: the opening, where only she is active.
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      MockRackCluster.Job bob = cluster.submit("b", BOB, "bob", Set.of(), "h2");
      cluster.ask(alice, 60, HOSTS, 0);
      cluster.ask(bob, 60, HOSTS, 0);
      QueueManager queues = scheduler.getQueueManager();
      assertEquals(1.0f, queues.getQueue(ALICE).getWeight(), "the opening: alice alone active");
      assertEquals(0.0f, queues.getQueue(BOB).getWeight());

      // Interval 1 closes: alice held her AM within her whole share, bob his outside any share.
      clock.tickMsec(INTERVAL_MS);
      cluster.heartbeat("h3", alice, bob);
      MarketInterval first = scheduler.dpLedger().latestInterval("root.users").orElseThrow();
      assertEquals(1, first.sequence());
      assertEquals(3.0, first.price());
      assertEquals(List.of(ALICE, BOB), first.queues().stream().map(QueueAccount::queue).toList());
      assertEquals(1.0, first.queues().get(0).charge(), "alice: her AM, 1 unit at 1");
      assertEquals(0.0, first.queues().get(1).charge(), "bob: no share, so nothing charged");
      assertEquals(1 / 3.0, first.queues().get(0).share(), 1e-12);
      assertEquals(2 / 3.0, first.queues().get(1).share(), 1e-12);
      assertEquals(1 / 3.0, queues.getQueue(ALICE).getWeight(), 1e-6);
      assertEquals(2 / 3.0, queues.getQueue(BOB).getWeight(), 1e-6);
      // An allocation reload installs the configured weights (1); the market's come back.
      scheduler.reinitialize(cluster.rm.getConfig(), cluster.rm.getRMContext());
      assertEquals(1 / 3.0, queues.getQueue(ALICE).getWeight(), 1e-6, "after a reload");
      assertEquals(2 / 3.0, queues.getQueue(BOB).getWeight(), 1e-6, "after a reload");

      // Saturating demand fills the cluster, one container per heartbeat, by those weights.
      for (int round = 0; round < 12; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, alice, bob);
        }
      }
      long aliceUnits = units(queues, ALICE);
      long bobUnits = units(queues, BOB);
      assertEquals(CLUSTER_UNITS, aliceUnits + bobUnits, "the cluster is full");
      // An equal split (weights not applied) would give each 16; a tolerance of one container.
      assertTrue(Math.abs(aliceUnits - CLUSTER_UNITS / 3.0) <= 1.0, "alice holds " + aliceUnits);
      assertTrue(Math.abs(bobUnits - CLUSTER_UNITS * 2 / 3.0) <= 1.0, "bob holds " + bobUnits);

      // Interval 2 charges each what the RM says it holds, up to its share of the cluster.
      clock.tickMsec(INTERVAL_MS);
      cluster.heartbeat("h1", alice, bob);
      MarketInterval second = scheduler.dpLedger().latestInterval("root.users").orElseThrow();
      assertEquals(2, second.sequence());
      QueueAccount aliceLine = second.queues().get(0);
      QueueAccount bobLine = second.queues().get(1);
      assertEquals(aliceUnits, aliceLine.used());
      assertEquals(bobUnits, bobLine.used());
      assertEquals(Math.min(aliceUnits, CLUSTER_UNITS / 3.0), aliceLine.chargedUnits(), 1e-9);
      assertEquals(Math.min(bobUnits, CLUSTER_UNITS * 2 / 3.0), bobLine.chargedUnits(), 1e-9);
      assertEquals(1 * aliceLine.chargedUnits(), aliceLine.charge(), 1e-9);
      assertEquals(2 * bobLine.chargedUnits(), bobLine.charge(), 1e-9);
      assertEquals(1000 - 1.0 - aliceLine.charge(),
          scheduler.dpLedger().balance(ALICE).orElseThrow().budget(), 1e-9);
      assertEquals(1000 - bobLine.charge(),
          scheduler.dpLedger().balance(BOB).orElseThrow().budget(), 1e-9);
      assertEquals(0L, scheduler.getRackwiseMetrics().getNativeFailures());
      assertTrue(cluster.dispatcherFailures.isEmpty(), cluster.dispatcherFailures.toString());
    }
  }

  @Test
  void spendingOneTwoAndFourHoldTheirSeventhsWithinFivePercentAfterTwoIntervals(
      @TempDir Path dir) throws Exception {
    // 21 nodes of 8 units = 168: the targets 24, 48 and 96 units are whole, and one container
    // (FairScheduler's granularity) is 4.2 % of the smallest, so "within 5 %" is reachable.
    List<String> hosts = new ArrayList<>();
    for (int h = 1; h <= 21; h++) {
      hosts.add("h" + h);
    }
    String queuesXml = QUEUES.replace("<queue name=\"bob\"/>",
        "<queue name=\"bob\"/><queue name=\"carol\"/>");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(queuesXml), Map.of(), Map.of("/r1", hosts), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      List<String> users = List.of("alice", "bob", "carol");
      List<Double> spending = List.of(1.0, 2.0, 4.0);
      MockRackCluster.Job[] jobs = new MockRackCluster.Job[users.size()];
      for (int u = 0; u < users.size(); u++) {
        scheduler.setDpAccount("root.users." + users.get(u), 1e6, spending.get(u), "admin");
        jobs[u] = cluster.submit(users.get(u), "root.users." + users.get(u), users.get(u),
            Set.of(), hosts.get(u));
      }
      // Each asks for more than the whole cluster; until the first close only the opening's
      // shares hold.
      for (MockRackCluster.Job job : jobs) {
        cluster.ask(job, 200, hosts, 0);
      }
      int clusterUnits = hosts.size() * 8;
      QueueManager queues = scheduler.getQueueManager();
      for (int interval = 1; interval <= 2; interval++) {
        clock.tickMsec(INTERVAL_MS);
        for (int round = 0; round < 9; round++) {
          for (String host : hosts) {
            cluster.heartbeat(host, jobs);
          }
        }
      }
      assertEquals(2, scheduler.dpLedger().latestInterval("root.users").orElseThrow()
          .sequence(), "two intervals closed");
      long total = 0;
      for (String user : users) {
        total += units(queues, "root.users." + user);
      }
      assertEquals(clusterUnits, total, "the cluster is full");
      // Relative: |held - target| / target <= 5 %. An equal split (56 each) misses alice's
      // 24 by 133 % and carol's 96 by 42 %.
      for (int u = 0; u < users.size(); u++) {
        long held = units(queues, "root.users." + users.get(u));
        double target = clusterUnits * spending.get(u) / 7;
        assertTrue(Math.abs(held - target) / target <= 0.05,
            users.get(u) + " holds " + held + " units, target " + target);
      }
    }
  }

  @Test
  void aUserOutOfCreditDropsToWeightZeroAndIsNeverChargedBelowZero(@TempDir Path dir)
      throws Exception {
    try (MockRackCluster cluster = startMarket(dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      // Alice's 40 credits pay her half of the 32 units (16 an interval) for about two
      // intervals; bob can pay for ever.
      scheduler.setDpAccount(ALICE, 40, 1, "admin");
      scheduler.setDpAccount(BOB, 1e6, 1, "admin");
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      MockRackCluster.Job bob = cluster.submit("b", BOB, "bob", Set.of(), "h2");
      cluster.ask(alice, 60, HOSTS, 0);
      cluster.ask(bob, 60, HOSTS, 0);
      QueueManager queues = scheduler.getQueueManager();
      int closesAtZero = 0;
      double before = 40;
      for (int interval = 1; interval <= 10 && closesAtZero < 3; interval++) {
        clock.tickMsec(INTERVAL_MS);
        for (int round = 0; round < 12; round++) {
          for (String host : HOSTS) {
            cluster.heartbeat(host, alice, bob);
          }
        }
        QueueAccount line = scheduler.dpLedger().latestInterval("root.users").orElseThrow()
            .queues().get(0);
        assertEquals(ALICE, line.queue());
        assertTrue(line.budget() >= 0, "alice's balance " + line.budget() + " at " + interval);
        assertTrue(line.charge() <= before, "charged " + line.charge() + " of " + before);
        assertEquals(before - line.charge(), line.budget(), 1e-9);
        before = line.budget();
        if (line.budget() == 0) {
          closesAtZero++;
          assertEquals(0.0, line.share(), "no share once out of credit");
          assertEquals(0.0f, queues.getQueue(ALICE).getWeight(), "alice's weight at 0 credits");
          assertEquals(1.0f, queues.getQueue(BOB).getWeight(), "bob's weight: the whole market");
        }
      }
      assertEquals(3, closesAtZero, "alice reached 0 credits and stayed there for 3 closes");
      assertEquals(0.0, scheduler.dpLedger().balance(ALICE).orElseThrow().budget());
    }
  }

  @Test
  void aRaisedSpendingGetsItsShareWithinTwoIntervalsPlusThePreemptionTimeout(@TempDir Path dir)
      throws Exception {
    long preemptionTimeoutMs = 2_000;
    String allocations = MockRackCluster.allocationFile(QUEUES).replace("</allocations>",
        "<defaultFairSharePreemptionTimeout>" + preemptionTimeoutMs / 1000
            + "</defaultFairSharePreemptionTimeout>"
            + "<defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>"
            + "</allocations>");
    Map<String, String> preemption = Map.of(FairSchedulerConfiguration.PREEMPTION, "true",
        // Real milliseconds between marking a container and killing it: kept short so the
        // test waits on FairScheduler's clock-driven timeout, not on this.
        FairSchedulerConfiguration.WAIT_TIME_BEFORE_KILL, "50");
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class, allocations,
        preemption, Map.of("/r1", HOSTS), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      scheduler.setDpAccount(ALICE, 1e6, 1, "admin");
      scheduler.setDpAccount(BOB, 1e6, 1, "admin");
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      MockRackCluster.Job bob = cluster.submit("b", BOB, "bob", Set.of(), "h2");
      cluster.ask(alice, 60, HOSTS, 0);
      cluster.ask(bob, 60, HOSTS, 0);
      clock.tickMsec(INTERVAL_MS);
      for (int round = 0; round < 12; round++) {
        for (String host : HOSTS) {
          cluster.heartbeat(host, alice, bob);
        }
      }
      QueueManager queues = scheduler.getQueueManager();
      assertEquals(CLUSTER_UNITS / 2, units(queues, BOB), "equal spending: half each");

      // Bob triples his spending: 3/4 of the 32 units, 24, is his new share.
      long changedAt = clock.getTime();
      scheduler.setDpAccount(BOB, 1e6, 3, "admin");
      long deadline = changedAt + 2 * INTERVAL_MS + preemptionTimeoutMs;
      // The scheduler's clock advances a second per round and stops at the bound: a share that
      // needed more of FairScheduler's time than two intervals plus its preemption timeout
      // would never be reached, and the wait would run out. (The kill after marking a
      // container waits real milliseconds, which the rounds give it.) The mock AMs never release
      // a container, so only preemption can take alice's back.
      await("bob reaches 3/4 of the cluster").atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(50)).until(() -> {
            if (clock.getTime() < deadline) {
              clock.tickMsec(1_000);
            }
            for (String host : HOSTS) {
              cluster.heartbeat(host, alice, bob);
            }
            return Math.abs(units(queues, BOB) - 24) / 24.0 <= 0.05;
          });
      assertEquals(0.75, queues.getQueue(BOB).getWeight(), 1e-6);
    }
  }

  @Test
  void aNegativeOrNonNumericAccountIsRefusedNamingQueueAndValue(@TempDir Path dir)
      throws Exception {
    try (MockRackCluster cluster = startMarket(dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      scheduler.setDpAccount(ALICE, 50, 1, "admin");
      IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
          () -> scheduler.setDpAccount(ALICE, -5, 1, "admin"));
      assertEquals("Dynamic Priority account of queue root.users.alice: budget -5.0 refused "
          + "(required: a finite number >= 0)", negative.getMessage());
      IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
          () -> scheduler.setDpAccount(ALICE, 5, Double.NaN, "admin"));
      assertTrue(nan.getMessage().contains("spending NaN refused"), nan.getMessage());
      assertEquals(50.0, scheduler.dpLedger().balance(ALICE).orElseThrow().budget(),
          "the last good account stays");
    }
  }

  @Test
  void aRestartedResourceManagerResumesTheAccountsAndChargesFromTheLedger(@TempDir Path dir)
      throws Exception {
    Map<String, String> stateDir = Map.of("yarn.scheduler.rackwise.state.dir",
        dir.resolve("state").toString());
    double aliceBefore;
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), stateDir, Map.of("/r1", HOSTS), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      scheduler.setDpAccount(ALICE, 1000, 1, "admin");
      // Bob cannot pay a single unit: after a restart he must still be broke.
      scheduler.setDpAccount(BOB, 0.5, 1, "admin");
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      clock.tickMsec(INTERVAL_MS);
      cluster.heartbeat("h2", alice);
      aliceBefore = scheduler.dpLedger().balance(ALICE).orElseThrow().budget();
      assertEquals(999.0, aliceBefore, "charged her AM's unit at 1");
    }
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), stateDir, Map.of("/r1", HOSTS), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      assertEquals(new DpLedger.Balance(aliceBefore, 1),
          scheduler.dpLedger().balance(ALICE).orElseThrow());
      assertEquals(new DpLedger.Balance(0.5, 1), scheduler.dpLedger().balance(BOB).orElseThrow());
      // The core got them: once an interval closes with both active, only alice can pay (a
      // new account would hold the market's default budget of 0, and neither could).
      ControlledClock clock = controlledClock(scheduler, 5_000_000);
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      MockRackCluster.Job bob = cluster.submit("b", BOB, "bob", Set.of(), "h2");
      cluster.ask(alice, 4, HOSTS, 0);
      cluster.ask(bob, 4, HOSTS, 0);
      clock.tickMsec(INTERVAL_MS);
      cluster.heartbeat("h3", alice, bob);
      MarketInterval resumed = scheduler.dpLedger().latestInterval("root.users").orElseThrow();
      assertEquals(List.of(1.0, 0.0),
          resumed.queues().stream().map(QueueAccount::share).toList());
      QueueManager queues = scheduler.getQueueManager();
      assertEquals(1.0f, queues.getQueue(ALICE).getWeight());
      assertEquals(0.0f, queues.getQueue(BOB).getWeight());
    }
  }

  @Test
  void aHeldLedgerFileSystemDoesNotHoldUpTheHeartbeatThatClosesAnInterval(@TempDir Path dir)
      throws Exception {
    Map<String, String> conf = new HashMap<>(StallingFileSystem.CONF);
    conf.put("yarn.scheduler.rackwise.state.dir",
        StallingFileSystem.path(dir.resolve("state")).toString());
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), conf, Map.of("/r1", HOSTS), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      scheduler.setDpAccount(ALICE, 1000, 1, "admin");
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      cluster.ask(alice, 4, HOSTS, 0);
      long before = scheduler.dpLedger().lastRecord();
      StallingFileSystem.hold();
      try {
        clock.tickMsec(INTERVAL_MS);
        // A ledger written on the offer path would wait here until the release: forever.
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> cluster.heartbeat("h2", alice),
            "the heartbeat waited for the ledger's file system");
        assertEquals(1, scheduler.dpLedger().latestInterval("root.users").orElseThrow()
            .sequence(), "the interval closed on that heartbeat");
        assertEquals(999.0, scheduler.dpLedger().balance(ALICE).orElseThrow().budget(),
            "charged at once in memory");
        awaitTrue(() -> StallingFileSystem.appendsHeld() == 1,
            "the ledger's writer waits at the file system");
        assertEquals(before, scheduler.dpLedger().lastRecord(), "not yet written");
      } finally {
        StallingFileSystem.release();
      }
      awaitTrue(() -> scheduler.dpLedger().lastRecord() == before + 1,
          "written once the file system answers");
    }
  }

  @Test
  void aMarketWithAChildThatIsNotAUserQueueIsRefusedAtStartAndAtReloadTheLastGoodStays(
      @TempDir Path dir) throws Exception {
    String team = "<queue name=\"team\" type=\"parent\"><queue name=\"carol\"/></queue>";
    String refusedReason = "queue root.users.team: a child of the Dynamic Priority market "
        + "root.users must be one user's leaf queue, but it is a parent queue";
    Files.createDirectories(dir.resolve("start"));
    Exception atStart = assertThrows(Exception.class, () -> new MockRackCluster(
        RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES.replace("</queue>", team + "</queue>")), Map.of(),
        Map.of("/r1", HOSTS), dir.resolve("start")).close());
    StringBuilder messages = new StringBuilder();
    for (Throwable t = atStart; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    assertTrue(messages.toString().contains(refusedReason), messages.toString());

    Files.createDirectories(dir.resolve("reload"));
    try (MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), Map.of(), Map.of("/r1", HOSTS),
        dir.resolve("reload"))) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      ControlledClock clock = controlledClock(scheduler, 1_000_000);
      scheduler.setDpAccount(ALICE, 1000, 1, "admin");
      MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
      cluster.ask(alice, 4, HOSTS, 0);
      // The refused file would also lengthen the interval to a minute: if it were taken, the
      // interval after the first close would not close 20 s later.
      String refused = QUEUES.replace("</queue>", team + "</queue>")
          .replace("<policy>dp</policy>", "<policy>dp</policy><intervalMs>60000</intervalMs>");
      Files.write(dir.resolve("reload").resolve("fair-scheduler.xml"),
          MockRackCluster.allocationFile(refused).getBytes(StandardCharsets.UTF_8));
      scheduler.reinitialize(cluster.rm.getConfig(), cluster.rm.getRMContext());
      for (int close = 0; close < 2; close++) {
        clock.tickMsec(INTERVAL_MS);
        cluster.heartbeat("h2", alice);
      }
      assertEquals(2, scheduler.dpLedger().latestInterval("root.users").orElseThrow()
          .sequence(), "the last good market (20 s intervals) stays in force");
      assertEquals(1.0f, scheduler.getQueueManager().getQueue(ALICE).getWeight());
    }
  }

  /** The queue's resource units as the RM books them (1 GB each). */
  private static long units(QueueManager queues, String queue) {
    return queues.getQueue(queue).getResourceUsage().getMemorySize() / MockRackCluster.TASK_MB;
  }
}
