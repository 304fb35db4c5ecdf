package io.rackwise.yarn.state;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static io.rackwise.yarn.testing.Waiting.threadAlive;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.config.RackwiseConfigException;
import io.rackwise.yarn.config.ShimSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LearnedHistoryStoreTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long NO_BACKGROUND_FLUSH = 3_600_000;

  @TempDir
  Path dir;

  private final List<LearnedHistoryStore> stores = new ArrayList<>();

  @AfterEach
  void closeStores() {
    stores.forEach(LearnedHistoryStore::close);
    assertFalse(writerThreadAlive(), "a history writer thread outlived its test");
  }

  private static final Configuration CONF = new Configuration(false);

  /** The Hadoop path of a local directory or file. */
  private static org.apache.hadoop.fs.Path hadoop(Path local) {
    return new org.apache.hadoop.fs.Path(local.toUri());
  }

  private LearnedHistoryStore store(long flushIntervalMs, int maxEntries) {
    LearnedHistoryStore s =
        new LearnedHistoryStore(hadoop(dir), CONF, flushIntervalMs, maxEntries);
    stores.add(s);
    return s;
  }

  private Path file() {
    return dir.resolve(LearnedHistoryStore.FILE_NAME);
  }

  @Test
  void roundTripThroughTheFile() throws Exception {
    LearnedHistoryStore a = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(), a.load(), "no file yet");
    a.record(List.of(new LearnedRatio("etl-daily", 2.5, 3), new LearnedRatio("grep", 0.01, 1)));
    a.record(List.of(new LearnedRatio("etl-daily", 2.25, 4)));
    assertTrue(a.flush());

    // The file has the core's field names, newest update first.
    JsonNode root = JSON.readTree(file().toFile());
    assertTrue(root.isArray());
    assertEquals(2, root.size());
    assertEquals("etl-daily", root.get(0).get("job_name").asText());
    assertEquals(2.25, root.get(0).get("ratio").asDouble());
    assertEquals(4, root.get(0).get("runs").asInt());
    assertEquals("grep", root.get(1).get("job_name").asText());
    assertEquals(3, root.get(0).size(), "only job_name, ratio, runs");

    LearnedHistoryStore b = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(new LearnedRatio("etl-daily", 2.25, 4),
        new LearnedRatio("grep", 0.01, 1)), b.load());
  }

  @Test
  void taskTimesRoundTripThroughTheFile() throws Exception {
    LearnedHistoryStore a = store(NO_BACKGROUND_FLUSH, 100);
    a.load();
    LearnedRatio grep = new LearnedRatio("grep", 0.0, 0, OptionalDouble.of(20_000.0),
        OptionalDouble.of(61_500.5), 3);
    LearnedRatio mapOnly = new LearnedRatio("map-only", 0.5, 2, OptionalDouble.of(1_000.0),
        OptionalDouble.empty(), 1);
    a.record(List.of(grep, mapOnly));
    assertTrue(a.flush());

    JsonNode root = JSON.readTree(file().toFile());
    JsonNode written = root.get(0).get("job_name").asText().equals("grep") ? root.get(0)
        : root.get(1);
    assertEquals(20_000.0, written.get("map_ms").asDouble());
    assertEquals(61_500.5, written.get("reduce_ms").asDouble());
    assertEquals(3, written.get("profile_runs").asInt());

    LearnedHistoryStore b = store(NO_BACKGROUND_FLUSH, 100);
    List<LearnedRatio> loaded = b.load();
    assertEquals(2, loaded.size());
    assertTrue(loaded.containsAll(List.of(grep, mapOnly)), loaded.toString());
  }

  @Test
  void aFileWrittenBeforeTaskTimesWereKeptLoadsWithoutThem() throws Exception {
    Files.writeString(file(), "[\n  {\n    \"job_name\" : \"etl-daily\",\n    \"ratio\" : 2.25,\n"
        + "    \"runs\" : 4\n  }\n]\n");
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(new LearnedRatio("etl-daily", 2.25, 4, OptionalDouble.empty(),
        OptionalDouble.empty(), 0)), s.load());
    assertTrue(s.corruptCopy().isEmpty());
  }

  @Test
  void restartLoadsWhatThePreviousInstanceWroteOnClose() {
    LearnedHistoryStore a = store(NO_BACKGROUND_FLUSH, 100);
    a.load();
    a.start();
    a.record(List.of(new LearnedRatio("sort", 1.0, 10)));
    a.close(); // no explicit flush: close() writes the final state
    assertEquals(1, a.writes());

    LearnedHistoryStore b = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(new LearnedRatio("sort", 1.0, 10)), b.load());
    assertEquals(b.load(), b.snapshot());
  }

  @Test
  void loadedEntriesSurviveTheNextWrite() {
    LearnedHistoryStore a = store(NO_BACKGROUND_FLUSH, 100);
    a.record(List.of(new LearnedRatio("old-job", 3.0, 7)));
    a.flush();

    LearnedHistoryStore b = store(NO_BACKGROUND_FLUSH, 100);
    b.load();
    b.record(List.of(new LearnedRatio("new-job", 0.5, 1)));
    b.flush();

    LearnedHistoryStore c = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(new LearnedRatio("new-job", 0.5, 1), new LearnedRatio("old-job", 3.0, 7)),
        c.load());
  }

  @Test
  void backgroundWriterPersistsChangesAndOnlyChanges() throws Exception {
    LearnedHistoryStore s = store(20, 100);
    s.load();
    s.start();
    s.start(); // idempotent
    assertTrue(writerThreadAlive());

    s.record(List.of(new LearnedRatio("wordcount", 1.7, 2)));
    awaitTrue(() -> s.writes() == 1, "the first background write");
    assertEquals("wordcount", JSON.readTree(file().toFile()).get(0).get("job_name").asText());

    // Recording what is already known changes nothing, so nothing is rewritten: had it changed
    // something, either the writer would have written it by now or this flush would.
    s.record(List.of(new LearnedRatio("wordcount", 1.7, 2)));
    assertFalse(s.flush(), "nothing new to write");
    assertEquals(1, s.writes());

    s.record(List.of(new LearnedRatio("wordcount", 1.9, 3)));
    awaitTrue(() -> s.writes() == 2, "the second background write");
    s.close();
    assertFalse(writerThreadAlive());
    assertEquals(2, s.writes(), "close() has nothing left to write");
    s.close(); // idempotent
    assertThrows(IllegalStateException.class, s::start);
  }

  @Test
  void recordAfterCloseIsIgnored() {
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 100);
    s.close();
    s.record(List.of(new LearnedRatio("late", 1.0, 1)));
    assertFalse(s.flush());
    assertFalse(Files.exists(file()));
  }

  @Test
  void aFailedWriteLeavesThePreviousFileWhole() throws Exception {
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 100);
    s.record(List.of(new LearnedRatio("a", 1.0, 1)));
    assertTrue(s.flush());
    byte[] before = Files.readAllBytes(file());

    // Fail after the temporary file is complete, just before the rename.
    AtomicInteger calls = new AtomicInteger();
    s.setBeforeRenameForTesting(tmp -> {
      calls.incrementAndGet();
      assertTrue(Files.size(Path.of(tmp.toUri())) > 0);
      throw new IOException("disk full (simulated)");
    });
    s.record(List.of(new LearnedRatio("b", 2.0, 1)));
    assertFalse(s.flush());

    assertEquals(1, calls.get());
    assertEquals(1, s.writeFailures());
    assertArrayEquals(before, Files.readAllBytes(file()), "old file untouched");
    assertEquals(List.of(LearnedHistoryStore.FILE_NAME), listDir(), "temp file cleaned up");

    // The change is still pending and goes out once writing works again.
    s.setBeforeRenameForTesting(null);
    assertTrue(s.flush());
    assertEquals(List.of(new LearnedRatio("b", 2.0, 1), new LearnedRatio("a", 1.0, 1)),
        store(NO_BACKGROUND_FLUSH, 100).load());
  }

  @Test
  void readersNeverSeeAPartialFile() throws Exception {
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 20_000);
    // Large enough (~1 MB) that a non-atomic write would be visible half-done.
    List<LearnedRatio> batch = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      batch.add(new LearnedRatio("recurring-job-with-a-longish-name-" + i, i / 7.0, i));
    }
    s.record(batch);
    s.flush();

    AtomicBoolean done = new AtomicBoolean();
    List<String> problems = new CopyOnWriteArrayList<>();
    AtomicInteger reads = new AtomicInteger();
    Thread reader = new Thread(() -> {
      while (!done.get()) {
        try {
          JsonNode root = JSON.readTree(Files.readAllBytes(file()));
          if (root == null || !root.isArray() || root.size() != 10_000) {
            problems.add("incomplete document: " + (root == null ? null : root.size()));
          }
          reads.incrementAndGet();
        } catch (IOException e) {
          problems.add(e.toString());
        }
      }
    }, "history-reader");
    reader.start();
    try {
      for (int round = 1; round <= 30; round++) {
        int r = round;
        s.record(List.of(new LearnedRatio("recurring-job-with-a-longish-name-" + (r * 97),
            r, r)));
        assertTrue(s.flush());
      }
    } finally {
      done.set(true);
      reader.join(10_000);
    }
    assertEquals(List.of(), problems);
    assertTrue(reads.get() > 0);
  }

  /** Contents that are not a learned history, and what the error must say about each. */
  static Stream<Arguments> corruptContents() {
    return Stream.of(
        Arguments.of("truncated", "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": 1}, {\"jo",
            "not valid JSON"),
        Arguments.of("empty", "", "empty"),
        Arguments.of("object instead of array", "{\"job_name\": \"a\"}", "expected a JSON array"),
        Arguments.of("trailing garbage", "[] xyz", "not valid JSON"),
        Arguments.of("entry not an object", "[1]", "entry 0: not an object"),
        Arguments.of("ratio as text",
            "[{\"job_name\": \"a\", \"ratio\": 1, \"runs\": 1},"
                + " {\"job_name\": \"b\", \"ratio\": \"NaN\", \"runs\": 1}]",
            "entry 1: \"ratio\""),
        Arguments.of("negative runs", "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": -2}]",
            "runs >= 0"),
        Arguments.of("fractional runs", "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": 1.5}]",
            "\"runs\""),
        Arguments.of("blank name", "[{\"job_name\": \" \", \"ratio\": 1.0, \"runs\": 1}]",
            "blank job name"),
        Arguments.of("missing name", "[{\"ratio\": 1.0, \"runs\": 1}]", "\"job_name\""),
        Arguments.of("map time as text",
            "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": 1, \"map_ms\": \"slow\"}]",
            "entry 0: \"map_ms\" not a number"),
        Arguments.of("negative reduce time",
            "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": 1, \"reduce_ms\": -5}]",
            "reduce task time of 'a' must be a finite number of ms >= 0"),
        Arguments.of("fractional profile runs",
            "[{\"job_name\": \"a\", \"ratio\": 1.0, \"runs\": 1, \"profile_runs\": 0.5}]",
            "\"profile_runs\""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corruptContents")
  void aCorruptFileIsMovedAsideAndTheStoreStartsEmpty(String name, String content,
                                                     String expectedProblem) throws Exception {
    Files.write(file(), content.getBytes(StandardCharsets.UTF_8));
    List<LoggingEvent> errors = captureErrors(() -> {
      LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 100);
      assertEquals(List.of(), s.load());

      Path aside = Path.of(s.corruptCopy().orElseThrow().toUri());
      assertFalse(Files.exists(file()), "the corrupt file is no longer where the next start "
          + "would read it");
      assertTrue(aside.getFileName().toString()
          .matches("learned-history\\.json\\.corrupt-\\d+"), aside.toString());
      assertEquals(content, Files.readString(aside), "kept byte for byte for inspection");

      // The RM carries on: new learning is written to a fresh, valid file.
      s.record(List.of(new LearnedRatio("after", 1.5, 1)));
      assertTrue(s.flush());
      assertEquals(List.of(new LearnedRatio("after", 1.5, 1)),
          store(NO_BACKGROUND_FLUSH, 100).load());
    });
    assertEquals(1, errors.size(), "exactly one ERROR");
    String message = errors.get(0).getRenderedMessage();
    assertTrue(message.contains(file().toString()), "names the file: " + message);
    assertTrue(message.contains(expectedProblem), "names the problem: " + message);
    assertTrue(message.contains("Moved it aside to "), message);
  }

  @Test
  void unknownFieldsAndDuplicateNamesAreTolerated() throws Exception {
    // A later version may add fields; a hand-edited file may repeat a name (first wins, as
    // the file is newest first).
    Files.writeString(file(), "[{\"job_name\": \"a\", \"ratio\": 1.5, \"runs\": 2, "
        + "\"note\": \"v2 field\"}, {\"job_name\": \"a\", \"ratio\": 9, \"runs\": 9},"
        + " {\"job_name\": \"b\", \"ratio\": 0, \"runs\": 0}]");
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 100);
    assertEquals(List.of(new LearnedRatio("a", 1.5, 2), new LearnedRatio("b", 0.0, 0)),
        s.load());
    assertTrue(s.corruptCopy().isEmpty());
  }

  @Test
  void onlyTheMostRecentlyUpdatedNamesAreKept() {
    LearnedHistoryStore s = store(NO_BACKGROUND_FLUSH, 3);
    for (int i = 0; i < 5; i++) {
      s.record(List.of(new LearnedRatio("job-" + i, i, 1)));
    }
    // job-0 is refreshed, so it is the newest and stays.
    s.record(List.of(new LearnedRatio("job-0", 0.5, 2)));
    s.flush();
    assertEquals(List.of("job-0", "job-4", "job-3"),
        store(NO_BACKGROUND_FLUSH, 100).load().stream().map(LearnedRatio::jobName)
            .collect(Collectors.toList()));
    assertEquals(3, s.snapshot().size());
  }

  @Test
  void loadKeepsAtMostTheBound() throws Exception {
    LearnedHistoryStore big = store(NO_BACKGROUND_FLUSH, 100);
    for (int i = 0; i < 10; i++) {
      big.record(List.of(new LearnedRatio("job-" + i, 1, 1)));
    }
    big.flush();
    List<LearnedRatio> loaded = store(NO_BACKGROUND_FLUSH, 4).load();
    assertEquals(List.of("job-9", "job-8", "job-7", "job-6"),
        loaded.stream().map(LearnedRatio::jobName).collect(Collectors.toList()));
  }

  @Test
  void leftoverTemporaryFilesAreRemovedAtLoad() throws Exception {
    Path stale = dir.resolve(LearnedHistoryStore.FILE_NAME + ".123456" 
        + StateFile.TEMP_SUFFIX);
    Files.writeString(stale, "[{\"job_na");
    Path unrelated = dir.resolve("other.tmp");
    Files.writeString(unrelated, "keep me");
    store(NO_BACKGROUND_FLUSH, 100).load();
    assertFalse(Files.exists(stale));
    assertTrue(Files.exists(unrelated));
  }

  @Test
  void theDirectoryIsCreatedOnFirstWrite() throws Exception {
    Path nested = dir.resolve("rm").resolve("rackwise");
    LearnedHistoryStore s =
        new LearnedHistoryStore(hadoop(nested), CONF, NO_BACKGROUND_FLUSH, 100);
    stores.add(s);
    assertEquals(List.of(), s.load());
    s.record(List.of(new LearnedRatio("x", 1, 1)));
    assertTrue(s.flush());
    assertTrue(Files.isRegularFile(nested.resolve(LearnedHistoryStore.FILE_NAME)));
  }

  @Test
  void withoutADirectoryNothingIsPersisted() throws Exception {
    LearnedHistoryStore s = new LearnedHistoryStore(null, CONF, 10, 100);
    stores.add(s);
    assertFalse(s.isPersistent());
    assertNull(s.file());
    assertEquals(List.of(), s.load());
    s.start();
    assertFalse(writerThreadAlive(), "no directory, no writer thread");
    s.record(List.of(new LearnedRatio("x", 1, 1)));
    assertFalse(s.flush());
    assertEquals(List.of(), s.snapshot());
    s.close();
    assertEquals(List.of(), listDir());
  }

  @Test
  void theStoreFollowsTheStateSettings() throws Exception {
    Configuration conf = new Configuration(false);
    assertFalse(LearnedHistoryStore.fromSettings(ShimSettings.from(conf), conf).isPersistent());
    conf.set(ShimSettings.STATE_DIR, "  ");
    assertNull(ShimSettings.from(conf).stateDir());
    conf.set(ShimSettings.STATE_DIR, " " + dir + " ");
    conf.set(ShimSettings.STATE_FLUSH_INTERVAL_MS, "1000");
    LearnedHistoryStore s = LearnedHistoryStore.fromSettings(ShimSettings.from(conf), conf);
    stores.add(s);
    // A path without a scheme is the RM's local disk, whatever fs.defaultFS names.
    assertEquals(hadoop(file()), s.file());
    conf.set("fs.defaultFS", "hdfs://namenode:8020");
    LearnedHistoryStore local = LearnedHistoryStore.fromSettings(ShimSettings.from(conf), conf);
    stores.add(local);
    assertEquals(hadoop(file()), local.file());

    conf.set(ShimSettings.STATE_DIR, "nosuchfs://bucket/rackwise");
    RackwiseConfigException unknownScheme =
        assertThrows(RackwiseConfigException.class, () -> ShimSettings.from(conf));
    assertTrue(unknownScheme.getMessage().contains("yarn.scheduler.rackwise.state.dir: value "
        + "'nosuchfs://bucket/rackwise' names file system scheme 'nosuchfs', which this "
        + "ResourceManager cannot load"), unknownScheme.getMessage());
    conf.set(ShimSettings.STATE_DIR, dir.toString());

    conf.set(ShimSettings.STATE_LEARNED_MAX_ENTRIES, "0");
    RackwiseConfigException refused =
        assertThrows(RackwiseConfigException.class, () -> ShimSettings.from(conf));
    assertTrue(refused.getMessage().contains("yarn.scheduler.rackwise.state.learned.max-entries:"
        + " value '0' must be a positive whole number"), refused.getMessage());
  }

  @Test
  void invalidValuesAreRefusedBeforeTheyCanReachTheFile() {
    assertThrows(IllegalArgumentException.class, () -> new LearnedRatio("a", Double.NaN, 1));
    assertThrows(IllegalArgumentException.class,
        () -> new LearnedRatio("a", Double.POSITIVE_INFINITY, 1));
    assertThrows(IllegalArgumentException.class, () -> new LearnedRatio("a", -0.5, 1));
    assertThrows(IllegalArgumentException.class, () -> new LearnedRatio("a", 1, -1));
    assertThrows(IllegalArgumentException.class, () -> new LearnedRatio(" ", 1, 1));
    assertThrows(NullPointerException.class, () -> new LearnedRatio(null, 1, 1));
    assertThrows(IllegalArgumentException.class,
        () -> new LearnedHistoryStore(hadoop(dir), CONF, 0, 1));
    assertThrows(IllegalArgumentException.class,
        () -> new LearnedHistoryStore(hadoop(dir), CONF, 1, 0));
  }

  // ----------------------------------------------------------------- helpers

  private List<String> listDir() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  private static boolean writerThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(LearnedHistoryStore.THREAD_NAME) && t.isAlive());
  }


  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * Runs {@code body} and returns the ERROR events the store logged meanwhile. Hadoop's test
   * classpath binds SLF4J to reload4j, so an appender on the store's logger sees them.
   */
  private static List<LoggingEvent> captureErrors(ThrowingRunnable body) throws Exception {
    List<LoggingEvent> events = new CopyOnWriteArrayList<>();
    AppenderSkeleton appender = new AppenderSkeleton() {
      @Override
      protected void append(LoggingEvent event) {
        if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
          events.add(event);
        }
      }

      @Override
      public void close() {
      }

      @Override
      public boolean requiresLayout() {
        return false;
      }
    };
    Logger logger = Logger.getLogger(LearnedHistoryStore.class);
    logger.addAppender(appender);
    try {
      body.run();
    } finally {
      logger.removeAppender(appender);
    }
    return events;
  }
}
