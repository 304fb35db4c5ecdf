package io.rackwise.yarn.netsat;

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

class HostClassFileTest {
  private static final List<String> HOSTS =
      List.of("node17.example.com", "gen2-a.example.com", "gen3-b.example.com");

  @TempDir
  Path dir;

  /** What the file sends, in order. */
  private final List<String> sent = new CopyOnWriteArrayList<>();
  private final NetworkLoadFeed.Sink sink = new NetworkLoadFeed.Sink() {
    @Override
    public void rackLoad(String rack, double utilization, long timeMs) {
      sent.add("rack " + rack);
    }

    @Override
    public void hostFigures(String host, Map<HostFigure, Double> figures, long timeMs) {
      sent.add(host + " " + figures + " @" + timeMs);
    }
  };

  private Path write(String text, long modifiedMs) throws Exception {
    Path file = dir.resolve("host-classes");
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
    Files.setLastModifiedTime(file, FileTime.fromMillis(modifiedMs));
    return file;
  }

  @Test
  void theFirstMatchingRuleGivesEachKnownHostItsSpeedAndOthersRunAtNominal() throws Exception {
    Path file = write("# host or pattern   speed\n"
        + "node17.example.com  1.5   # the new machine\n"
        + "\n"
        + "gen2-.*  0.8\n"
        + "gen2-a.example.com  3\n", 1_000_000);
    HostClassFile hostClasses = new HostClassFile(file, 1000, sink, () -> HOSTS);
    assertEquals(1.0, hostClasses.speedOf("gen2-a.example.com"), "nominal before any read");
    assertTrue(hostClasses.readIfChanged());
    assertEquals(List.of("node17.example.com {CPU_SPEED=1.5} @1000000",
        "gen2-a.example.com {CPU_SPEED=0.8} @1000000",
        "gen3-b.example.com {CPU_SPEED=1.0} @1000000"), sent);
    assertFalse(hostClasses.readIfChanged(), "unchanged file: nothing new");
    assertEquals(0.8, hostClasses.speedOf("gen2-zz.example.com"), "a node that joins later");
    assertEquals(1.0, hostClasses.speedOf("xnode17.example.com"), "a pattern matches whole names");

    // An entry removed: its host is back to nominal in the core too.
    write("gen2-.*  0.8\n", 2_000_000);
    assertTrue(hostClasses.readIfChanged());
    assertEquals("node17.example.com {CPU_SPEED=1.0} @2000000", sent.get(3));
  }

  @Test
  void aBadFileIsRefusedNamingFileLineValueAndReasonAndTheLastGoodSpeedsStay() throws Exception {
    Path file = write("node17.example.com 1.5\n", 1_000_000);
    HostClassFile hostClasses = new HostClassFile(file, 1000, sink, () -> HOSTS);
    assertTrue(hostClasses.readIfChanged());
    sent.clear();
    try (CapturedLog log = CapturedLog.of(HostClassFile.class.getName())) {
      write("node17.example.com 2\n"
          + "gen2-.* fast\n"
          + "gen3-[ 1\n"
          + "gen4-.* 0\n"
          + "gen5-.*\n", 2_000_000);
      assertFalse(hostClasses.readIfChanged());
      List<String> errors = log.messages(Level.ERROR);
      assertEquals(1, errors.size(), errors.toString());
      String error = errors.get(0);
      for (String expected : List.of(file.toString(),
          "line 2: speed 'fast' must be a number > 0 (1 = nominal)",
          "line 3: host pattern 'gen3-[' is not a regular expression",
          "line 4: speed '0' must be a number > 0 (1 = nominal)",
          "line 5: 'gen5-.*' must be a host name or pattern and a speed")) {
        assertTrue(error.contains(expected), "'" + expected + "' in: " + error);
      }
    }
    assertEquals(List.of(), sent, "nothing of the bad file reaches the core");
    assertEquals(1.5, hostClasses.speedOf("node17.example.com"), "the last good rules stay");
  }
}
