package io.rackwise.it;

import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * A {@link MiniMRYarnCluster} whose NodeManager {@code i} serves on its own loopback address
 * {@code nmHosts.get(i)} instead of {@code localhost}.
 *
 * <p>Why the detour: MiniYARNCluster creates its NodeManagers and their per-node configuration
 * in private code that hard-codes {@code localhost:0} for the container-manager and web
 * addresses, and the NodeId host is the canonical name of the container manager's bound
 * address, so every NM would land on the same host and rack. No factory or per-node key lets
 * us change that before {@code init}. But the NodeManager hands its own Configuration object
 * to its child services, and the container manager and the web server read their addresses
 * only in {@code serviceStart}. So after the whole cluster has been initialised and before it
 * starts, we rewrite those two addresses in each NM's configuration. The localizer address was
 * already read during {@code init} and stays on localhost; it is NM-internal and never
 * advertised.
 */
final class LoopbackMiniMRYarnCluster extends MiniMRYarnCluster {
  private final List<String> nmHosts;

  LoopbackMiniMRYarnCluster(String name, List<String> nmHosts) {
    super(name, nmHosts.size());
    this.nmHosts = List.copyOf(nmHosts);
  }

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    super.serviceInit(conf);
    for (int i = 0; i < nmHosts.size(); i++) {
      NodeManager nm = getNodeManager(i);
      Configuration nmConf = nm.getConfig();
      String host = nmHosts.get(i);
      nmConf.set(YarnConfiguration.NM_ADDRESS, host + ":0");
      WebAppUtils.setNMWebAppHostNameAndPort(nmConf, host, 0);
    }
  }

  /** The host each NodeManager was asked to serve on, by NM index. */
  List<String> nmHosts() {
    return nmHosts;
  }
}
