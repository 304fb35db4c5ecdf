package io.rackwise.yarn.dp;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger survives a kill -9 of its writer: a child JVM closes a deterministic market's
 * intervals into the ledger (whose background writer has up to {@value #BATCH} of them queued at
 * any time) and is killed mid-stream; the ledger it leaves opens to exactly the balances of
 * replaying the intervals it holds, each once (the queued ones are simply not charged), and a
 * second writer continues from there to exactly the balances of the whole replay.
 */
class DpLedgerCrashTest {
  private static final String MARKET = "root.users";
  private static final String A = MARKET + ".a";
  private static final String B = MARKET + ".b";
  /** The two admin records every run starts with; intervals are the records after them. */
  private static final int SETS = 2;
  /**
   * Intervals the writer hands the ledger between two waits for its files to catch up: up to
   * this many are queued, not yet written, when the kill comes.
   */
  private static final int BATCH = 10;
  private static final Duration WRITER_CATCHES_UP = Duration.ofSeconds(60);

  /** Opens the ledger in {@code args[0]} and closes intervals up to record {@code args[1]}. */
  public static void main(String[] args) throws IOException {
    DpLedger ledger = DpLedger.open(new Path(args[0]), new Configuration());
    run(ledger, Long.parseLong(args[1]), true);
    ledger.close();
  }

  /**
   * Brings {@code ledger} to record {@code target}: the admin's accounts first, then each
   * interval from the balances it holds. This is the writer and, in memory, the replay.
   */
  private static void run(DpLedger ledger, long target, boolean announce) throws IOException {
    if (ledger.lastRecord() == 0) {
      // A runs out of credit part way (its charges are capped at what is left), B never does.
      ledger.set(A, 300, 1, "admin");
      ledger.set(B, 1_000_000, 2, "admin");
    }
    // Intervals in the files; those a killed writer had only queued are closed again.
    long k = ledger.lastRecord() - SETS;
    while (k + SETS < target) {
      k++;
      ledger.record(List.of(interval(ledger.balances(), k)));
      if (k % BATCH == 0) {
        long due = k + SETS;
        await("the ledger's writer reaches record " + due).atMost(WRITER_CATCHES_UP)
            .until(() -> ledger.lastRecord() == due);
        if (announce) {
          System.out.println("record " + ledger.lastRecord());
        }
      }
    }
    await("the ledger's writer reaches record " + target).atMost(WRITER_CATCHES_UP)
        .until(() -> ledger.lastRecord() == target);
  }

  /** Interval {@code k} of the market: each queue charged for a usage that depends on k. */
  private static MarketInterval interval(Map<String, DpLedger.Balance> before, long k) {
    List<QueueAccount> lines = new ArrayList<>();
    double[] used = {k % 7, (3 * k) % 11 + 1};
    String[] queues = {A, B};
    for (int q = 0; q < queues.length; q++) {
      DpLedger.Balance balance = before.get(queues[q]);
      double charge = Math.min(balance.spending() * used[q], balance.budget());
      lines.add(new QueueAccount(queues[q], balance.budget() - charge, balance.spending(),
          used[q], used[q], charge, 0.5));
    }
    return new MarketInterval(MARKET, k, 20_000 * k, 3, lines);
  }

  private static Map<String, DpLedger.Balance> replay(long records) throws IOException {
    DpLedger memory = DpLedger.inMemory();
    run(memory, records, false);
    return memory.balances();
  }

  private static Process writer(java.nio.file.Path dir, long target) throws IOException {
    String java = System.getProperty("java.home") + "/bin/java";
    return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        DpLedgerCrashTest.class.getName(), dir.toString(), Long.toString(target))
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
  }

  @Test
  void aKilledWriterLosesNoCreditAndChargesNoIntervalTwice(@TempDir java.nio.file.Path dir)
      throws Exception {
    Process first = writer(dir, Long.MAX_VALUE);
    long announced = 0;
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null && announced < 300;
          line = out.readLine()) {
        if (line.startsWith("record ")) {
          announced = Long.parseLong(line.substring("record ".length()));
        }
      }
      first.destroyForcibly();
      assertTrue(first.waitFor(30, TimeUnit.SECONDS), "the writer died");
    }
    assertTrue(announced >= 300, "the writer got going: " + announced);

    DpLedger afterKill = DpLedger.open(new Path(dir.toString()), new Configuration());
    long held = afterKill.lastRecord();
    // Every record announced was durable; those queued after it may or may not be.
    assertTrue(held >= announced, held + " records held, " + announced + " announced");
    assertEquals(replay(held), afterKill.balances(), "the replay of the records held");
    assertEquals(0.0, afterKill.balance(A).orElseThrow().budget(), "A ran out, not below 0");

    Process second = writer(dir, held + 100);
    assertEquals(0, second.waitFor(60, TimeUnit.SECONDS) ? second.exitValue() : -1);
    DpLedger resumed = DpLedger.open(new Path(dir.toString()), new Configuration());
    assertEquals(held + 100, resumed.lastRecord());
    assertEquals(replay(held + 100), resumed.balances(), "continued from the same balances");
  }

  @Test
  void aTornLastRecordIsDroppedAndACorruptOneRefused(@TempDir java.nio.file.Path dir)
      throws Exception {
    Path path = new Path(dir.toString());
    DpLedger ledger = DpLedger.open(path, new Configuration());
    run(ledger, 5, false);
    java.nio.file.Path journal = dir.resolve(DpLedger.JOURNAL);
    Files.writeString(journal, "{\"n\":6,\"kind\":\"set\",\"accou",
        java.nio.file.StandardOpenOption.APPEND);
    DpLedger reopened = DpLedger.open(path, new Configuration());
    assertEquals(5, reopened.lastRecord());
    assertEquals(replay(5), reopened.balances());

    Files.writeString(journal, "not json\n");
    IOException corrupt = assertThrows(IOException.class,
        () -> DpLedger.open(path, new Configuration()));
    assertTrue(corrupt.getMessage().contains(DpLedger.JOURNAL + " is corrupt: is not JSON"),
        corrupt.getMessage());
    // Nothing was touched: without the bad journal, the checkpoint of the last open holds.
    Files.delete(journal);
    assertEquals(replay(5), DpLedger.open(path, new Configuration()).balances());
  }
}
