package io.rackwise.it;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;

/**
 * A Hadoop cluster of separate daemon processes, as an operator runs one: a NameNode, one
 * DataNode and one NodeManager per rack, and a ResourceManager whose classpath is Hadoop's plus
 * the Rackwise jar dropped in (nothing else about it differs from a stock RM). Each daemon is
 * {@code java -cp <its conf dir>:<Hadoop's jars> <Hadoop's main class>}, with its own
 * configuration directory written through Hadoop's {@link Configuration#writeXml}.
 *
 * <p>Every host is a loopback address on its own rack ({@link LoopbackTopology}), so HDFS block
 * locations and YARN node names differ per rack and locality is real. Ports an operator would
 * fix (NameNode RPC, RM endpoints, each NodeManager's localizer and shuffle port) are chosen
 * free at start; the rest are ephemeral.
 *
 * <p>{@link #close()} stops every process it started (SIGTERM, so the daemons run their own
 * shutdown; then a kill after a grace period) and with them the containers NodeManagers run.
 */
final class HadoopDaemons implements AutoCloseable {

  static final String SCHEDULER = "yarn.resourcemanager.scheduler.class";

  private final Path work;
  private final String hadoopClasspath;
  private final Path rackwiseJar;
  private final List<Process> processes = new ArrayList<>();
  private final List<String> jvmFlags;
  final int racks;
  final int namenodePort;
  final int rmPort;
  final int rmSchedulerPort;
  final int rmTrackerPort;
  final int rmAdminPort;
  final int rmWebPort;
  private Configuration base;

