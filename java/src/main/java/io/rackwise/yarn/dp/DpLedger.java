package io.rackwise.yarn.dp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import io.rackwise.yarn.state.StateFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dynamic Priority's accounts: each budget queue's balance and spending rate, set by an admin and
 * moved by the charges of every interval the core closes. The core computes the charges; this
 * book follows them, so that what it holds is what the core holds.
 *
 * <p>Persistent when given a directory (local, or HDFS for an HA pair, through {@link
 * StateFile}): a checkpoint ({@value #CHECKPOINT}, replaced whole and atomically) plus a journal
 * ({@value #JOURNAL}) of numbered records appended and synced one by one. Every record carries
 * the balances <em>after</em> it, not the change, so replaying a record twice cannot charge
 * twice; the checkpoint names the last record it covers, so records it already holds are
 * skipped. A record is durable before the change it makes is visible here or in the core: a
 * kill -9 at any moment loses at most the interval being written, whose charge is then not
 * taken (the user keeps the credit), never credit already recorded. Opening replays the
 * journal over the checkpoint, drops a torn last record (a crash mid-append), and compacts:
 * a new checkpoint, an empty journal.
 */
public final class DpLedger {
  private static final Logger LOG = LoggerFactory.getLogger(DpLedger.class);
  static final String CHECKPOINT = "dp-ledger.json";
  static final String JOURNAL = "dp-ledger.journal";
  /** Records after which the journal is folded into a new checkpoint (about 5 h at 20 s). */
  static final int COMPACT_AFTER = 1000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A budget queue's balance (credits) and spending rate (credits per unit per interval). */
  public record Balance(double budget, double spending) {}

  private final StateFile checkpoint;
  private final StateFile journal;
  private final Map<String, Balance> balances = new TreeMap<>();
  /** Each market's latest closed interval (this process's; not persisted). */
  private final Map<String, MarketInterval> latest = new TreeMap<>();
  /** The number of the last record applied. */
  private long lastRecord;
  /** Records in the journal since the checkpoint. */
  private int journaled;

  private DpLedger(StateFile checkpoint, StateFile journal) {
    this.checkpoint = checkpoint;
    this.journal = journal;
  }

  /** A ledger kept in memory only (no state directory): a restart forgets it. */
  public static DpLedger inMemory() {
    return new DpLedger(null, null);
  }

  /**
   * Opens the ledger in {@code dir}: the checkpoint, then the journal's records after it.
   *
   * @throws IOException the files cannot be read, or one is corrupt other than by a torn last
   *     record (the message names the file and what is wrong); nothing is changed on disk
   */
  public static DpLedger open(Path dir, Configuration conf) throws IOException {
    DpLedger ledger = new DpLedger(new StateFile(dir, CHECKPOINT, conf),
        new StateFile(dir, JOURNAL, conf));
    ledger.checkpoint.deleteStaleTempFiles();
    ledger.journal.deleteStaleTempFiles();
    Optional<byte[]> saved = ledger.checkpoint.read();
    if (saved.isPresent()) {
      ledger.readCheckpoint(saved.get());
    }
    ledger.replay(ledger.journal.read().orElse(new byte[0]));
    ledger.compact();
    LOG.info("Dynamic Priority ledger {}: {} accounts, up to record {}",
        ledger.checkpoint.path(), ledger.balances.size(), ledger.lastRecord);
    return ledger;
  }

  /**
   * Checks an admin's account values.
   *
   * @throws IllegalArgumentException a value is negative, not a number or infinite (the message
   *     names the queue, the value and why)
   */
  public static void check(String queue, double budget, double spending) {
    checkAmount(queue, "budget", budget);
    checkAmount(queue, "spending", spending);
  }

  private static void checkAmount(String queue, String what, double value) {
    if (!Double.isFinite(value) || value < 0) {
      throw new IllegalArgumentException("Dynamic Priority account of queue " + queue + ": "
          + what + " " + value + " refused (required: a finite number >= 0)");
    }
  }

  /**
   * Sets a queue's balance and spending rate, durably before it takes effect.
   *
   * @param by who made the change, kept in the journal
   * @throws IllegalArgumentException a value is refused by {@link #check}; nothing is set
   * @throws IOException the record could not be made durable; nothing is set
   */
  public synchronized void set(String queue, double budget, double spending, String by)
      throws IOException {
    check(queue, budget, spending);
    ObjectNode record = JSON.createObjectNode().put("kind", "set").put("by", by);
    ArrayNode accounts = record.putArray("accounts");
    accounts.addObject().put("queue", queue).put("budget", budget).put("spending", spending);
    append(record);
    balances.put(queue, new Balance(budget, spending));
  }

  /**
   * Follows the intervals the core closed: each queue's balance after its charge. An interval
   * that cannot be made durable is logged and still followed in memory (the core has charged
   * it); after a restart its charge is not taken.
   */
  public synchronized void record(List<MarketInterval> intervals) {
    for (MarketInterval interval : intervals) {
      ObjectNode record = JSON.createObjectNode().put("kind", "interval")
          .put("market", interval.market()).put("sequence", interval.sequence())
          .put("end_ms", interval.endMs()).put("price", interval.price());
      ArrayNode accounts = record.putArray("accounts");
      for (QueueAccount line : interval.queues()) {
        accounts.addObject().put("queue", line.queue()).put("budget", line.budget())
            .put("spending", line.spending()).put("charge", line.charge());
      }
      try {
        append(record);
      } catch (IOException e) {
        LOG.error("Dynamic Priority interval {} of {} is not in the ledger {}: {}; a restart "
            + "would not take its charges", interval.sequence(), interval.market(),
            journal.path(), e.toString());
      }
      for (QueueAccount line : interval.queues()) {
        balances.put(line.queue(), new Balance(line.budget(), line.spending()));
      }
      latest.put(interval.market(), interval);
    }
  }

  public synchronized Optional<Balance> balance(String queue) {
    return Optional.ofNullable(balances.get(queue));
  }

  /** Every account, by queue. */
  public synchronized Map<String, Balance> balances() {
    return Map.copyOf(balances);
  }

  /** The number of the last record applied (0 for an empty ledger). */
  public synchronized long lastRecord() {
    return lastRecord;
  }

  /** The market's latest interval closed by this process, if any. */
  public synchronized Optional<MarketInterval> latestInterval(String market) {
    return Optional.ofNullable(latest.get(market));
  }

  // ---- the files ----------------------------------------------------------------------------

  private void append(ObjectNode record) throws IOException {
    if (journal == null) {
      lastRecord++;
      return;
    }
    record.put("n", lastRecord + 1);
    journal.append((JSON.writeValueAsString(record) + "\n").getBytes(StandardCharsets.UTF_8));
    lastRecord++;
    if (++journaled >= COMPACT_AFTER) {
      try {
        compact();
      } catch (IOException e) {
        // The record is durable in the journal; the journal only grows until the next try.
        LOG.warn("Dynamic Priority ledger {}: cannot fold the journal into a checkpoint ({}); "
            + "trying again after the next record", checkpoint.path(), e.toString());
      }
    }
  }

  /** Folds the journal into a new checkpoint and starts an empty journal. */
  private void compact() throws IOException {
    ObjectNode root = JSON.createObjectNode().put("up_to", lastRecord);
    ObjectNode accounts = root.putObject("accounts");
    balances.forEach((queue, balance) -> accounts.putObject(queue)
        .put("budget", balance.budget()).put("spending", balance.spending()));
    checkpoint.replace(JSON.writeValueAsBytes(root));
    // A crash here leaves journal records the checkpoint covers: skipped by their numbers.
    journal.replace(new byte[0]);
    journaled = 0;
  }

  private void readCheckpoint(byte[] bytes) throws IOException {
    JsonNode root = parse(bytes, checkpoint.path());
    JsonNode upTo = root.get("up_to");
    JsonNode accounts = root.get("accounts");
    if (upTo == null || !upTo.canConvertToLong() || accounts == null || !accounts.isObject()) {
      throw corrupt(checkpoint.path(), "needs a whole number up_to and an object accounts");
    }
    lastRecord = upTo.asLong();
    for (Iterator<Map.Entry<String, JsonNode>> it = accounts.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> account = it.next();
      balances.put(account.getKey(), balance(account.getValue(), account.getKey(),
          checkpoint.path()));
    }
  }

  private void replay(byte[] bytes) throws IOException {
    String text = new String(bytes, StandardCharsets.UTF_8);
    String[] lines = text.split("\n", -1);
    // The text after the last newline is a record the writer never finished: ignored.
    for (int i = 0; i < lines.length - 1; i++) {
      JsonNode record = parse(lines[i].getBytes(StandardCharsets.UTF_8), journal.path());
      JsonNode n = record.get("n");
      JsonNode accounts = record.get("accounts");
      if (n == null || !n.canConvertToLong() || accounts == null || !accounts.isArray()) {
        throw corrupt(journal.path(), "line " + (i + 1) + " needs a whole number n and an "
            + "array accounts");
      }
      if (n.asLong() <= lastRecord) {
        continue;
      }
      if (n.asLong() != lastRecord + 1) {
        throw corrupt(journal.path(), "line " + (i + 1) + " is record " + n.asLong()
            + " where record " + (lastRecord + 1) + " was due");
      }
      for (JsonNode account : accounts) {
        String queue = account.path("queue").asText("");
        balances.put(queue, balance(account, queue, journal.path()));
      }
      lastRecord = n.asLong();
    }
    if (!lines[lines.length - 1].isEmpty()) {
      LOG.warn("Dynamic Priority ledger {}: dropped a torn last record (written when the "
          + "previous ResourceManager stopped): {}", journal.path(), lines[lines.length - 1]);
    }
  }

  private static Balance balance(JsonNode account, String queue, Path file) throws IOException {
    JsonNode budget = account.get("budget");
    JsonNode spending = account.get("spending");
    if (queue.isEmpty() || budget == null || !budget.isNumber() || spending == null
        || !spending.isNumber() || budget.asDouble() < 0 || spending.asDouble() < 0) {
      throw corrupt(file, "account '" + queue + "' needs a queue and a budget and spending "
          + ">= 0: " + account);
    }
    return new Balance(budget.asDouble(), spending.asDouble());
  }

  private static JsonNode parse(byte[] bytes, Path file) throws IOException {
    try {
      return JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw corrupt(file, "is not JSON (" + e.getOriginalMessage() + ")");
    }
  }

  private static IOException corrupt(Path file, String why) {
    return new IOException("Dynamic Priority ledger " + file + " is corrupt: " + why
        + "; fix or remove it (the ledger holds users' credits, so it is never guessed)");
  }
}
