package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.awaitility.Awaitility.await;

import io.rackwise.yarn.config.ShimSettings;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;

/**
 * An RM HA pair for the failover tests: two ResourceManagers running RackwiseFairScheduler with
 * the native core required (no fallback can make a test pass), leader election through an
 * in-process ZooKeeper, and Rackwise's state directory on a one-DataNode MiniDFSCluster, the
 * {@code hdfs://} path both RMs share.
 */
final class RmHaPair implements AutoCloseable {
  private static final String STATE_DIR = "/rackwise/state";

  private final MiniDFSCluster dfs;
  private final TestingServer zooKeeper;
  private final MiniYARNCluster yarn;
  private final String stateDir;

  /**
   * Starts HDFS, ZooKeeper and the pair with {@code nodeManagers} NodeManagers.
   *
   * @param allocationXml the fair-scheduler.xml both RMs read
   * @param extra further configuration (set last)
   */
  RmHaPair(File workDir, String allocationXml, int nodeManagers, Map<String, String> extra)
      throws Exception {
    HdfsConfiguration hdfsConf = new HdfsConfiguration();
    hdfsConf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(workDir, "dfs").getPath());
    dfs = new MiniDFSCluster.Builder(hdfsConf).numDataNodes(1).build();
    dfs.waitActive();
    stateDir = dfs.getFileSystem().getUri() + STATE_DIR;

    zooKeeper = new TestingServer(true);
    File allocations = new File(workDir, "fair-scheduler.xml");
    Files.writeString(allocations.toPath(), allocationXml);
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, RackwiseFairScheduler.class.getName());
    conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, allocations.getPath());
    conf.setBoolean(ShimSettings.NATIVE_REQUIRED, true);
    conf.set(ShimSettings.STATE_DIR, stateDir);
    conf.setLong(ShimSettings.STATE_FLUSH_INTERVAL_MS, 100);
    conf.setBoolean(ShimSettings.STATS_ENABLED, false);
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, true);
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_EMBEDDED, true);
    conf.set(YarnConfiguration.RM_CLUSTER_ID, "rackwise-ha");
    conf.set(YarnConfiguration.RM_ZK_ADDRESS, zooKeeper.getConnectString());
    extra.forEach(conf::set);

    yarn = new MiniYARNCluster("rackwise-ha", 2, nodeManagers, 1, 1);
    yarn.init(conf);
    yarn.start();
  }

  /** The shared state directory, an {@code hdfs://} URI. */
  String stateDir() {
    return stateDir;
  }

  MiniYARNCluster yarn() {
    return yarn;
  }

  /** The index of the active RM, once one is. */
  int awaitActive() {
    await().atMost(Duration.ofMinutes(2)).until(() -> yarn.getActiveRMIndex() >= 0);
    return yarn.getActiveRMIndex();
  }

  RackwiseFairScheduler scheduler(int index) {
    ResourceManager rm = yarn.getResourceManager(index);
    return (RackwiseFairScheduler) rm.getRMContext().getScheduler();
  }

  @Override
  public void close() throws Exception {
    try {
      yarn.stop();
    } finally {
      try {
        dfs.shutdown();
      } finally {
        zooKeeper.close();
      }
    }
  }
}