  /**
   * @param hadoopClasspath the Hadoop runtime's jars (no Rackwise jar), path-separated
   * @param rackwiseJar     the jar an operator copies into the RM's classpath
   */
  HadoopDaemons(Path work, String hadoopClasspath, Path rackwiseJar, int racks)
      throws IOException {
    this.work = work;
    this.hadoopClasspath = hadoopClasspath;
    this.rackwiseJar = rackwiseJar;
    this.racks = racks;
    // The JDK 17 module openings this JVM runs with (the build's rackwise.jdk17.opens), which
    // Hadoop 3.4's daemons and MapReduce JVMs need as well.
    this.jvmFlags = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-opens") || a.startsWith("--add-exports")
            || a.equals("-XX:+IgnoreUnrecognizedVMOptions"))
        .collect(Collectors.toList());
    this.namenodePort = freePort();
    this.rmPort = freePort();
    this.rmSchedulerPort = freePort();
    this.rmTrackerPort = freePort();
    this.rmAdminPort = freePort();
    this.rmWebPort = freePort();
  }

  /** The configuration every process shares; callers add the scheduler's keys before start. */
  Configuration baseConf() throws IOException {
    if (base != null) {
      return base;
    }
    Path rackTable = work.resolve("racks.txt");
    StringBuilder table = new StringBuilder();
    for (int r = 0; r < racks; r++) {
      table.append(LoopbackTopology.host(r, 0)).append(' ')
          .append(LoopbackTopology.rackName(r)).append('\n');
    }
    Files.writeString(rackTable, table);

    Configuration c = new Configuration(false);
    c.set("fs.defaultFS", "hdfs://127.0.0.1:" + namenodePort);
    c.set("hadoop.tmp.dir", work.resolve("tmp").toString());
    c.set("net.topology.node.switch.mapping.impl", "org.apache.hadoop.net.TableMapping");
    c.set("net.topology.table.file.name", rackTable.toString());
    // HDFS
    c.set("dfs.namenode.rpc-address", "127.0.0.1:" + namenodePort);
    c.set("dfs.namenode.http-address", "127.0.0.1:0");
    c.set("dfs.namenode.name.dir", work.resolve("name").toUri().toString());
    c.setInt("dfs.replication", Math.min(2, racks));
    c.setBoolean("dfs.permissions.enabled", false);
    c.setBoolean("dfs.client.use.datanode.hostname", true);
    c.setBoolean("dfs.datanode.use.datanode.hostname", true);
    c.setLong("dfs.blocksize", 4L * 1024 * 1024);
    // YARN: the RM's endpoints
    String rm = "127.0.0.1:";
    c.set("yarn.resourcemanager.hostname", "127.0.0.1");
    c.set("yarn.resourcemanager.address", rm + rmPort);
    c.set("yarn.resourcemanager.scheduler.address", rm + rmSchedulerPort);
    c.set("yarn.resourcemanager.resource-tracker.address", rm + rmTrackerPort);
    c.set("yarn.resourcemanager.admin.address", rm + rmAdminPort);
    c.set("yarn.resourcemanager.webapp.address", rm + rmWebPort);
    c.setBoolean("yarn.timeline-service.enabled", false);
    // Defaults under /tmp/hadoop-yarn-<user>: shared with anything else on the machine.
    c.set("yarn.node-attribute.fs-store.root-dir", work.resolve("node-attribute").toUri().toString());
    c.set("yarn.node-labels.fs-store.root-dir", work.resolve("node-labels").toUri().toString());
    c.setInt("yarn.scheduler.minimum-allocation-mb", 128);
    c.setInt("yarn.scheduler.maximum-allocation-mb", 2048);
    // YARN: the NodeManagers (per-NM keys are set in startNodeManager)
    c.setInt("yarn.nodemanager.resource.memory-mb", 2048);
    c.setInt("yarn.nodemanager.resource.cpu-vcores", 4);
    c.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
    c.setBoolean("yarn.nodemanager.pmem-check-enabled", false);
    c.setBoolean(
        "yarn.nodemanager.disk-health-checker.disk-utilization-threshold.enabled", false);
    c.setBoolean(
        "yarn.nodemanager.disk-health-checker.disk-free-space-threshold.enabled", false);
    c.set("yarn.nodemanager.aux-services", "mapreduce_shuffle");
    c.set("yarn.nodemanager.aux-services.mapreduce_shuffle.class",
        "org.apache.hadoop.mapred.ShuffleHandler");
    // MapReduce: the AM and tasks run with the same Hadoop jars the daemons use, and the
    // JDK's JAVA_HOME (NodeManagers pass it to containers).
    c.set("mapreduce.framework.name", "yarn");
    c.set("mapreduce.application.classpath", hadoopClasspath);
    c.set("yarn.application.classpath", hadoopClasspath);
    String opens = String.join(" ", jvmFlags);
    c.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    c.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + opens);
    c.setInt("mapreduce.map.memory.mb", 256);
    c.setInt("mapreduce.reduce.memory.mb", 256);
    c.set("mapreduce.map.java.opts", "-Xmx192m " + opens);
    c.set("mapreduce.reduce.java.opts", "-Xmx192m " + opens);
    c.setInt("mapreduce.task.io.sort.mb", 32);
    base = c;
    return c;
  }

  /** Formats HDFS and starts the NameNode, the DataNodes and the NodeManagers' RM. */
  void startHdfs() throws Exception {
    Path conf = writeConf("namenode", baseConf());
    Process format = launch("namenode-format", conf, false,
        "org.apache.hadoop.hdfs.server.namenode.NameNode", "-format", "-force", "-nonInteractive");
    if (!format.waitFor(3, TimeUnit.MINUTES) || format.exitValue() != 0) {
      throw new IOException("formatting HDFS failed; see " + log("namenode-format"));
    }
    launch("namenode", conf, false, "org.apache.hadoop.hdfs.server.namenode.NameNode");
    for (int r = 0; r < racks; r++) {
      String host = LoopbackTopology.host(r, 0);
      Configuration dn = new Configuration(baseConf());
      dn.set("dfs.datanode.data.dir", work.resolve("data-" + r).toUri().toString());
      dn.set("dfs.datanode.hostname", host);
      dn.set("dfs.datanode.address", host + ":0");
      dn.set("dfs.datanode.http.address", host + ":0");
      dn.set("dfs.datanode.ipc.address", host + ":0");
      launch("datanode-" + r, writeConf("datanode-" + r, dn), false,
          "org.apache.hadoop.hdfs.server.datanode.DataNode");
    }
    try (FileSystem fs = FileSystem.newInstance(client())) {
      DistributedFileSystem dfs = (DistributedFileSystem) fs;
      await("DataNodes live").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
          .ignoreExceptions()
          .until(() -> dfs.getDataNodeStats(HdfsConstants.DatanodeReportType.LIVE).length
              == racks && !dfs.isInSafeMode());
    }
  }

  /** Starts the ResourceManager (with the Rackwise jar on its classpath) and NodeManagers. */
  void startYarn(boolean rackwiseOnRmClasspath) throws Exception {
    launch("resourcemanager", writeConf("resourcemanager", baseConf()), rackwiseOnRmClasspath,
        "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager");
    for (int r = 0; r < racks; r++) {
      String host = LoopbackTopology.host(r, 0);
      Configuration nm = new Configuration(baseConf());
      nm.set("yarn.nodemanager.hostname", host);
      nm.set("yarn.nodemanager.address", host + ":0");
      nm.set("yarn.nodemanager.webapp.address", host + ":0");
      // Fixed by default (8040, 13562): two NodeManagers on one machine need their own.
      nm.set("yarn.nodemanager.localizer.address", host + ":" + freePort());
      nm.setInt("mapreduce.shuffle.port", freePort());
      nm.set("yarn.nodemanager.local-dirs", work.resolve("nm-local-" + r).toString());
      nm.set("yarn.nodemanager.log-dirs", work.resolve("nm-logs-" + r).toString());
      launch("nodemanager-" + r, writeConf("nodemanager-" + r, nm), false,
          "org.apache.hadoop.yarn.server.nodemanager.NodeManager");
    }
    try (YarnClient yarn = YarnClient.createYarnClient()) {
      yarn.init(client());
      yarn.start();
      await("NodeManagers registered").atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
          .until(() -> yarn.getNodeReports(NodeState.RUNNING).size() == racks);
    }
  }

  /** A client's configuration: what {@code HADOOP_CONF_DIR} holds on a gateway machine. */
  Configuration client() throws IOException {
    return new Configuration(baseConf());
  }

  /**
   * Runs {@code hadoop jar <examples> args...} as its own process ({@code RunJar}, what the
   * {@code hadoop jar} command runs) and returns its exit code.
   */
  int runExample(String name, Path examplesJar, String... args) throws Exception {
    List<String> all = new ArrayList<>();
    all.add(examplesJar.toString());
    all.addAll(Arrays.asList(args));
    Process job = launch(name, writeConf("client-" + name, client()), false,
        "org.apache.hadoop.util.RunJar", all.toArray(String[]::new));
    if (!job.waitFor(10, TimeUnit.MINUTES)) {
      job.destroyForcibly();
      throw new IOException(name + " did not finish in 10 minutes; see " + log(name));
    }
    return job.exitValue();
  }

  Path log(String name) {
    return work.resolve(name + ".log");
  }

  private Path writeConf(String name, Configuration conf) throws IOException {
    Path dir = work.resolve("conf-" + name);
    Files.createDirectories(dir);
    // Every key in every -site file: each *-default.xml is read before its own -site file
    // only, so an HDFS key set in core-site.xml alone would be overridden by hdfs-default.xml.
    for (String file : List.of("core-site.xml", "hdfs-site.xml", "yarn-site.xml",
        "mapred-site.xml")) {
      try (OutputStream out = Files.newOutputStream(dir.resolve(file))) {
        conf.writeXml(out);
      }
    }
    return dir;
  }

  private Process launch(String name, Path confDir, boolean withRackwise, String mainClass,
      String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx384m");
    cmd.addAll(jvmFlags);
    cmd.add("-Dhadoop.log.dir=" + work.resolve("logs"));
    cmd.add("-Dhadoop.root.logger=INFO,console");
    cmd.add("-cp");
    String cp = confDir + File.pathSeparator
        + (withRackwise ? rackwiseJar + File.pathSeparator : "") + hadoopClasspath;
    cmd.add(cp);
    cmd.add(mainClass);
    cmd.addAll(Arrays.asList(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log(name).toFile());
    Map<String, String> env = pb.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("HADOOP_CONF_DIR", confDir.toString());
    Process p = pb.start();
    processes.add(p);
    return p;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    // Reverse order: NodeManagers (and their containers) before the RM, DataNodes before the
    // NameNode, so that no daemon spends its shutdown retrying a peer already gone.
    List<Process> reversed = new ArrayList<>(processes);
    java.util.Collections.reverse(reversed);
    for (Process p : reversed) {
      p.descendants().forEach(ProcessHandle::destroy);
      p.destroy();
    }
    for (Process p : reversed) {
      try {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.descendants().forEach(ProcessHandle::destroyForcibly);
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
  }
}
