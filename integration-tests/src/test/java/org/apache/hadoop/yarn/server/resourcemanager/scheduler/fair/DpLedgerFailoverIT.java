package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.dp.DpLedger;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.ClientRMService;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic Priority's ledger across an RM fail-over: an HA pair with the ledger on HDFS. The
 * active charges a user whose application holds a container; it is stopped (the core first,
 * so no interval closes after the ledger's last record), the standby takes over, opens the
 * same ledger and starts from exactly the balance the previous active left (an interval
 * replayed twice would leave less, one lost would leave more).
 */
class DpLedgerFailoverIT {
  private static final String ALICE = "root.users.alice";
  private static final String ALLOCATIONS = """
      <?xml version="1.0"?>
      <allocations>
        <queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>
        <queue name="users" type="parent">
          <rackwise><policy>dp</policy><intervalMs>1000</intervalMs></rackwise>
          <queue name="alice"/>
        </queue>
      </allocations>
      """;

  @TempDir
  File workDir;

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void theNewActiveChargesFromTheBalanceThePreviousActiveLeft() throws Exception {
    try (RmHaPair pair = new RmHaPair(workDir, ALLOCATIONS, 1, Map.of())) {
      int first = pair.awaitActive();
      RackwiseFairScheduler firstScheduler = pair.scheduler(first);
      assertTrue(firstScheduler.isNativeActive(), "native core required and active");
      firstScheduler.setDpAccount(ALICE, 1000, 2, "admin");
      submitSleeper(pair.yarn().getResourceManager(first));
      await("charges on the first active").atMost(Duration.ofMinutes(1))
          .until(() -> budget(firstScheduler) <= 1000 - 3 * 2);

      pair.yarn().stopResourceManager(first);
      double left = budget(firstScheduler);
      int second = pair.awaitActive();
      assertNotEquals(first, second, "the standby took over");
      RackwiseFairScheduler secondScheduler = pair.scheduler(second);
      assertTrue(secondScheduler.isNativeActive(), "native core active on the new active RM");
      assertEquals(new DpLedger.Balance(left, 2),
          secondScheduler.dpLedger().balance(ALICE).orElseThrow(),
          "the new active starts from the balance the previous active left");

      // Not yet shown here: the new active charging a new application of alice from that
      // balance (in two runs its application was not charged within two minutes; not yet
      // diagnosed, see docs/dynamic-priority.md).
    }
  }

  private static double budget(RackwiseFairScheduler scheduler) {
    return scheduler.dpLedger().balance(ALICE).map(DpLedger.Balance::budget).orElse(1000.0);
  }

  /**
   * An application in alice's queue whose AM only sleeps: it holds one container. Submitted
   * to the active RM's client service directly (as the test's user), as Hadoop's own RM tests
   * do.
   */
  private static void submitSleeper(ResourceManager rm) throws Exception {
    ClientRMService clients = rm.getClientRMService();
    ApplicationSubmissionContext context = ApplicationSubmissionContext.newInstance(
        clients.getNewApplication(GetNewApplicationRequest.newInstance()).getApplicationId(),
        "sleeper", ALICE, Priority.newInstance(0), null, false, false, 1,
        Resource.newInstance(1024, 1), "sleeper");
    context.setAMContainerSpec(ContainerLaunchContext.newInstance(Map.of(), Map.of(),
        List.of("sleep 300"), null, null, null));
    clients.submitApplication(SubmitApplicationRequest.newInstance(context));
  }
}
