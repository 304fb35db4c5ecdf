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
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;

/**
 * An RM HA pair for the failover tests: two ResourceManagers running RackwiseFairScheduler with
 * the native core required (no fallback can make a test pass), leader election through an
 * in-process ZooKeeper, and Rackwise's state directory on a one-DataNode MiniDFSCluster, the
 * {@code hdfs://} path both RMs share.
 *
 * <p>The NodeManagers talk to the RMs over RPC, on fixed ports, through the HA-aware RM proxy
 * (as a real cluster's do). MiniYARNCluster's default in-process NodeManagers bind, when they
 * start, to the ResourceTrackerService of the RM active at that moment and keep heartbeating to
 * it after it is stopped: the new active never sees a node, offers nothing, and closes no
 * Dynamic Priority interval.
 */
final class RmHaPair implements AutoCloseable {
  private static final String STATE_DIR = "/rackwise/state";
  private static final String[] RM_IDS = {"rm0", "rm1"};
  /** How soon a NodeManager tries the other RM, and again (defaults: 30 s between tries). */
  private static final long RM_RETRY_MS = 100;

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
    talkOverRpc(conf);
    extra.forEach(conf::set);

    yarn = new MiniYARNCluster("rackwise-ha", RM_IDS.length, nodeManagers, 1, 1);
    yarn.init(conf);
    yarn.start();
  }

  /**
   * RPC between NodeManagers and RMs, which MiniYARNCluster allows only on fixed ports: each RM
   * id gets free ports for all its services, and the NodeManager's own fixed-by-default ports
   * (localizer, web) are free ones too, so parallel test runs do not collide.
   */
  private static void talkOverRpc(YarnConfiguration conf) {
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    conf.setStrings(YarnConfiguration.RM_HA_IDS, RM_IDS);
    for (String rmId : RM_IDS) {
      for (String key : YarnConfiguration.getServiceAddressConfKeys(conf)) {
        conf.set(HAUtil.addSuffix(key, rmId), freeAddress());
      }
    }
    conf.set(YarnConfiguration.NM_ADDRESS, freeAddress());
    conf.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, freeAddress());
    conf.set(YarnConfiguration.NM_WEBAPP_ADDRESS, freeAddress());
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, RM_RETRY_MS);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, RM_RETRY_MS);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_MAX_MS, 10 * RM_RETRY_MS);
  }

  private static String freeAddress() {
    return "localhost:" + NetUtils.getFreeSocketPort();
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
