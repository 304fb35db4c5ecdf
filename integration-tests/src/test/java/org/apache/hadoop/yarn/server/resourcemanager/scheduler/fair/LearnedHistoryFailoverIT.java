package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.state.LearnedHistoryStore;
import io.rackwise.yarn.state.LearnedRatio;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An RM HA pair (two ResourceManagers, leader election through an in-process ZooKeeper) with
 * the learned history on HDFS: what the active RM learned is what the standby starts with
 * when it takes over.
 *
 * <p>The standby initialises its scheduler when it boots, long before the active learns
 * anything; it must read the history when it becomes active, not at boot. The active's last
 * write reaches HDFS before it is stopped (checked on HDFS first), so the takeover does not
 * depend on a graceful shutdown's final flush, as with a killed RM. The ratios enter through
 * the scheduler's own callback for what the core learned; the core itself is required
 * ({@code native.required}), so no fallback can make this pass.
 */
class LearnedHistoryFailoverIT {

  private static final String ALLOCATIONS = """
      <?xml version="1.0"?>
      <allocations>
        <queue name="root">
          <rackwise><policy>shufflewatcher</policy></rackwise>
        </queue>
      </allocations>
      """;

  @TempDir
  File workDir;

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void theNewActiveContinuesWithTheHistoryThePreviousActiveWrote() throws Exception {
    try (RmHaPair pair = new RmHaPair(workDir, ALLOCATIONS, 0, Map.of())) {
      int first = pair.awaitActive();
      RackwiseFairScheduler firstScheduler = pair.scheduler(first);
      assertTrue(firstScheduler.isNativeActive(), "native core required and active");
      assertEquals(List.of(), firstScheduler.learnedHistory(), "nothing learned yet");

      List<LearnedRatio> learned = List.of(new LearnedRatio("etl-daily", 2.5, 3),
          new LearnedRatio("grep-logs", 0.01, 7));
      firstScheduler.learned(learned);
      Path file = new Path(pair.stateDir(), LearnedHistoryStore.FILE_NAME);
      FileSystem fs = file.getFileSystem(pair.yarn().getConfig());
      await().atMost(Duration.ofSeconds(30)).until(() -> read(fs, file).contains("grep-logs"));

      pair.yarn().stopResourceManager(first);
      int second = pair.awaitActive();
      assertNotEquals(first, second, "the standby took over");
      RackwiseFairScheduler secondScheduler = pair.scheduler(second);
      assertTrue(secondScheduler.isNativeActive(), "native core active on the new active RM");
      assertEquals(List.of(new LearnedRatio("grep-logs", 0.01, 7),
              new LearnedRatio("etl-daily", 2.5, 3)), secondScheduler.learnedHistory(),
          "the new active starts with exactly what the previous one learned");

      // And it goes on writing the same file: the ledger of learning is one, not one per RM.
      secondScheduler.learned(List.of(new LearnedRatio("etl-daily", 2.25, 4)));
      await().atMost(Duration.ofSeconds(30)).until(() -> read(fs, file).contains("2.25"));
    }
  }

  /** The file's content, or "" while it does not exist yet. */
  private static String read(FileSystem fs, Path file) throws Exception {
    if (!fs.exists(file)) {
      return "";
    }
    try (FSDataInputStream in = fs.open(file)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
