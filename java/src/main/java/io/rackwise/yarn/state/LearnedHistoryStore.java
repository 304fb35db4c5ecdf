package io.rackwise.yarn.state;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.config.ShimSettings;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps what the core has learned for recurring job names (shuffle ratios, task times) across
 * ResourceManager restarts.
 *
 * <h2>File</h2>
 * {@code <dir>/learned-history.json}: a JSON array of {@code {"job_name": str, "ratio": double,
 * "runs": int}}, with {@code "map_ms"}, {@code "reduce_ms"} (double) and {@code "profile_runs"}
 * (int) where task times were learned for FRESH's profiles (the core's {@code LearnedRatio};
 * files written before those fields existed load as entries without task times), most
 * recently updated first. It is a
 * {@link StateFile}: only ever replaced whole and atomically, on the local disk or on HDFS.
 * Unknown fields are ignored on reading, so a later version may add some.
 *
 * <h2>Threads</h2>
 * {@link #record} is called on the scheduler thread with each offer's newly learned ratios.
 * It only updates a concurrent map and bumps a version number: no I/O, no lock shared with
 * the writer. A daemon thread ({@value #THREAD_NAME}) writes the file when the version has
 * moved, at most once per flush interval, and {@link #close()} writes once more, so at most
 * one interval of learning is lost on a crash.
 *
 * <h2>Size</h2>
 * At most {@code maxEntries} job names are written (default {@code state.learned.max-entries}, default 10,000),
 * the most recently updated ones: recurring jobs keep their entry fresh, one-off names age
 * out. Between two writes the map may exceed the bound by what was learned meanwhile.
 *
 * <h2>Lifecycle</h2>
 * {@code load()} (once, before the engine is created, to seed it), then {@code start()}, then
 * {@code record(...)} per offer, then {@code close()} in {@code serviceStop}. With no
 * directory ({@code state.dir} unset, the caller passes null) nothing is read or
 * written: {@code load()} returns an empty list and {@code record} does nothing.
 *
 * <p>A corrupt file must not stop the RM: {@link #load()} logs at ERROR what is wrong and
 * where, moves the file aside to {@code learned-history.json.corrupt-<epoch millis>} for a
 * person to look at, and starts with no learned history. Ratios are a hint; losing them only
 * means the core treats recurring jobs as unknown until it learns them again.
 *
 * <p>With RM HA, point {@code state.dir} of both RMs at the same {@code hdfs://} directory:
 * the RM that becomes active loads what the previous active last wrote (at most one flush
 * interval of learning is lost with a killed RM). Only the active RM runs a scheduler, so only
 * one writes at a time.
 */
public final class LearnedHistoryStore implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(LearnedHistoryStore.class);

  public static final String FILE_NAME = "learned-history.json";
  public static final String THREAD_NAME = "rackwise-history-writer";

  /** Bound on waiting for the writer thread in close(); a write is a few hundred KB. */
  private static final long JOIN_TIMEOUT_MS = 10_000;

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** A value and when it was last updated (a global sequence number, not a clock). */
  private record Slot(LearnedRatio value, long seq) {
  }

  /** The file holds something that is not a learned history. */
  private static final class CorruptHistoryException extends Exception {
    private static final long serialVersionUID = 1L;

    CorruptHistoryException(String message) {
      super(message);
    }
  }

  private enum Lifecycle { NEW, RUNNING, CLOSED }

  private final StateFile file;
  private final long flushIntervalMs;
  private final int maxEntries;

  private final ConcurrentHashMap<String, Slot> entries = new ConcurrentHashMap<>();
  private final AtomicLong seq = new AtomicLong();
  /** Bumped by every record() that changed something. */
  private final AtomicLong version = new AtomicLong();

  /** Serialises writes (the writer thread and close()/flush() callers). */
  private final ReentrantLock writeLock = new ReentrantLock();
  private long persistedVersion;
  private boolean failing;

  private final AtomicLong writes = new AtomicLong();
  private final AtomicLong writeFailures = new AtomicLong();
  private volatile Path corruptCopy;

  private final Object lifecycleLock = new Object();
  private final CountDownLatch closing = new CountDownLatch(1);
  private volatile Lifecycle lifecycle = Lifecycle.NEW;
  private Thread writer;
  private volatile boolean recordAfterCloseLogged;

  /**
   * @param dir             directory of the history file (scheme-less: local; see
   *                        {@link StateFile}), created on first write; null to persist nothing
   * @param conf            the RM's configuration, for the file system
   * @param flushIntervalMs shortest time between two writes, > 0
   * @param maxEntries      job names kept, > 0
   */
  public LearnedHistoryStore(Path dir, Configuration conf, long flushIntervalMs, int maxEntries) {
    if (flushIntervalMs <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATE_FLUSH_INTERVAL_MS + " must be > 0, got "
          + flushIntervalMs);
    }
    if (maxEntries <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATE_LEARNED_MAX_ENTRIES
          + " must be > 0, got " + maxEntries);
    }
    this.file = dir == null ? null : new StateFile(dir, FILE_NAME, conf);
    this.flushIntervalMs = flushIntervalMs;
    this.maxEntries = maxEntries;
  }

  /** A store as the {@code state.*} settings configure it. */
  public static LearnedHistoryStore fromSettings(ShimSettings settings, Configuration conf) {
    return new LearnedHistoryStore(settings.stateDir(), conf, settings.stateFlushIntervalMs(),
        settings.learnedMaxEntries());
  }

  /** Whether anything is read or written (a directory was given). */
  public boolean isPersistent() {
    return file != null;
  }

  /** The history file, or null when not persistent. */
  public Path file() {
    return file == null ? null : file.path();
  }

  // ------------------------------------------------------------------------ load

  /**
   * Reads the history file, seeds the in-memory state with it, and returns it most recently
   * updated first (at most {@code maxEntries}; for a duplicated name the first entry wins).
   * Never throws for a bad file: a missing file gives an empty list; an unreadable one is
   * logged at ERROR and gives an empty list; a corrupt one is also moved aside (see the class
   * comment). Call it before the first {@link #record}: loaded entries never replace ones
   * recorded earlier.
   */
  public List<LearnedRatio> load() {
    if (file == null) {
      return List.of();
    }
    file.deleteStaleTempFiles();
    Optional<byte[]> bytes;
    try {
      bytes = file.read();
    } catch (IOException e) {
      LOG.error("Cannot read learned history file {} ({}); starting with no learned history",
          file.path(), e.toString());
      return List.of();
    }
    if (bytes.isEmpty()) {
      LOG.info("No learned history at {} yet; starting with none", file.path());
      return List.of();
    }
    List<LearnedRatio> parsed;
    try {
      parsed = parse(bytes.get());
    } catch (CorruptHistoryException e) {
      Optional<Path> aside = file.moveAside();
      aside.ifPresent(p -> corruptCopy = p);
      LOG.error("Learned history file {} is corrupt: {}. {} Starting with no learned history.",
          file.path(), e.getMessage(),
          aside.map(p -> "Moved it aside to " + p + ".").orElse("Could not move it aside; "
              + "the next write replaces it."));
      return List.of();
    }

    Map<String, LearnedRatio> byName = new LinkedHashMap<>();
    for (LearnedRatio r : parsed) {
      if (byName.size() == maxEntries) {
        break;
      }
      byName.putIfAbsent(r.jobName(), r);
    }
    List<LearnedRatio> loaded = List.copyOf(byName.values());
    // The file lists the newest first; handing out sequence numbers from the oldest keeps
    // that order for the size bound.
    for (int i = loaded.size() - 1; i >= 0; i--) {
      LearnedRatio r = loaded.get(i);
      entries.putIfAbsent(r.jobName(), new Slot(r, seq.incrementAndGet()));
    }
    LOG.info("Loaded {} learned job histories (shuffle ratios, task times) from {}",
        loaded.size(), file.path());
    return loaded;
  }

  private static List<LearnedRatio> parse(byte[] bytes) throws CorruptHistoryException {
    JsonNode root;
    try {
      root = JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new CorruptHistoryException("not valid JSON (" + e.getOriginalMessage() + ")"
          + (at != null ? " at line " + at.getLineNr() + ", column " + at.getColumnNr() : ""));
    } catch (IOException e) {
      throw new CorruptHistoryException("not valid JSON (" + e.getMessage() + ")");
    }
    if (root == null || root.isMissingNode()) {
      throw new CorruptHistoryException("the file is empty");
    }
    if (!root.isArray()) {
      throw new CorruptHistoryException("expected a JSON array of {job_name, ratio, runs}, "
          + "found " + root.getNodeType().toString().toLowerCase(java.util.Locale.ROOT));
    }
    List<LearnedRatio> out = new ArrayList<>(root.size());
    for (int i = 0; i < root.size(); i++) {
      JsonNode e = root.get(i);
      String where = "entry " + i + ": ";
      if (!e.isObject()) {
        throw new CorruptHistoryException(where + "not an object");
      }
      JsonNode name = e.get("job_name");
      JsonNode ratio = e.get("ratio");
      JsonNode runs = e.get("runs");
      if (name == null || !name.isTextual()) {
        throw new CorruptHistoryException(where + "\"job_name\" missing or not a string");
      }
      if (ratio == null || !ratio.isNumber()) {
        throw new CorruptHistoryException(where + "\"ratio\" missing or not a number");
      }
      if (runs == null || !runs.isIntegralNumber() || !runs.canConvertToInt()) {
        throw new CorruptHistoryException(where + "\"runs\" missing or not an integer "
            + "in range");
      }
      // Task times and their run count are absent from files written before they were kept.
      JsonNode profileRuns = e.get("profile_runs");
      if (profileRuns != null && (!profileRuns.isIntegralNumber()
          || !profileRuns.canConvertToInt())) {
        throw new CorruptHistoryException(where + "\"profile_runs\" not an integer in range");
      }
      try {
        out.add(new LearnedRatio(name.asText(), ratio.asDouble(), runs.asInt(),
            optionalNumber(e, "map_ms", where), optionalNumber(e, "reduce_ms", where),
            profileRuns == null ? 0 : profileRuns.asInt()));
      } catch (IllegalArgumentException ex) {
        throw new CorruptHistoryException(where + ex.getMessage());
      }
    }
    return out;
  }

  private static OptionalDouble optionalNumber(JsonNode entry, String field, String where)
      throws CorruptHistoryException {
    JsonNode value = entry.get(field);
    if (value == null) {
      return OptionalDouble.empty();
    }
    if (!value.isNumber()) {
      throw new CorruptHistoryException(where + "\"" + field + "\" not a number");
    }
    return OptionalDouble.of(value.asDouble());
  }

  // ------------------------------------------------------------------------ record

  /**
   * Takes newly learned ratios (the {@code learned} list of an offer response). Each
   * replaces what was known for its job name: the core already merged old and new runs.
   * Cheap and non-blocking; does nothing when not persistent or after {@link #close()}.
   */
  public void record(List<LearnedRatio> learned) {
    if (file == null || learned == null || learned.isEmpty()) {
      return;
    }
    if (lifecycle == Lifecycle.CLOSED) {
      if (!recordAfterCloseLogged) {
        recordAfterCloseLogged = true;
        LOG.warn("Learned ratios recorded after the history store was closed are not kept");
      }
      return;
    }
    boolean changed = false;
    for (LearnedRatio r : learned) {
      if (r == null) {
        continue;
      }
      Slot old = entries.get(r.jobName());
      if (old != null && old.value().equals(r)) {
        continue;
      }
      entries.put(r.jobName(), new Slot(r, seq.incrementAndGet()));
      changed = true;
    }
    if (changed) {
      // After the puts: a writer that sees the new version also sees the entries; one that
      // read the version before may or may not include them, and writes again next time.
      version.incrementAndGet();
    }
  }

  /** The current state, most recently updated first, at most {@code maxEntries}. */
  public List<LearnedRatio> snapshot() {
    List<Map.Entry<String, Slot>> all = newestFirst();
    List<LearnedRatio> out = new ArrayList<>(Math.min(all.size(), maxEntries));
    for (int i = 0; i < all.size() && i < maxEntries; i++) {
      out.add(all.get(i).getValue().value());
    }
    return Collections.unmodifiableList(out);
  }

  private List<Map.Entry<String, Slot>> newestFirst() {
    List<Map.Entry<String, Slot>> all = new ArrayList<>(entries.entrySet());
    all.sort(Comparator.comparingLong((Map.Entry<String, Slot> e) -> e.getValue().seq())
        .reversed());
    return all;
  }

  // ------------------------------------------------------------------------ write

  /**
   * Writes the file now if anything changed since the last write. Failures are logged
   * (ERROR for the first of a run of failures, DEBUG after) and counted, never thrown: the
   * state stays dirty and the next flush tries again.
   *
   * @return whether the file was written
   */
  public boolean flush() {
    if (file == null) {
      return false;
    }
    writeLock.lock();
    try {
      long v = version.get();
      if (v == persistedVersion) {
        return false;
      }
      List<LearnedRatio> state = trimAndSnapshot();
      try {
        writeAtomically(state);
      } catch (IOException | RuntimeException e) {
        writeFailures.incrementAndGet();
        if (!failing) {
          failing = true;
          LOG.error("Cannot write learned history {} ({}); keeping the previous file and "
              + "retrying at the next flush", file.path(), e.toString());
        } else {
          LOG.debug("Still cannot write learned history {}: {}", file.path(), e.toString());
        }
        return false;
      }
      if (failing) {
        failing = false;
        LOG.info("Learned history {} written again after earlier failures", file.path());
      }
      persistedVersion = v;
      writes.incrementAndGet();
      return true;
    } finally {
      writeLock.unlock();
    }
  }

  /** Applies the size bound to the map and returns what is left, newest first. */
  private List<LearnedRatio> trimAndSnapshot() {
    List<Map.Entry<String, Slot>> all = newestFirst();
    List<LearnedRatio> keep = new ArrayList<>(Math.min(all.size(), maxEntries));
    for (int i = 0; i < all.size(); i++) {
      Map.Entry<String, Slot> e = all.get(i);
      if (i < maxEntries) {
        keep.add(e.getValue().value());
      } else {
        // Conditional remove: if record() refreshed the name meanwhile, it stays.
        entries.remove(e.getKey(), e.getValue());
      }
    }
    return keep;
  }

  private void writeAtomically(List<LearnedRatio> state) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream(64 + state.size() * 96);
    try (JsonGenerator gen = JSON.getFactory().createGenerator(buf)) {
      gen.useDefaultPrettyPrinter();
      gen.writeStartArray();
      for (LearnedRatio r : state) {
        gen.writeStartObject();
        gen.writeStringField("job_name", r.jobName());
        gen.writeNumberField("ratio", r.ratio());
        gen.writeNumberField("runs", r.runs());
        if (r.mapMs().isPresent()) {
          gen.writeNumberField("map_ms", r.mapMs().getAsDouble());
        }
        if (r.reduceMs().isPresent()) {
          gen.writeNumberField("reduce_ms", r.reduceMs().getAsDouble());
        }
        // An entry without task times is written as before they were kept.
        if (r.profileRuns() > 0) {
          gen.writeNumberField("profile_runs", r.profileRuns());
        }
        gen.writeEndObject();
      }
      gen.writeEndArray();
    }
    buf.write('\n');
    file.replace(buf.toByteArray());
  }

  // ------------------------------------------------------------------------ lifecycle

  /** Starts the background writer. Does nothing when not persistent or already started. */
  public void start() {
    synchronized (lifecycleLock) {
      if (lifecycle == Lifecycle.CLOSED) {
        throw new IllegalStateException("learned history store was closed");
      }
      if (lifecycle == Lifecycle.RUNNING) {
        return;
      }
      lifecycle = Lifecycle.RUNNING;
      if (file == null) {
        return;
      }
      writer = new Thread(this::writeLoop, THREAD_NAME);
      writer.setDaemon(true);
      writer.start();
    }
  }

  private void writeLoop() {
    try {
      while (!closing.await(flushIntervalMs, TimeUnit.MILLISECONDS)) {
        try {
          flush();
        } catch (RuntimeException e) {
          LOG.warn("Learned history write failed", e);
        }
      }
    } catch (InterruptedException e) {
      // JVM shutdown; close() still writes the final state if it gets to run.
    }
  }

  /**
   * Stops the writer and writes the final state. Idempotent; later {@link #record} calls
   * are ignored.
   */
  @Override
  public void close() {
    Thread toJoin;
    synchronized (lifecycleLock) {
      if (lifecycle == Lifecycle.CLOSED) {
        return;
      }
      lifecycle = Lifecycle.CLOSED;
      toJoin = writer;
    }
    closing.countDown();
    if (toJoin != null) {
      try {
        toJoin.join(JOIN_TIMEOUT_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // The write lock orders this after any write the thread was still doing.
    flush();
  }

  // ------------------------------------------------------------------------ metrics

  /** Successful writes of the file. */
  public long writes() {
    return writes.get();
  }

  /** Failed attempts to write the file. */
  public long writeFailures() {
    return writeFailures.get();
  }

  /** Where {@link #load()} moved a corrupt file, if it did. */
  public Optional<Path> corruptCopy() {
    return Optional.ofNullable(corruptCopy);
  }

  /** Replaces the pre-rename hook; tests use it to fail a write half way. */
  void setBeforeRenameForTesting(StateFile.BeforeRename hook) {
    file.setBeforeRenameForTesting(hook);
  }
}
