package io.rackwise.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.client.HdfsClientConfigKeys;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.net.StaticMapping;
import org.apache.hadoop.net.TableMapping;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/**
 * An in-process Hadoop cluster whose NodeManagers (and, optionally, HDFS DataNodes) sit on
 * several racks, with a configurable YARN scheduler.
 *
 * <p>Every simulated machine is one loopback address (see {@link LoopbackTopology}): its
 * NodeManager serves there, and so does its DataNode when HDFS is on, with the DataNode
 * reporting that address as its host name. HDFS block locations, MapReduce split hosts, the
 * NodeIds YARN schedules on and the rack table therefore all use the same names, so
 * node-local and rack-local placement mean what they mean on a real cluster.
 *
 * <p>One cluster at a time per JVM: MiniYARNCluster, RackResolver and StaticMapping keep
 * static state. Start one with {@link #builder(String)}, run jobs with the configuration from
 * {@link #clientConf()}, close it when done.
 */
public final class MultiRackCluster implements AutoCloseable {
  public static final String FAIR_SCHEDULER =
      "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler";
  public static final String RACKWISE_SCHEDULER =
      "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler";
  /** Makes a Rackwise RM fail to start (instead of falling back) if the core cannot load. */
  public static final String RACKWISE_NATIVE_REQUIRED = "yarn.scheduler.rackwise.native.required";

  private static final long NODE_WAIT_MS = 60_000;
  private static final String LOG_APPENDER = "rackwise-cluster";
  /**
   * Jersey and Guice log through java.util.logging straight to the console: INFO for every
   * web app (RM, NMs, JHS) and a WARNING per extra web app in the JVM ("Multiple Servlet
   * injectors"), which is how mini clusters are built. Held so the levels survive: JUL keeps
   * loggers only weakly.
   */
  private static final List<java.util.logging.Logger> QUIET_JUL = List.of(
      java.util.logging.Logger.getLogger("com.sun.jersey"),
      java.util.logging.Logger.getLogger("com.google.inject.servlet"));

  private final String name;
  private final Path workDir;
  private final List<String> nodeHosts;
  private final Map<String, String> expectedRacks;
  private final MiniDFSCluster dfs;
  private final LoopbackMiniMRYarnCluster yarn;

