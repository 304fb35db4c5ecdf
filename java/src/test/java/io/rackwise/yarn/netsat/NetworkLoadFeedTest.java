package io.rackwise.yarn.netsat;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NetworkLoadFeedTest {
  @TempDir
  Path dir;

  /** Records what the feed sends, in order. */
  private final List<String> sent = new CopyOnWriteArrayList<>();
  private final NetworkLoadFeed.Sink sink = new NetworkLoadFeed.Sink() {
    @Override
    public void rackLoad(String rack, double utilization, long timeMs) {
      sent.add("rack " + rack + " " + utilization + " @" + timeMs);
    }

    @Override
    public void hostFigures(String host, Map<HostFigure, Double> figures, long timeMs) {
      sent.add("host " + host + " " + figures + " @" + timeMs);
    }
  };

  private Path write(String json, long modifiedMs) throws Exception {
    Path file = dir.resolve("load.json");
    Files.write(file, json.getBytes(StandardCharsets.UTF_8));
    Files.setLastModifiedTime(file, FileTime.fromMillis(modifiedMs));
    return file;
  }

  @Test
  void versionOneFiguresAreSentOncePerChangeWithTheirMeasurementTime() throws Exception {
    Path file = write("{\"time_ms\": 5000, \"racks\": {\"/r1\": 0.9}, "
        + "\"hosts\": {\"h1\": 120.5}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 1000, sink);
    assertTrue(feed.readIfChanged());
    assertEquals(List.of("rack /r1 0.9 @5000", "host h1 {CROSS_RACK_MBPS=120.5} @5000"), sent);
    assertFalse(feed.readIfChanged(), "unchanged file: nothing new");

    write("{\"racks\": {\"/r2\": 0.1}}", 2_000_000);
    assertTrue(feed.readIfChanged());
    assertEquals("rack /r2 0.1 @2000000", sent.get(2), "no time_ms: the file's mtime");
    assertEquals(2, feed.filesSent());
  }

  @Test
  void versionTwoGivesEachHostTheFiguresItNames() throws Exception {
    Path file = write("{\"version\": 2, \"time_ms\": 7, \"racks\": {\"/rack1\": 0.93}, "
        + "\"hosts\": {\"node17\": {\"cross_rack_mbps\": 312.5, \"disk_utilization\": 0.4, "
        + "\"network_utilization\": 0.3, \"cpu_speed\": 1.5}, "
        + "\"node18\": {\"cpu_speed\": 0.8}, \"node19\": {}}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 1000, sink);
    assertTrue(feed.readIfChanged());
    assertEquals(List.of("rack /rack1 0.93 @7",
        "host node17 {CROSS_RACK_MBPS=312.5, DISK_UTILIZATION=0.4, NETWORK_UTILIZATION=0.3, "
            + "CPU_SPEED=1.5} @7",
        "host node18 {CPU_SPEED=0.8} @7",
        "host node19 {} @7"), sent);
  }

  @Test
  void aBadFileIsRefusedNamingFileElementValueAndReasonAndTheLastGoodFiguresStay()
      throws Exception {
    Path file = write("{\"racks\": {\"/r1\": 0.5}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 1000, sink);
    feed.readIfChanged();
    try (CapturedLog log = CapturedLog.of(NetworkLoadFeed.class.getName())) {
      assertRefused(feed, file, log, "{\"racks\": {\"/r1\": -3, \"/r2\": \"busy\"}}", 2,
          "racks./r1: value '-3' must be a number >= 0",
          "racks./r2: value '\"busy\"' must be a number >= 0");
      assertRefused(feed, file, log, "{\"version\": 3, \"racks\": {\"/r1\": 0.1}}", 3,
          "version: value '3' is not a schema version this Rackwise reads (1 to 2)");
      assertRefused(feed, file, log, "{\"version\": 2, \"hosts\": {\"node17\": "
              + "{\"disk_utilization\": 1.5, \"cpu_speed\": 0, \"cross_rack_mbps\": -1}}}", 4,
          "hosts.node17.disk_utilization: value '1.5' must be a number from 0 to 1",
          "hosts.node17.cpu_speed: value '0' must be a number > 0 (1 = nominal)",
          "hosts.node17.cross_rack_mbps: value '-1' must be a number >= 0 (Mbit/s)");
      assertRefused(feed, file, log, "{\"version\": 2, \"hosts\": {\"node17\": "
              + "{\"disk_utilisation\": 0.5}}}", 5,
          "hosts.node17.disk_utilisation: unknown figure (expected one of: cross_rack_mbps, "
              + "disk_utilization, network_utilization, cpu_speed)");
      assertRefused(feed, file, log, "{\"version\": 2, \"hosts\": {\"node17\": 312.5}}", 6,
          "hosts.node17: value '312.5' must be an object of figures");
      assertRefused(feed, file, log, "{\"hosts\": {\"node17\": {\"cpu_speed\": 1}}}", 7,
          "hosts.node17: value '{\"cpu_speed\":1}' must be a number >= 0 (Mbit/s)");
      write("{not json", 8_000_000);
      assertFalse(feed.readIfChanged());
    }
    assertEquals(List.of("rack /r1 0.5 @1000000"), sent);
    assertEquals(1, feed.filesSent());
  }

  private void assertRefused(NetworkLoadFeed feed, Path file, CapturedLog log, String json,
      int second, String... reasons) throws Exception {
    write(json, second * 1_000_000L);
    assertFalse(feed.readIfChanged(), json);
    List<String> errors = log.messages(Level.ERROR);
    String error = errors.get(errors.size() - 1);
    assertTrue(error.contains("network load feed " + file + " is ignored"), error);
    for (String reason : reasons) {
      assertTrue(error.contains(reason), "'" + reason + "' in: " + error);
    }
  }

  @Test
  void aMissingFileIsNotAnError() throws Exception {
    NetworkLoadFeed feed = new NetworkLoadFeed(dir.resolve("absent.json"), 1000, sink);
    assertFalse(feed.readIfChanged());
    assertTrue(sent.isEmpty());
  }

  @Test
  void theBackgroundThreadPicksUpARewrite() throws Exception {
    Path file = write("{\"racks\": {\"/r1\": 0.2}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 20, sink);
    feed.start();
    try {
      awaitTrue(() -> !sent.isEmpty(), "the first read");
      write("{\"racks\": {\"/r1\": 0.8}}", 2_000_000);
      awaitTrue(() -> sent.size() == 2, "the re-read after a rewrite");
    } finally {
      feed.close();
    }
    assertEquals(List.of("rack /r1 0.2 @1000000", "rack /r1 0.8 @2000000"), sent);
  }
}
