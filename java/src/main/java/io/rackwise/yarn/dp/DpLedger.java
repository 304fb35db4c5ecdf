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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.concurrent.HadoopExecutors;
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
 * skipped. Opening replays the journal over the checkpoint, drops a torn last record (a crash
 * mid-append), and compacts: a new checkpoint, an empty journal.
 *
 * <p>The files are written by one background thread, in the order the records were made, so
 * that a slow or failing file system (an HDFS pipeline recovering, a full disk) never holds up
 * the scheduler: {@link #record} is called on the offer path, under the scheduler's lock, and
 * only updates memory and queues the write. An admin's change ({@link #set}) waits for its
 * record to be durable before it takes effect. A closed interval takes effect at once (the core
 * has charged it) and is durable a little later: a kill -9 loses the intervals not yet
 * written, whose charges are then not taken after a restart (the users keep those credits),
 * never credit already recorded and never an interval twice. An interval whose write fails is
 * logged, and its balances ride along in the next record written, so one good write brings
 * the files up to every change so far.
 */
public final class DpLedger {
  private static final Logger LOG = LoggerFactory.getLogger(DpLedger.class);
  static final String CHECKPOINT = "dp-ledger.json";
  public static final String JOURNAL = "dp-ledger.journal";
  /** Records after which the journal is folded into a new checkpoint (about 5 h at 20 s). */
  static final int COMPACT_AFTER = 1000;
  /** How long {@link #close} waits for the queued records to be written. */
  static final long CLOSE_WAIT_SECONDS = 30;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A budget queue's balance (credits) and spending rate (credits per unit per interval). */
  public record Balance(double budget, double spending) {}

  private final StateFile checkpoint;
  private final StateFile journal;
  /** Writes the files, one record after the other; null for a ledger in memory. */
  private final ExecutorService writer;
  /** The balances in force (what the core holds); guarded by this. */
  private final Map<String, Balance> balances = new TreeMap<>();
  /** Each market's latest closed interval (this process's; not persisted); guarded by this. */
  private final Map<String, MarketInterval> latest = new TreeMap<>();

  // The files' side: touched by the writer thread only (by the opening thread before it starts).
  /** The balances as the files hold them, for the next checkpoint. */
  private final Map<String, Balance> written = new TreeMap<>();
  /** Account lines of intervals whose write failed, by queue: carried by the next record. */
  private final Map<String, ObjectNode> unwritten = new TreeMap<>();
  /** Records in the journal since the checkpoint. */
  private int journaled;
  /** The number of the last record in the files (in memory: the last applied). */
  private volatile long lastRecord;

  private DpLedger(StateFile checkpoint, StateFile journal, ExecutorService writer) {
    this.checkpoint = checkpoint;
    this.journal = journal;
    this.writer = writer;
  }

  /** A ledger kept in memory only (no state directory): a restart forgets it. */
  public static DpLedger inMemory() {
    return new DpLedger(null, null, null);
  }

  /**
   * Opens the ledger in {@code dir}: the checkpoint, then the journal's records after it.
   *
   * @throws IOException the files cannot be read, or one is corrupt other than by a torn last
   *     record (the message names the file and what is wrong); nothing is changed on disk
   */
  public static DpLedger open(Path dir, Configuration conf) throws IOException {
    StateFile checkpoint = new StateFile(dir, CHECKPOINT, conf);
    StateFile journal = new StateFile(dir, JOURNAL, conf);
    checkpoint.deleteStaleTempFiles();
    journal.deleteStaleTempFiles();
    // Read before the writer thread exists, so a corrupt ledger leaves no thread behind.
    Map<String, Balance> saved = new TreeMap<>();
    long upTo = 0;
    Optional<byte[]> savedCheckpoint = checkpoint.read();
    if (savedCheckpoint.isPresent()) {
      upTo = readCheckpoint(savedCheckpoint.get(), checkpoint.path(), saved);
    }
    upTo = replay(journal.read().orElse(new byte[0]), journal.path(), upTo, saved);
    DpLedger ledger = new DpLedger(checkpoint, journal,
        HadoopExecutors.newSingleThreadExecutor(task -> {
          Thread thread = new Thread(task, "Rackwise Dynamic Priority ledger writer " + dir);
          // Never keeps a JVM alive; the RM drains it in close().
          thread.setDaemon(true);
          return thread;
        }));
    ledger.balances.putAll(saved);
    ledger.written.putAll(saved);
    ledger.lastRecord = upTo;
    try {
      ledger.compact();
    } catch (IOException e) {
      ledger.writer.shutdownNow();
      throw e;
    }
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
   * Sets a queue's balance and spending rate, durably before it takes effect: waits for the
   * writer (an admin's call, never the offer path).
   *
   * @param by who made the change, kept in the journal
   * @throws IllegalArgumentException a value is refused by {@link #check}; nothing is set
   * @throws IOException the record could not be made durable; nothing is set
   */
  public void set(String queue, double budget, double spending, String by)
      throws IOException {
    Balance balance = new Balance(budget, spending);
    writeChange(queue, balance, by, null);
    apply(queue, balance, balance, by, null);
  }

  /**
   * Makes the record of an account change durable, waiting for the writer (an admin's or a
   * user's call, never the offer path); the change is not in force until {@link #apply}.
   *
   * @param by who made the change
   * @param change what was asked, in words (e.g. {@code budget +50}), or null; both are kept in
   *     the journal record ({@code "by"}, {@code "change"}), which replay does not need
   * @throws IllegalArgumentException a value is refused by {@link #check}; nothing is written
   * @throws IOException the record could not be made durable
   */
  public void writeChange(String queue, Balance after, String by, String change)
      throws IOException {
    check(queue, after.budget(), after.spending());
    ObjectNode record = changeRecord(queue, after, by, change);
    if (writer == null) {
      write(record);
      return;
    }
    Future<?> durable;
    synchronized (this) {
      try {
        durable = writer.submit(() -> {
          write(record);
          return null;
        });
      } catch (RejectedExecutionException e) {
        throw new IOException("Dynamic Priority ledger " + journal.path() + " is closed; "
            + "the account of " + queue + " is not set", e);
      }
    }
    try {
      durable.get();
    } catch (ExecutionException e) {
      throw new IOException("Dynamic Priority ledger " + journal.path() + ": the account of "
          + queue + " is not set: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while setting the Dynamic Priority account of "
          + queue + "; it is set if and when its record reaches " + journal.path(), e);
    }
  }

  /**
   * Puts in force a change whose record {@link #writeChange} made durable. When an interval
   * closed between that write and now and moved the balance, the caller makes the change again
   * on the moved balance: {@code inForce} then differs from {@code written} and gets a record
   * of its own, queued like an interval's (never waited for, as the caller holds the
   * scheduler's lock so that no interval closes meanwhile).
   */
  public synchronized void apply(String queue, Balance written, Balance inForce, String by,
      String change) {
    if (!inForce.equals(written)) {
      ObjectNode record = changeRecord(queue, inForce, by, change).put("redone", true);
      Runnable write = () -> {
        try {
          write(record);
        } catch (IOException e) {
          ObjectNode line = (ObjectNode) record.get("accounts").get(0);
          unwritten.put(queue, line);
          LOG.error("Dynamic Priority ledger {}: cannot write the change of {} by {} made again "
              + "on a balance an interval moved ({}); it rides along with the next record",
              journal.path(), queue, by, e.toString());
        }
      };
      if (writer == null) {
        write.run();
      } else {
        try {
          writer.execute(write);
        } catch (RejectedExecutionException e) {
          LOG.error("Dynamic Priority ledger {} is closed: the change of {} by {} made again on "
              + "a moved balance is not written", journal.path(), queue, by);
        }
      }
    }
    balances.put(queue, inForce);
  }

  private static ObjectNode changeRecord(String queue, Balance after, String by, String change) {
    ObjectNode record = JSON.createObjectNode().put("kind", "set").put("by", by);
    if (change != null) {
      record.put("change", change);
    }
    record.putArray("accounts").addObject().put("queue", queue).put("budget", after.budget())
        .put("spending", after.spending());
    return record;
  }

  /**
   * Follows the intervals the core closed: each queue's balance after its charge, at once in
   * memory, and in the files when the writer gets to it (see the class comment). Called on the
   * offer path: never waits for the file system.
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
      if (writer == null) {
        writeInterval(record, interval);
      } else {
        try {
          writer.execute(() -> writeInterval(record, interval));
        } catch (RejectedExecutionException e) {
          LOG.error("Dynamic Priority interval {} of {} closed after the ledger {} was closed; "
              + "it is not written, and a restart does not take its charges",
              interval.sequence(), interval.market(), journal.path());
        }
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

  /**
   * The number of the last record in the files (0 for an empty ledger); for a ledger in memory,
   * of the last record applied.
   */
  public long lastRecord() {
    return lastRecord;
  }

  /** Each market's latest interval closed by this process, by market. */
  public synchronized Map<String, MarketInterval> latestIntervals() {
    return Map.copyOf(latest);
  }

  /** The market's latest interval closed by this process, if any. */
  public synchronized Optional<MarketInterval> latestInterval(String market) {
    return Optional.ofNullable(latest.get(market));
  }

  /**
   * Writes what is queued, then stops the writer. Waits up to {@value #CLOSE_WAIT_SECONDS} s (a
   * file system that hangs must not hang the RM's stop); what is still unwritten then is
   * logged and not charged after a restart.
   */
  public void close() {
    if (writer == null) {
      return;
    }
    writer.shutdown();
    try {
      if (writer.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    int dropped = writer.shutdownNow().size();
    LOG.error("Dynamic Priority ledger {}: the writer did not finish within {} s; {} queued "
        + "records are not written (their intervals are not charged after a restart)",
        journal.path(), CLOSE_WAIT_SECONDS, dropped);
  }

  // ---- the files (the writer thread) ---------------------------------------------------------

  /**
   * Writes an interval's record with the lines of earlier intervals whose write failed (for
   * queues this one does not name), so the files catch up on every balance at once.
   */
  private void writeInterval(ObjectNode record, MarketInterval interval) {
    ArrayNode accounts = (ArrayNode) record.get("accounts");
    for (JsonNode line : accounts) {
      unwritten.remove(line.get("queue").asText());
    }
    unwritten.values().forEach(carried -> accounts.add(carried.put("carried", true)));
    try {
      write(record);
    } catch (IOException e) {
      for (JsonNode line : accounts) {
        unwritten.put(line.get("queue").asText(), (ObjectNode) line);
      }
      LOG.error("Dynamic Priority ledger {}: cannot write interval {} of {} ({}); its balances "
          + "ride along with the next record written, and until one is, a restart does not "
          + "take its charges", journal.path(), interval.sequence(), interval.market(),
          e.toString());
    }
  }

  /** Appends the record durably; on failure the files and the numbering are unchanged. */
  private void write(ObjectNode record) throws IOException {
    if (journal == null) {
      lastRecord++;
      return;
    }
    record.put("n", lastRecord + 1);
    journal.append((JSON.writeValueAsString(record) + "\n").getBytes(StandardCharsets.UTF_8));
    for (JsonNode account : record.get("accounts")) {
      String queue = account.get("queue").asText();
      written.put(queue, new Balance(
          account.get("budget").asDouble(), account.get("spending").asDouble()));
      // Written now, so nothing older of it may ride along later (an admin's set included).
      unwritten.remove(queue);
    }
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
    written.forEach((queue, balance) -> accounts.putObject(queue)
        .put("budget", balance.budget()).put("spending", balance.spending()));
    checkpoint.replace(JSON.writeValueAsBytes(root));
    // A crash here leaves journal records the checkpoint covers: skipped by their numbers.
    journal.replace(new byte[0]);
    journaled = 0;
  }

  /** Reads a checkpoint into {@code into}; returns the number of the last record it covers. */
  private static long readCheckpoint(byte[] bytes, Path file, Map<String, Balance> into)
      throws IOException {
    JsonNode root = parse(bytes, file);
    JsonNode upTo = root.get("up_to");
    JsonNode accounts = root.get("accounts");
    if (upTo == null || !upTo.canConvertToLong() || accounts == null || !accounts.isObject()) {
      throw corrupt(file, "needs a whole number up_to and an object accounts");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = accounts.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> account = it.next();
      into.put(account.getKey(), balance(account.getValue(), account.getKey(), file));
    }
    return upTo.asLong();
  }

  /**
   * Applies the journal's records after record {@code lastRecord} to {@code into}; returns the
   * number of the last record applied.
   */
  private static long replay(byte[] bytes, Path file, long lastRecord,
      Map<String, Balance> into) throws IOException {
    String text = new String(bytes, StandardCharsets.UTF_8);
    String[] lines = text.split("\n", -1);
    // The text after the last newline is a record the writer never finished: ignored.
    for (int i = 0; i < lines.length - 1; i++) {
      JsonNode record = parse(lines[i].getBytes(StandardCharsets.UTF_8), file);
      JsonNode n = record.get("n");
      JsonNode accounts = record.get("accounts");
      if (n == null || !n.canConvertToLong() || accounts == null || !accounts.isArray()) {
        throw corrupt(file, "line " + (i + 1) + " needs a whole number n and an "
            + "array accounts");
      }
      if (n.asLong() <= lastRecord) {
        continue;
      }
      if (n.asLong() != lastRecord + 1) {
        throw corrupt(file, "line " + (i + 1) + " is record " + n.asLong()
            + " where record " + (lastRecord + 1) + " was due");
      }
      for (JsonNode account : accounts) {
        String queue = account.path("queue").asText("");
        into.put(queue, balance(account, queue, file));
      }
      lastRecord = n.asLong();
    }
    if (!lines[lines.length - 1].isEmpty()) {
      LOG.warn("Dynamic Priority ledger {}: dropped a torn last record (written when the "
          + "previous ResourceManager stopped): {}", file, lines[lines.length - 1]);
    }
    return lastRecord;
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