  private MultiRackCluster(Builder b, Path workDir, List<String> nodeHosts,
      Map<String, String> expectedRacks, MiniDFSCluster dfs, LoopbackMiniMRYarnCluster yarn) {
    this.name = b.name;
    this.workDir = workDir;
    this.nodeHosts = nodeHosts;
    this.expectedRacks = expectedRacks;
    this.dfs = dfs;
    this.yarn = yarn;
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** A fresh copy of the cluster configuration, ready for job submission. */
  public JobConf clientConf() {
    return new JobConf(yarn.getConfig());
  }

  public ResourceManager resourceManager() {
    return yarn.getResourceManager();
  }

  public ResourceScheduler scheduler() {
    return resourceManager().getResourceScheduler();
  }

  public String name() {
    return name;
  }

  /** Local directory holding this cluster's files (allocation file, DFS storage). */
  public Path workDir() {
    return workDir;
  }

  public boolean hasHdfs() {
    return dfs != null;
  }

  /** The file system jobs read and write: HDFS when enabled, else the local file system. */
  public FileSystem fileSystem() throws IOException {
    return FileSystem.get(clientConf());
  }

  /**
   * A directory for job input or output: {@code /rackwise/<name>} on HDFS, or a directory
   * under {@link #workDir()} on the local file system.
   */
  public org.apache.hadoop.fs.Path dataPath(String child) throws IOException {
    org.apache.hadoop.fs.Path p = hasHdfs()
        ? new org.apache.hadoop.fs.Path("/rackwise/" + child)
        : new org.apache.hadoop.fs.Path(workDir.resolve("data").resolve(child).toUri());
    return fileSystem().makeQualified(p);
  }

  /** Loopback host of every simulated machine, in rack order. */
  public List<String> nodeHosts() {
    return nodeHosts;
  }

  /** The rack the topology table assigns each host. */
  public Map<String, String> expectedRacks() {
    return expectedRacks;
  }

  /** The rack of a host as the topology gives it, {@code null} if it is not a cluster node. */
  public String rackOf(String host) {
    return expectedRacks.get(host);
  }

  /**
   * What the scheduler itself believes: scheduler-node name to {@code getRackName()} for every
   * node the scheduler tracks. This is the ground truth for "are we multi-rack".
   */
  public Map<String, String> schedulerNodeRacks() {
    AbstractYarnScheduler<?, ?> s = (AbstractYarnScheduler<?, ?>) scheduler();
    Map<String, String> racks = new TreeMap<>();
    for (RMNode rmNode : resourceManager().getRMContext().getRMNodes().values()) {
      SchedulerNode node = s.getSchedulerNode(rmNode.getNodeID());
      if (node != null) {
        racks.put(node.getNodeName(), node.getRackName());
      }
    }
    return racks;
  }

  /** Live DataNode host name to the rack the NameNode placed it on (empty without HDFS). */
  public Map<String, String> dataNodeRacks() throws IOException {
    Map<String, String> racks = new TreeMap<>();
    if (dfs != null) {
      for (var dn : dfs.getFileSystem().getDataNodeStats()) {
        racks.put(dn.getHostName(), dn.getNetworkLocation());
      }
    }
    return racks;
  }

  /**
   * Every {@code launch_container.sh} the NodeManagers wrote, newest first. The NMs keep them
   * until shutdown ({@code yarn.nodemanager.delete.debug-delay-sec}), so tests can check what
   * the container JVMs were started with.
   */
  public List<Path> launchScripts() throws IOException {
    List<Path> scripts = new ArrayList<>();
    for (int i = 0; i < nodeHosts.size(); i++) {
      String dirs = yarn.getNodeManager(i).getConfig().get(YarnConfiguration.NM_LOCAL_DIRS);
      for (String dir : dirs.split(",")) {
        Path usercache = Path.of(dir.trim()).resolve("usercache");
        if (!Files.isDirectory(usercache)) {
          continue;
        }
        try (Stream<Path> s = Files.walk(usercache)) {
          s.filter(p -> p.getFileName().toString().equals("launch_container.sh"))
              .forEach(scripts::add);
        }
      }
    }
    scripts.sort(Comparator.comparing((Path p) -> p.toFile().lastModified()).reversed());
    return scripts;
  }

  @Override
  public void close() {
    try {
      stopNodeManagersInParallel();
      yarn.stop();
    } finally {
      if (dfs != null) {
        dfs.shutdown(true, true);
      }
    }
  }

  /**
   * A NodeManager takes ~17 s to stop here: ~7 s waiting for applications it still tracks,
   * then 10 s for its log-deletion timer (logs are kept for hours, for post-mortems). One
   * after the other that is over a minute per cluster, so stop them side by side first;
   * MiniYARNCluster's own stop then finds them stopped (stop is idempotent).
   */
  private void stopNodeManagersInParallel() {
    List<Thread> stoppers = new ArrayList<>();
    for (int i = 0; i < nodeHosts.size(); i++) {
      var nm = yarn.getNodeManager(i);
      Thread t = new Thread(nm::stop, "stop-nm-" + i);
      t.start();
      stoppers.add(t);
    }
    for (Thread t : stoppers) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public String toString() {
    return "MultiRackCluster[" + name + ", scheduler=" + scheduler().getClass().getSimpleName()
        + ", nodes=" + schedulerNodeRacks() + "]";
  }

  /** Cluster shape and settings; {@link #start()} brings it up. */
  public static final class Builder {
    private final String name;
    private int racks = 2;
    private int nodesPerRack = 2;
    private int nmMemoryMb = 4096;
    private int nmVcores = 8;
    private int amMemoryMb = 512;
    private int taskMemoryMb = 512;
    private String schedulerClass = FAIR_SCHEDULER;
    private String allocationResource;
    private Path allocationFile;
    private boolean hdfs = true;
    private int hdfsReplication = 2;
    private long hdfsBlockSize = 16L << 20;
    private Path baseDir = Path.of("target", "rackwise-it");
    private final Map<String, String> extra = new LinkedHashMap<>();

    private Builder(String name) {
      if (!name.matches("[A-Za-z0-9_.-]+")) {
        throw new IllegalArgumentException("cluster name must be a plain file name: " + name);
      }
      this.name = name;
    }

    public Builder racks(int racks) {
      this.racks = racks;
      return this;
    }

    public Builder nodesPerRack(int nodesPerRack) {
      this.nodesPerRack = nodesPerRack;
      return this;
    }

    /** Memory each NodeManager offers to containers. */
    public Builder nmMemoryMb(int mb) {
      this.nmMemoryMb = mb;
      return this;
    }

    public Builder nmVcores(int vcores) {
      this.nmVcores = vcores;
      return this;
    }

    /** Container size of the MapReduce ApplicationMaster (its heap is 75% of it). */
    public Builder amMemoryMb(int mb) {
      this.amMemoryMb = mb;
      return this;
    }

    /** Container size of map and reduce tasks (their heap is 75% of it). */
    public Builder taskMemoryMb(int mb) {
      this.taskMemoryMb = mb;
      return this;
    }

    public Builder schedulerClass(String className) {
      this.schedulerClass = Objects.requireNonNull(className);
      return this;
    }

    /** Allocation file taken from the classpath, copied into the cluster's work dir. */
    public Builder allocationResource(String classpathResource) {
      this.allocationResource = classpathResource;
      this.allocationFile = null;
      return this;
    }

    /** Allocation file on the local disk, used in place (so edits are picked up on reload). */
    public Builder allocationFile(Path file) {
      this.allocationFile = file;
      this.allocationResource = null;
      return this;
    }

    /** With {@code false}, jobs use the local file system and splits carry no real hosts. */
    public Builder hdfs(boolean enabled) {
      this.hdfs = enabled;
      return this;
    }

    public Builder hdfsReplication(int replication) {
      this.hdfsReplication = replication;
      return this;
    }

    public Builder hdfsBlockSize(long bytes) {
      this.hdfsBlockSize = bytes;
      return this;
    }

    /** Parent of the per-cluster work directories; default {@code target/rackwise-it}. */
    public Builder baseDir(Path dir) {
      this.baseDir = dir;
      return this;
    }

    /** Any configuration entry; applied last, so it overrides the harness defaults. */
    public Builder set(String key, String value) {
      extra.put(key, value);
      return this;
    }

    public Builder setAll(Map<String, String> entries) {
      extra.putAll(entries);
      return this;
    }

    public MultiRackCluster start() throws IOException {
      if (racks < 1 || racks > LoopbackTopology.MAX_RACKS || nodesPerRack < 1
          || nodesPerRack > LoopbackTopology.MAX_NODES_PER_RACK) {
        throw new IllegalArgumentException("racks must be 1.." + LoopbackTopology.MAX_RACKS
            + " and nodesPerRack 1.." + LoopbackTopology.MAX_NODES_PER_RACK);
      }
      Path workDir = baseDir.toAbsolutePath().resolve(name);
      deleteRecursively(workDir);
      Files.createDirectories(workDir);
      logTo(workDir.resolve("hadoop.log"));

      List<String> hosts = new ArrayList<>();
      Map<String, String> expected = new LinkedHashMap<>();
      for (int r = 0; r < racks; r++) {
        for (int n = 0; n < nodesPerRack; n++) {
          String host = LoopbackTopology.host(r, n);
          hosts.add(host);
          expected.put(host, LoopbackTopology.rackName(r));
        }
      }

      MiniDFSCluster dfs = null;
      LoopbackMiniMRYarnCluster yarn = null;
      try {
        if (hdfs) {
          dfs = startDfs(workDir, hosts, expected);
        }
        YarnConfiguration conf = yarnConf(workDir, dfs);
        yarn = new LoopbackMiniMRYarnCluster(name, hosts);
        yarn.init(conf);
        yarn.start();
        MultiRackCluster cluster = new MultiRackCluster(this, workDir,
            Collections.unmodifiableList(hosts), Collections.unmodifiableMap(expected), dfs,
            yarn);
        awaitNodes(cluster);
        return cluster;
      } catch (IOException | RuntimeException e) {
        stopQuietly(yarn, dfs, e);
        throw e;
      } catch (Exception e) {
        stopQuietly(yarn, dfs, e);
        throw new IOException("cluster " + name + " failed to start", e);
      }
    }

    /**
     * One NameNode on localhost and one DataNode per host. Each DataNode reports its loopback
     * address as its host name ({@code dfs.datanode.hostname}), which is what block locations,
     * and so MapReduce split hosts, carry.
     *
     * <p>The DataNodes' servers listen on the wildcard address rather than on their loopback
     * address: the NameNode records the source IP of a DataNode's RPCs as its address, and on
     * loopback that is 127.0.0.1 for every DataNode. Any HDFS client whose configuration does
     * not say "connect by host name" (the NodeManager's localizer builds a fresh
     * Configuration, for one) dials 127.0.0.1:port, so the port must reach the right
     * DataNode on 127.0.0.1 as well. Clients that do connect by host name (everything that
     * reads the cluster configuration) dial 127.0.r.n:port, which the wildcard also serves.
     */
    private MiniDFSCluster startDfs(Path workDir, List<String> hosts,
        Map<String, String> racks) throws IOException {
      Configuration conf = new HdfsConfiguration();
      conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, hdfsReplication);
      conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, hdfsBlockSize);
      conf.setBoolean(HdfsClientConfigKeys.DFS_CLIENT_USE_DN_HOSTNAME, true);
      conf.setBoolean(DFSConfigKeys.DFS_DATANODE_USE_DN_HOSTNAME, true);
      // MiniDFSCluster installs StaticMapping on the NameNode, which resolves DataNodes by
      // host name; feeding it our table makes HDFS block placement rack-aware too.
      for (Map.Entry<String, String> e : racks.entrySet()) {
        StaticMapping.addNodeToRack(e.getKey(), e.getValue());
      }
      MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf, workDir.resolve("dfs").toFile())
          .numDataNodes(0)
          .format(true)
          .build();
      try {
        for (String host : hosts) {
          Configuration dn = new Configuration(conf);
          dn.set(DFSConfigKeys.DFS_DATANODE_HOST_NAME_KEY, host);
          dn.set(DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY, "0.0.0.0:0");
          dn.set(DFSConfigKeys.DFS_DATANODE_IPC_ADDRESS_KEY, "0.0.0.0:0");
          dn.set(DFSConfigKeys.DFS_DATANODE_HTTP_ADDRESS_KEY, "0.0.0.0:0");
          // checkDataNodeAddrConfig/checkDataNodeHostConfig = true: keep our addresses and
          // host name instead of MiniDFSCluster's 127.0.0.1 defaults. No racks/hosts arrays:
          // those would register a static resolution host -> localhost JVM-wide, which breaks
          // connections to the NodeManagers on the same addresses.
          dfs.startDataNodes(dn, 1, null, true, null, null, null, null, null, false, true,
              true, null, null, null);
        }
        dfs.waitActive();
        int live = dfs.getNamesystem().getNumLiveDataNodes();
        if (live != hosts.size()) {
          throw new IOException("NameNode sees " + live + " live DataNodes, expected "
              + hosts.size());
        }
        return dfs;
      } catch (IOException | RuntimeException e) {
        dfs.shutdown(true, true);
        throw e;
      }
    }

