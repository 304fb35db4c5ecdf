package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RackwiseFairScheduler lets FairScheduler add each attempt and then swaps in its own attempt;
 * the queue, the max-running-apps enforcer and the queue metrics must end exactly as stock
 * FairScheduler leaves them. Each assertion runs against both schedulers, so the stock one
 * shows the numbers are FairScheduler's own.
 */
class AttemptBookkeepingTest {
  private static final Map<String, List<String>> ONE_RACK = new LinkedHashMap<>();

  static {
    ONE_RACK.put("/r1", Arrays.asList("h1", "h2"));
  }

  @TempDir
  Path workDir;

  /**
   * A queue that runs one app at a time: the second app waits non-runnable, and becomes
   * runnable when the first is killed. A stock attempt left behind in the enforcer or the queue
   * would make the enforcer promote that one (or count the user twice) instead.
   */
  @ParameterizedTest
  @ValueSource(classes = {FairScheduler.class, RackwiseFairScheduler.class})
  void theSwappedAttemptIsTheOneTheQueueAndTheEnforcerHold(Class<?> schedulerClass)
      throws Exception {
    try (MockRackCluster cluster = new MockRackCluster(schedulerClass,
        MockRackCluster.allocationFile("<queue name=\"one\"><maxRunningApps>1</maxRunningApps>"
            + "</queue>"),
        Map.of("yarn.scheduler.rackwise.native.required",
            String.valueOf(schedulerClass == RackwiseFairScheduler.class)),
        ONE_RACK, workDir)) {
      FairScheduler scheduler = (FairScheduler) cluster.rm.getResourceScheduler();
      RMApp first = submit(cluster, "first");
      RMApp second = submit(cluster, "second");
      FSLeafQueue queue = scheduler.getQueueManager().getLeafQueue("root.one", false);

      assertEquals(1, queue.getNumRunnableApps());
      assertEquals(1, queue.getNumNonRunnableApps());
      assertEquals(2, queue.getMetrics().getAppsSubmitted(), "each attempt counted once");
      FSAppAttempt firstAttempt = attemptOf(scheduler, first);
      FSAppAttempt secondAttempt = attemptOf(scheduler, second);
      assertTrue(queue.isRunnableApp(firstAttempt), "the attempt the app holds runs");
      assertTrue(queue.isNonRunnableApp(secondAttempt), "the attempt the app holds waits");

      cluster.rm.killApp(first.getApplicationId());
      cluster.rm.waitForState(first.getApplicationId(), RMAppState.KILLED);
      await().atMost(Duration.ofSeconds(20))
          .until(() -> queue.getNumRunnableApps() == 1 && queue.getNumNonRunnableApps() == 0);
      assertSame(secondAttempt, attemptOf(scheduler, second));
      assertTrue(queue.isRunnableApp(secondAttempt), "the waiting attempt was promoted");
      if (scheduler instanceof RackwiseFairScheduler) {
        assertTrue(secondAttempt instanceof RackwiseAppAttempt);
        assertTrue(((RackwiseFairScheduler) scheduler).isNativeActive());
      }
    }
  }

  private static RMApp submit(MockRackCluster cluster, String name) throws Exception {
    RMApp app = MockRMAppSubmitter.submit(cluster.rm, MockRMAppSubmissionData.Builder
        .createWithMemory(MockRackCluster.TASK_MB, cluster.rm).withAppName(name)
        .withQueue("one").withUser("alice").withAppType("MAPREDUCE")
        .withApplicationTags(Set.of()).build());
    cluster.rm.drainEvents();
    return app;
  }

  private static FSAppAttempt attemptOf(FairScheduler scheduler, RMApp app) {
    return scheduler.getSchedulerApp(app.getCurrentAppAttempt().getAppAttemptId());
  }
}
