package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.state.LearnedHistoryStore;
import io.rackwise.yarn.state.LearnedRatio;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.junit.jupiter.api.AfterEach;
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

  private static final String STATE_DIR = "/rackwise/state";

  @TempDir
  File workDir;

  private TestingServer zooKeeper;
  private MiniDFSCluster dfs;
  private MiniYARNCluster yarn;

  @AfterEach
  void stopEverything() throws Exception {
    if (yarn != null) {
      yarn.stop();
    }
    if (dfs != null) {
      dfs.shutdown();
    }
    if (zooKeeper != null) {
      zooKeeper.close();
    }
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void theNewActiveContinuesWithTheHistoryThePreviousActiveWrote() throws Exception {
    HdfsConfiguration hdfsConf = new HdfsConfiguration();
    hdfsConf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(workDir, "dfs").getPath());
    dfs = new MiniDFSCluster.Builder(hdfsConf).numDataNodes(1).build();
    dfs.waitActive();
    String stateDir = dfs.getFileSystem().getUri() + STATE_DIR;

    zooKeeper = new TestingServer(true);
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, RackwiseFairScheduler.class.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, writeAllocationFile().getPath());
    conf.setBoolean(ShimSettings.NATIVE_REQUIRED, true);
    conf.set(ShimSettings.STATE_DIR, stateDir);
    conf.setLong(ShimSettings.STATE_FLUSH_INTERVAL_MS, 100);
    conf.setBoolean(ShimSettings.STATS_ENABLED, false);
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, true);
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_EMBEDDED, true);
    conf.set(YarnConfiguration.RM_CLUSTER_ID, "rackwise-ha");
    conf.set(YarnConfiguration.RM_ZK_ADDRESS, zooKeeper.getConnectString());

    yarn = new MiniYARNCluster("rackwise-ha", 2, 0, 1, 1);
    yarn.init(conf);
    yarn.start();
    int first = awaitActive();
    RackwiseFairScheduler firstScheduler = schedulerOf(yarn.getResourceManager(first));
    assertTrue(firstScheduler.isNativeActive(), "native core required and active");
    assertEquals(List.of(), firstScheduler.learnedHistory(), "nothing learned yet");

    List<LearnedRatio> learned = List.of(new LearnedRatio("etl-daily", 2.5, 3),
        new LearnedRatio("grep-logs", 0.01, 7));
    firstScheduler.learned(learned);
    Path file = new Path(stateDir, LearnedHistoryStore.FILE_NAME);
    FileSystem fs = file.getFileSystem(conf);
    await().atMost(Duration.ofSeconds(30)).until(() -> read(fs, file).contains("grep-logs"));

    yarn.stopResourceManager(first);
    int second = awaitActive();
    assertNotEquals(first, second, "the standby took over");
    RackwiseFairScheduler secondScheduler = schedulerOf(yarn.getResourceManager(second));
    assertTrue(secondScheduler.isNativeActive(), "native core active on the new active RM");
    assertEquals(List.of(new LearnedRatio("grep-logs", 0.01, 7),
            new LearnedRatio("etl-daily", 2.5, 3)), secondScheduler.learnedHistory(),
        "the new active starts with exactly what the previous one learned");

    // And it goes on writing the same file: the ledger of learning is one, not one per RM.
    secondScheduler.learned(List.of(new LearnedRatio("etl-daily", 2.25, 4)));
    await().atMost(Duration.ofSeconds(30)).until(() -> read(fs, file).contains("2.25"));
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

  private int awaitActive() {
    await().atMost(Duration.ofMinutes(2)).until(() -> yarn.getActiveRMIndex() >= 0);
    return yarn.getActiveRMIndex();
  }

  private static RackwiseFairScheduler schedulerOf(ResourceManager rm) {
    return (RackwiseFairScheduler) rm.getRMContext().getScheduler();
  }

  private File writeAllocationFile() throws Exception {
    File allocations = new File(workDir, "fair-scheduler.xml");
    Files.writeString(allocations.toPath(), """
        <?xml version="1.0"?>
        <allocations>
          <queue name="root">
            <rackwise><policy>shufflewatcher</policy></rackwise>
          </queue>
        </allocations>
        """);
    return allocations;
  }
}
