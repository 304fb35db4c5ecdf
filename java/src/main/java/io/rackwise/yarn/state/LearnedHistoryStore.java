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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the shuffle ratios the core has learned for recurring job names across
 * ResourceManager restarts.
 *
 * <h2>File</h2>
 * {@code <dir>/learned-history.json}: a JSON array of {@code {"job_name": str, "ratio": double,
 * "runs": int}} (the core's {@code LearnedRatio}), most recently updated first. It is only ever
 * replaced whole: written to a temporary file in the same directory, forced to disk, then
 * renamed over the old one with an atomic move, so a crash or a full disk leaves either the
 * old file or the new one, never a partial one. Unknown fields are ignored on reading, so a
 * later version may add some.
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
 * <p>The directory should be local to each RM. With RM HA, the standby starts with whatever
 * its own directory holds, unless the operator points both RMs at shared storage.
 */
public final class LearnedHistoryStore implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(LearnedHistoryStore.class);

  public static final String FILE_NAME = "learned-history.json";
  static final String TEMP_SUFFIX = ".tmp";
  static final String CORRUPT_INFIX = ".corrupt-";
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

  /** Test seam: runs after the temporary file is complete and before the rename. */
  interface BeforeRename {
    void run(Path tempFile) throws IOException;
  }

  private enum Lifecycle { NEW, RUNNING, CLOSED }

  private final Path dir;
  private final Path file;
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
  private BeforeRename beforeRename = tmp -> { };

  private final AtomicLong writes = new AtomicLong();
  private final AtomicLong writeFailures = new AtomicLong();
  private volatile Path corruptCopy;

  private final Object lifecycleLock = new Object();
  private final CountDownLatch closing = new CountDownLatch(1);
  private volatile Lifecycle lifecycle = Lifecycle.NEW;
  private Thread writer;
  private volatile boolean recordAfterCloseLogged;

  /**
   * @param dir             directory of the history file, created on first write; null to
   *                        persist nothing
   * @param flushIntervalMs shortest time between two writes, > 0
   * @param maxEntries      job names kept, > 0
   */
  public LearnedHistoryStore(Path dir, long flushIntervalMs, int maxEntries) {
    if (flushIntervalMs <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATE_FLUSH_INTERVAL_MS + " must be > 0, got "
          + flushIntervalMs);
    }
    if (maxEntries <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATE_LEARNED_MAX_ENTRIES
          + " must be > 0, got " + maxEntries);
    }
    this.dir = dir;
    this.file = dir == null ? null : dir.resolve(FILE_NAME);
    this.flushIntervalMs = flushIntervalMs;
    this.maxEntries = maxEntries;
  }

  /** A store as the {@code state.*} settings configure it. */
  public static LearnedHistoryStore fromSettings(ShimSettings settings) {
    return new LearnedHistoryStore(settings.stateDir(), settings.stateFlushIntervalMs(),
        settings.learnedMaxEntries());
  }

  /** Whether anything is read or written (a directory was given). */
  public boolean isPersistent() {
    return dir != null;
  }

  /** The history file, or null when not persistent. */
  public Path file() {
    return file;
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
    if (dir == null) {
      return List.of();
    }
    deleteStaleTempFiles();
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      LOG.info("No learned history at {} yet; starting with none", file);
      return List.of();
    } catch (IOException e) {
      LOG.error("Cannot read learned history file {} ({}); starting with no learned history",
          file, e.toString());
      return List.of();
    }
    List<LearnedRatio> parsed;
    try {
      parsed = parse(bytes);
    } catch (CorruptHistoryException e) {
      Path aside = moveAside();
      LOG.error("Learned history file {} is corrupt: {}. {} Starting with no learned history.",
          file, e.getMessage(),
          aside != null ? "Moved it aside to " + aside + "." : "Could not move it aside; "
              + "the next write replaces it.");
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
    LOG.info("Loaded {} learned shuffle ratios from {}", loaded.size(), file);
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
      try {
        out.add(new LearnedRatio(name.asText(), ratio.asDouble(), runs.asInt()));
      } catch (IllegalArgumentException ex) {
        throw new CorruptHistoryException(where + ex.getMessage());
      }
    }
    return out;
  }

  /** Renames the corrupt file out of the way, keeping it for inspection. */
  private Path moveAside() {
    long stamp = System.currentTimeMillis();
    for (int attempt = 0; attempt < 100; attempt++) {
      Path target = dir.resolve(FILE_NAME + CORRUPT_INFIX + stamp
          + (attempt == 0 ? "" : "-" + attempt));
      try {
        Files.move(file, target);
        corruptCopy = target;
        return target;
      } catch (FileAlreadyExistsException e) {
        // Two corrupt starts within a millisecond; try the next name.
      } catch (IOException e) {
        LOG.error("Cannot move corrupt learned history file {} to {}: {}", file, target,
            e.toString());
        return null;
      }
    }
    return null;
  }

  /** Temporary files of a write the previous process did not finish. */
  private void deleteStaleTempFiles() {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (DirectoryStream<Path> stale =
             Files.newDirectoryStream(dir, FILE_NAME + ".*" + TEMP_SUFFIX)) {
      for (Path p : stale) {
        try {
          Files.deleteIfExists(p);
          LOG.info("Deleted {}, left over from an unfinished write", p);
        } catch (IOException e) {
          LOG.warn("Cannot delete leftover temporary file {}: {}", p, e.toString());
        }
      }
    } catch (IOException e) {
      LOG.warn("Cannot list {} for leftover temporary files: {}", dir, e.toString());
    }
  }

  // ------------------------------------------------------------------------ record

  /**
   * Takes newly learned ratios (the {@code learned} list of an offer response). Each
   * replaces what was known for its job name: the core already merged old and new runs.
   * Cheap and non-blocking; does nothing when not persistent or after {@link #close()}.
   */
  public void record(List<LearnedRatio> learned) {
    if (dir == null || learned == null || learned.isEmpty()) {
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
    if (dir == null) {
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
              + "retrying at the next flush", file, e.toString());
        } else {
          LOG.debug("Still cannot write learned history {}: {}", file, e.toString());
        }
        return false;
      }
      if (failing) {
        failing = false;
        LOG.info("Learned history {} written again after earlier failures", file);
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
        gen.writeEndObject();
      }
      gen.writeEndArray();
    }
    buf.write('\n');

    Files.createDirectories(dir);
    // Same directory as the target: a rename is only atomic within one file system.
    Path tmp = Files.createTempFile(dir, FILE_NAME + ".", TEMP_SUFFIX);
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ByteBuffer bytes = ByteBuffer.wrap(buf.toByteArray());
        while (bytes.hasRemaining()) {
          ch.write(bytes);
        }
        // Data on disk before the rename makes it visible; otherwise a power cut right
        // after the rename could leave the new name pointing at an empty file.
        ch.force(true);
      }
      beforeRename.run(tmp);
      // No fallback to a plain move: that could leave the reader a half-replaced file,
      // which is exactly what this class promises not to do. Every local file system
      // supports it; one that does not gets a logged write failure.
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException e) {
        LOG.warn("Cannot delete temporary file {}: {}", tmp, e.toString());
      }
    }
    syncDirectory();
  }

  /** Makes the rename itself durable; best effort, as not every platform allows it. */
  private void syncDirectory() {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException | RuntimeException e) {
      LOG.debug("Cannot sync directory {}: {}", dir, e.toString());
    }
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
      if (dir == null) {
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
  void setBeforeRenameForTesting(BeforeRename hook) {
    writeLock.lock();
    try {
      beforeRename = hook == null ? tmp -> { } : hook;
    } finally {
      writeLock.unlock();
    }
  }
}
