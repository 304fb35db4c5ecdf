package io.rackwise.yarn.netsat;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
    public void hostLoad(String host, double crossRackMbps, long timeMs) {
      sent.add("host " + host + " " + crossRackMbps + " @" + timeMs);
    }
  };

  private Path write(String json, long modifiedMs) throws Exception {
    Path file = dir.resolve("load.json");
    Files.write(file, json.getBytes(StandardCharsets.UTF_8));
    Files.setLastModifiedTime(file, FileTime.fromMillis(modifiedMs));
    return file;
  }

  @Test
  void figuresAreSentOncePerChangeWithTheirMeasurementTime() throws Exception {
    Path file = write("{\"time_ms\": 5000, \"racks\": {\"/r1\": 0.9}, "
        + "\"hosts\": {\"h1\": 120.5}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 1000, sink);
    assertTrue(feed.readIfChanged());
    assertEquals(List.of("rack /r1 0.9 @5000", "host h1 120.5 @5000"), sent);
    assertFalse(feed.readIfChanged(), "unchanged file: nothing new");

    write("{\"racks\": {\"/r2\": 0.1}}", 2_000_000);
    assertTrue(feed.readIfChanged());
    assertEquals("rack /r2 0.1 @2000000", sent.get(2), "no time_ms: the file's mtime");
  }

  @Test
  void aBadFileIsIgnoredAndTheLastGoodFiguresStay() throws Exception {
    Path file = write("{\"racks\": {\"/r1\": 0.5}}", 1_000_000);
    NetworkLoadFeed feed = new NetworkLoadFeed(file, 1000, sink);
    feed.readIfChanged();
    write("{\"racks\": {\"/r1\": -3, \"/r2\": \"busy\"}}", 2_000_000);
    assertFalse(feed.readIfChanged());
    write("{not json", 3_000_000);
    assertFalse(feed.readIfChanged());
    assertEquals(List.of("rack /r1 0.5 @1000000"), sent);
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