    private YarnConfiguration yarnConf(Path workDir, MiniDFSCluster dfs) throws IOException {
      YarnConfiguration conf = new YarnConfiguration();
      if (dfs != null) {
        conf.set(CommonConfigurationKeysPublic.FS_DEFAULT_NAME_KEY, dfs.getURI().toString());
        conf.setBoolean(HdfsClientConfigKeys.DFS_CLIENT_USE_DN_HOSTNAME, true);
        conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, hdfsReplication);
        conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, hdfsBlockSize);
      }

      // Topology for the RM, the MR AM and the job client alike: these keys travel in job.xml
      // to the AM, whose RackResolver turns split hosts into rack requests.
      conf.setClass(CommonConfigurationKeysPublic.NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY,
          TableMapping.class, org.apache.hadoop.net.DNSToSwitchMapping.class);
      conf.set(CommonConfigurationKeysPublic.NET_TOPOLOGY_TABLE_MAPPING_FILE_KEY,
          LoopbackTopology.tableFile(workDir.getParent()).toString());

      conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass);
      Path allocation = allocationFile;
      if (allocationResource != null) {
        allocation = workDir.resolve("allocations.xml");
        copyResource(allocationResource, allocation);
      }
      if (allocation != null) {
        conf.set("yarn.scheduler.fair.allocation.file", allocation.toAbsolutePath().toString());
      }

      // Node size. MiniYARNCluster overwrites the NM memory key from its own minicluster key.
      conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, nmMemoryMb);
      conf.setInt(YarnConfiguration.NM_VCORES, nmVcores);
      conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, nmMemoryMb);
      conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, nmVcores);
      // FairScheduler rounds every ask up to the increment (default 1024 MB); small
      // containers need a small increment as well as a small minimum.
      conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
      conf.setInt("yarn.resource-types.memory-mb.increment-allocation", 128);
      // Build machines often have nearly full disks; an "unhealthy" NM would silently shrink
      // the cluster.
      conf.setBoolean("yarn.nodemanager.disk-health-checker.disk-utilization-threshold.enabled",
          false);
      conf.setBoolean("yarn.nodemanager.disk-health-checker.disk-free-space-threshold.enabled",
          false);
      // A container handed to an AM but never reported running by its NM expires after
      // this long and its ask is re-issued (default 10 min). The one case that matters
      // here: FairScheduler can fill an AM's ask between recording it and returning from
      // the same allocate() call, and the RM then drops that AM container; expiry is how
      // YARN recovers. 60 s is far above any launch time seen on a loaded 2-core box.
      conf.setInt(YarnConfiguration.RM_CONTAINER_ALLOC_EXPIRY_INTERVAL_MS, 60_000);
      // Keep container directories (launch scripts) until shutdown, for launchScripts().
      conf.setInt(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 3600);

      // Small JVMs: the whole suite must fit 2 cores. Serial GC and C1-only JIT cut the CPU
      // each short-lived task JVM burns at start-up.
      String jvm = " -XX:+UseSerialGC -XX:TieredStopAtLevel=1";
      conf.setInt(MRJobConfig.MR_AM_VMEM_MB, amMemoryMb);
      conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, "-Xmx" + amMemoryMb * 3 / 4 + "m" + jvm);
      conf.setInt(MRJobConfig.MAP_MEMORY_MB, taskMemoryMb);
      conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, taskMemoryMb);
      conf.set(MRJobConfig.MAP_JAVA_OPTS, "-Xmx" + taskMemoryMb * 3 / 4 + "m" + jvm);
      conf.set(MRJobConfig.REDUCE_JAVA_OPTS, "-Xmx" + taskMemoryMb * 3 / 4 + "m" + jvm);
      conf.setInt(MRJobConfig.IO_SORT_MB, Math.min(100, taskMemoryMb / 6));
      // No speculative attempts: on a shared 2-core box task times are noisy enough to
      // trigger them at random, which would make runs (and scheduler comparisons) differ by
      // luck. set("mapreduce.map.speculative", "true") brings them back.
      conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
      conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);

      extra.forEach(conf::set);
      return conf;
    }

    /**
     * Waits until the scheduler tracks every NodeManager, then checks each NM registered
     * under its own loopback host and on the rack the table gives it. Anything else means
     * the multi-rack trick failed, and every test result would be meaningless.
     */
    private void awaitNodes(MultiRackCluster cluster) throws IOException, InterruptedException {
      long deadline = System.currentTimeMillis() + NODE_WAIT_MS;
      int want = cluster.nodeHosts.size();
      while (cluster.scheduler().getNumClusterNodes() < want) {
        if (System.currentTimeMillis() > deadline) {
          throw new IOException("only " + cluster.scheduler().getNumClusterNodes() + " of "
              + want + " NodeManagers reached the scheduler within " + NODE_WAIT_MS + " ms");
        }
        Thread.sleep(50);
      }
      for (int i = 0; i < want; i++) {
        NodeId id = cluster.yarn.getNodeManager(i).getNMContext().getNodeId();
        String host = cluster.nodeHosts.get(i);
        if (!id.getHost().equals(host)) {
          throw new IOException("NodeManager " + i + " registered as " + id + ", expected host "
              + host + " (reverse DNS of " + host + " returned a name; see docs/minicluster.md)");
        }
      }
      Map<String, String> seen = cluster.schedulerNodeRacks();
      if (!seen.equals(new TreeMap<>(cluster.expectedRacks))) {
        throw new IOException("scheduler racks " + seen + " differ from the table "
            + cluster.expectedRacks + " (RackResolver initialised elsewhere in this JVM?)");
      }
      if (racks > 1 && new TreeSet<>(seen.values()).size() < 2) {
        throw new IOException("scheduler sees a single rack: " + seen);
      }
    }

    /**
     * Sends the daemons' INFO log to one file per cluster, so a failed run can be read
     * without the noise of the clusters before it. Hadoop 3.4 logs through reload4j (the
     * log4j 1 API), which is what this talks to.
     */
    private static void logTo(Path file) {
      org.apache.log4j.Logger root = org.apache.log4j.Logger.getRootLogger();
      root.removeAppender(LOG_APPENDER);
      QUIET_JUL.forEach(l -> l.setLevel(java.util.logging.Level.SEVERE));
      try {
        org.apache.log4j.FileAppender appender = new org.apache.log4j.FileAppender(
            new org.apache.log4j.PatternLayout("%d{ISO8601} %-5p [%t] %c{2}: %m%n"),
            file.toString(), false);
        appender.setName(LOG_APPENDER);
        root.addAppender(appender);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot open " + file, e);
      }
    }

    private static void copyResource(String resource, Path target) throws IOException {
      try (InputStream in = MultiRackCluster.class.getClassLoader().getResourceAsStream(
          resource)) {
        if (in == null) {
          throw new IOException("allocation file " + resource + " not on the classpath");
        }
        Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
      }
    }

    private static void stopQuietly(LoopbackMiniMRYarnCluster yarn, MiniDFSCluster dfs,
        Exception cause) {
      try {
        if (yarn != null) {
          yarn.stop();
        }
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
      try {
        if (dfs != null) {
          dfs.shutdown(true, true);
        }
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
    }

    private static void deleteRecursively(Path dir) throws IOException {
      if (!Files.exists(dir)) {
        return;
      }
      try (Stream<Path> s = Files.walk(dir)) {
        for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
          Files.delete(p);
        }
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
  }
}
