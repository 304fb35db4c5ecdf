package io.rackwise.yarn.dp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import io.rackwise.yarn.dp.DpLedger.Balance;
import java.nio.file.Files;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal's record of who changed an account and how: the fields the endpoint added
 * ({@code change}, {@code redone}) keep older journals readable, and a change made again on a
 * balance an interval moved is what a restart resumes.
 */
class DpLedgerAuditTest {
  private static final String A = "root.users.a";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aJournalWrittenBeforeTheEndpointStillLoadsAndTakesNewRecords(
      @TempDir java.nio.file.Path dir) throws Exception {
    // Exactly what the ledger wrote before records named the change.
    Files.writeString(dir.resolve(DpLedger.JOURNAL),
        "{\"kind\":\"set\",\"by\":\"admin\",\"accounts\":[{\"queue\":\"" + A
            + "\",\"budget\":100.0,\"spending\":2.0}],\"n\":1}\n"
            + "{\"kind\":\"interval\",\"market\":\"root.users\",\"sequence\":1,"
            + "\"end_ms\":20000,\"price\":2.0,\"accounts\":[{\"queue\":\"" + A
            + "\",\"budget\":94.0,\"spending\":2.0,\"charge\":6.0}],\"n\":2}\n");
    Configuration conf = new Configuration();
    DpLedger old = DpLedger.open(new Path(dir.toString()), conf);
    assertEquals(new Balance(94, 2), old.balance(A).orElseThrow());
    assertEquals(2, old.lastRecord());
    old.writeChange(A, new Balance(144, 2), "ops", "budget +50.0");
    old.apply(A, new Balance(144, 2), new Balance(144, 2), "ops", "budget +50.0");
    old.close();

    DpLedger reopened = DpLedger.open(new Path(dir.toString()), conf);
    assertEquals(new Balance(144, 2), reopened.balance(A).orElseThrow());
    assertEquals(3, reopened.lastRecord());
    reopened.close();
  }

  @Test
  void aChangeMadeAgainOnABalanceAnIntervalMovedIsWhatARestartResumes(
      @TempDir java.nio.file.Path dir) throws Exception {
    Configuration conf = new Configuration();
    Path path = new Path(dir.toString());
    DpLedger ledger = DpLedger.open(path, conf);
    ledger.set(A, 100, 1, "ops");
    // An admin adds 50 to the 100 in force; the record of 150 is durable ...
    ledger.writeChange(A, new Balance(150, 1), "ops", "budget +50.0");
    // ... and before it is applied an interval charges 3 from the 100.
    ledger.record(List.of(new MarketInterval("root.users", 1, 20_000, 1, List.of(
        new QueueAccount(A, 97, 1, 3, 3, 3, 1)))));
    // The scheduler makes the change again on the 97: 147 is in force.
    ledger.apply(A, new Balance(150, 1), new Balance(147, 1), "ops", "budget +50.0");
    assertEquals(new Balance(147, 1), ledger.balance(A).orElseThrow());
    ledger.close();

    List<String> lines = Files.readAllLines(dir.resolve(DpLedger.JOURNAL));
    JsonNode last = JSON.readTree(lines.get(lines.size() - 1));
    assertEquals("ops", last.get("by").asText());
    assertEquals("budget +50.0", last.get("change").asText());
    assertTrue(last.get("redone").asBoolean(), last.toString());
    DpLedger reopened = DpLedger.open(path, conf);
    // Without the second record the interval's 97 would be resumed, losing the 50.
    assertEquals(new Balance(147, 1), reopened.balance(A).orElseThrow());
    reopened.close();
  }
}
