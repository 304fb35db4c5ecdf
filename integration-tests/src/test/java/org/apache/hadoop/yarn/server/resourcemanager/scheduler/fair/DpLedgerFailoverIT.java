package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.dp.DpLedger;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
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
 * replayed twice would leave less, one lost would leave more). A new application of alice on
 * the new active is then charged from there: the new active's journal, read back from HDFS,
 * holds its intervals numbered 1, 2, 3, ... without a gap or a repeat, and alice's balance in
 * them goes down from exactly the balance the previous active left, by each interval's charge.
 */
class DpLedgerFailoverIT {
  private static final String MARKET = "root.users";
  private static final String ALICE = "root.users.alice";
  private static final double SPENDING = 2;
  /** Charged intervals the new active must close (each takes one 1 s interval). */
  private static final int CHARGED_AFTER_FAILOVER = 3;
  private static final ObjectMapper JSON = new ObjectMapper();
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
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void theNewActiveChargesFromTheBalanceThePreviousActiveLeft() throws Exception {
    try (RmHaPair pair = new RmHaPair(workDir, ALLOCATIONS, 1, Map.of())) {
      int first = pair.awaitActive();
      RackwiseFairScheduler firstScheduler = pair.scheduler(first);
      assertTrue(firstScheduler.isNativeActive(), "native core required and active");
      firstScheduler.setDpAccount(ALICE, 1000, SPENDING, "admin");
      submitSleeper(pair.yarn().getResourceManager(first));
      await("charges on the first active").atMost(Duration.ofMinutes(1))
          .until(() -> budget(firstScheduler) <= 1000 - 3 * SPENDING);

      pair.yarn().stopResourceManager(first);
      double left = budget(firstScheduler);
      int second = pair.awaitActive();
      assertNotEquals(first, second, "the standby took over");
      RackwiseFairScheduler secondScheduler = pair.scheduler(second);
      assertTrue(secondScheduler.isNativeActive(), "native core active on the new active RM");
      assertEquals(new DpLedger.Balance(left, SPENDING),
          secondScheduler.dpLedger().balance(ALICE).orElseThrow(),
          "the new active starts from the balance the previous active left");

      submitSleeper(pair.yarn().getResourceManager(second));
      Path journal = new Path(pair.stateDir(), DpLedger.JOURNAL);
      await("charges on the new active").atMost(Duration.ofMinutes(1))
          .until(() -> aliceLines(journal).stream()
              .filter(line -> line.get("charge").asDouble() > 0).count()
              >= CHARGED_AFTER_FAILOVER);
      assertChargedFrom(left, aliceLines(journal));
    }
  }

  /**
   * Each interval's charge comes off the balance before it, starting from {@code left}, and
   * every charge is positive once the application holds its container: so the balance goes
   * strictly down from exactly {@code left}. An interval charged twice would show as a repeated
   * number (and a balance one charge short); one lost, as a gap.
   */
  private static void assertChargedFrom(double left, List<JsonNode> lines) {
    double before = left;
    boolean holding = false;
    for (int i = 0; i < lines.size(); i++) {
      JsonNode line = lines.get(i);
      assertEquals(i + 1, line.get("sequence").asLong(),
          "the new active's intervals in order, none twice, none lost: " + lines);
      double charge = line.get("charge").asDouble();
      assertTrue(charge >= 0 && charge <= SPENDING, "a charge of at most one unit: " + line);
      // Before its container is placed alice pays nothing; from then on, every interval.
      holding |= charge > 0;
      assertTrue(!holding || charge > 0, "charged in every interval once placed: " + lines);
      assertEquals(before - charge, line.get("budget").asDouble(), 1e-9,
          "interval " + (i + 1) + " charges from the balance before it: " + lines);
      before = line.get("budget").asDouble();
    }
    assertTrue(before <= left - CHARGED_AFTER_FAILOVER * SPENDING,
        "the new active charged " + CHARGED_AFTER_FAILOVER + " full intervals: " + lines);
  }

  /**
   * Alice's line of every interval record of the market in the journal, in order; the journal
   * holds only the new active's records (opening the ledger folded the previous active's into
   * the checkpoint). A last line still being written is left for the next read.
   */
  private static List<JsonNode> aliceLines(Path journal) throws IOException {
    FileSystem fs = journal.getFileSystem(new Configuration());
    String text;
    try (FSDataInputStream in = fs.open(journal)) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    List<JsonNode> lines = new ArrayList<>();
    for (String record : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
      if (record.isEmpty()) {
        continue;
      }
      JsonNode node = JSON.readTree(record);
      if (!"interval".equals(node.get("kind").asText())
          || !MARKET.equals(node.get("market").asText())) {
        continue;
      }
      for (JsonNode account : node.get("accounts")) {
        if (ALICE.equals(account.get("queue").asText())) {
          lines.add(JSON.createObjectNode().put("sequence", node.get("sequence").asLong())
              .put("budget", account.get("budget").asDouble())
              .put("charge", account.get("charge").asDouble()));
        }
      }
    }
    return lines;
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
