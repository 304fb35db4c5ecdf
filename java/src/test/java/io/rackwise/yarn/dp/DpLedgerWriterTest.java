package io.rackwise.yarn.dp;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import io.rackwise.yarn.testing.StallingFileSystem;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's files are written off the caller's thread: a file system that hangs does not
 * hold up {@link DpLedger#record} (the offer path), and one that fails loses no balance once a
 * later write succeeds.
 */
class DpLedgerWriterTest {
  private static final String A = "root.users.a";
  private static final String C = "root.other.c";
  /** A write on the caller's thread would wait at the held file system forever. */
  private static final Duration RECORDING_RETURNS = Duration.ofSeconds(5);

  @AfterEach
  void releaseTheFileSystem() {
    StallingFileSystem.release();
  }

  /** An interval that charges {@code queue} {@code charge} from {@code before}. */
  private static MarketInterval charge(String market, long sequence, String queue,
      DpLedger.Balance before, double charge) {
    return new MarketInterval(market, sequence, 20_000 * sequence, 1, List.of(new QueueAccount(
        queue, before.budget() - charge, before.spending(), charge, charge, charge, 1)));
  }

  @Test
  void aHeldFileSystemDoesNotHoldUpRecordingAndCatchesUpWhenReleased(
      @TempDir java.nio.file.Path dir) throws Exception {
    Configuration conf = StallingFileSystem.configuration();
    Path path = StallingFileSystem.path(dir);
    DpLedger ledger = DpLedger.open(path, conf);
    ledger.set(A, 100, 1, "admin");
    StallingFileSystem.hold();
    assertTimeoutPreemptively(RECORDING_RETURNS, () -> {
      for (long k = 1; k <= 5; k++) {
        ledger.record(List.of(charge("root.users", k, A, ledger.balance(A).orElseThrow(), 3)));
      }
    }, "recording waited for the file system");
    awaitTrue(() -> StallingFileSystem.appendsHeld() == 1, "the writer waits at the file system");
    assertEquals(85.0, ledger.balance(A).orElseThrow().budget(), "in force at once");
    assertEquals(1, ledger.lastRecord(), "nothing written while the file system is held");

    StallingFileSystem.release();
    awaitTrue(() -> ledger.lastRecord() == 6, "the writer catches up, in order");
    ledger.close();
    assertEquals(Map.of(A, new DpLedger.Balance(85, 1)), DpLedger.open(path, conf).balances());
  }

  @Test
  void aFailedWriteIsCarriedByTheNextOneWritten(@TempDir java.nio.file.Path dir)
      throws Exception {
    Configuration conf = StallingFileSystem.configuration();
    Path path = StallingFileSystem.path(dir);
    DpLedger ledger = DpLedger.open(path, conf);
    ledger.set(A, 100, 1, "admin");
    ledger.set(C, 50, 1, "admin");
    // The other market's interval fails; the next one written names only A, and must carry C.
    StallingFileSystem.failNext(1);
    ledger.record(List.of(charge("root.other", 1, C, ledger.balance(C).orElseThrow(), 7)));
    ledger.record(List.of(charge("root.users", 1, A, ledger.balance(A).orElseThrow(), 2)));
    awaitTrue(() -> ledger.lastRecord() == 3, "the second interval is written as record 3");
    ledger.close();
    DpLedger reopened = DpLedger.open(path, conf);
    assertEquals(Map.of(A, new DpLedger.Balance(98, 1), C, new DpLedger.Balance(43, 1)),
        reopened.balances(), "C's charge came with A's record");
  }

  @Test
  void anAdminChangeAfterAFailedWriteIsNotUndoneByTheCarriedBalance(
      @TempDir java.nio.file.Path dir) throws Exception {
    Configuration conf = StallingFileSystem.configuration();
    Path path = StallingFileSystem.path(dir);
    DpLedger ledger = DpLedger.open(path, conf);
    ledger.set(A, 100, 1, "admin");
    ledger.set(C, 50, 1, "admin");
    StallingFileSystem.failNext(1);
    ledger.record(List.of(charge("root.other", 1, C, ledger.balance(C).orElseThrow(), 7)));
    ledger.set(C, 500, 1, "admin");
    ledger.record(List.of(charge("root.users", 1, A, ledger.balance(A).orElseThrow(), 2)));
    awaitTrue(() -> ledger.lastRecord() == 4, "the set and the second interval are written");
    ledger.close();
    assertEquals(new DpLedger.Balance(500, 1),
        DpLedger.open(path, conf).balance(C).orElseThrow(), "the admin's change stands");
  }
}
