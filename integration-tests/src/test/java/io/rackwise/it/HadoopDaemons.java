package io.rackwise.it;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.awaitility.core.ConditionTimeoutException;

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
 * free at start; the rest are ephemeral. A port chosen free can be taken by another process
 * before the daemon binds it; the daemon then exits with a {@code BindException} and is
 * started again on ports chosen afresh. Any other exit during start fails at once, quoting the
 * daemon's log, so that a failed build says why.
 *
 * <p>{@link #close()} stops every process it started (SIGTERM, so the daemons run their own
 * shutdown; then a kill after a grace period) and with them the containers NodeManagers run.
 */
final class HadoopDaemons implements AutoCloseable {

  static final String SCHEDULER = "yarn.resourcemanager.scheduler.class";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long each start phase (HDFS up, DataNodes live, RM up, NMs registered) may take. */
  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

  /** Restarts on fresh ports a daemon may need after losing its port to another process. */
  private static final int MAX_PORT_RETRIES = 3;

  /** What a daemon's log is quoted by when it exits or a start phase times out. */
  private static final int LOG_TAIL_LINES = 20;
  private static final int LOG_ERRORS_QUOTED = 3;
  private static final Pattern LOG_ERROR_LINE = Pattern.compile(" (ERROR|FATAL) ");

  private final Path work;
  private final String hadoopClasspath;
  private final Path rackwiseJar;
  private final List<Process> processes = new ArrayList<>();
  private final List<Daemon> daemons = new ArrayList<>();
  private final List<String> jvmFlags;
  final int racks;
  private int rmWebPort;
  private Configuration base;

  /**
   * @param hadoopClasspath the Hadoop runtime's jars (no Rackwise jar), path-separated
   * @param rackwiseJar     the jar an operator copies into the RM's classpath
   */
  HadoopDaemons(Path work, String hadoopClasspath, Path rackwiseJar, int racks) {
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
  }

  /**
   * What the ResourceManager's web app answers at {@code path} ({@code /jmx?qry=...}, a REST
   * resource), as JSON.
   */
  JsonNode rmWeb(String path) throws IOException {
    URLConnection answer = URI.create("http://127.0.0.1:" + rmWebPort + path).toURL()
        .openConnection();
    // Bounded: whatever holds the port may accept and never answer.
    answer.setConnectTimeout(5_000);
    answer.setReadTimeout(5_000);
    try (InputStream in = answer.getInputStream()) {
      return JSON.readTree(in);
    }
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
    c.set("hadoop.tmp.dir", work.resolve("tmp").toString());
    c.set("net.topology.node.switch.mapping.impl", "org.apache.hadoop.net.TableMapping");
    c.set("net.topology.table.file.name", rackTable.toString());
    // HDFS
    c.set("dfs.namenode.http-address", "127.0.0.1:0");
    c.set("dfs.namenode.name.dir", work.resolve("name").toUri().toString());
    c.setInt("dfs.replication", Math.min(2, racks));
    c.setBoolean("dfs.permissions.enabled", false);
    c.setBoolean("dfs.client.use.datanode.hostname", true);
    c.setBoolean("dfs.datanode.use.datanode.hostname", true);
    c.setLong("dfs.blocksize", 4L * 1024 * 1024);
    // YARN: the RM's endpoints (ports in chooseRmPorts)
    c.set("yarn.resourcemanager.hostname", "127.0.0.1");
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
    // The format reads the NameNode's address too; the RM's endpoints are chosen as it starts.
    chooseNamenodePort();
    return c;
  }

  /** Chooses the NameNode's RPC port afresh, in the configuration every process shares. */
  private void chooseNamenodePort() throws IOException {
    String namenode = "127.0.0.1:" + freePort();
    base.set("fs.defaultFS", "hdfs://" + namenode);
    base.set("dfs.namenode.rpc-address", namenode);
  }

  /** Chooses the ResourceManager's endpoints afresh, in the configuration every process shares. */
  private void chooseRmPorts() throws IOException {
    String rm = "127.0.0.1:";
    base.set("yarn.resourcemanager.address", rm + freePort());
    base.set("yarn.resourcemanager.scheduler.address", rm + freePort());
    base.set("yarn.resourcemanager.resource-tracker.address", rm + freePort());
    base.set("yarn.resourcemanager.admin.address", rm + freePort());
    rmWebPort = freePort();
    base.set("yarn.resourcemanager.webapp.address", rm + rmWebPort);
  }

  /**
   * Formats HDFS, starts the NameNode and waits for it to answer, then starts one DataNode per
   * rack and waits until all are live and HDFS has left safe mode.
   */
  void startHdfs() throws Exception {
    Process format = launch("namenode-format", writeConf("namenode", baseConf()), false,
        "org.apache.hadoop.hdfs.server.namenode.NameNode", "-format", "-force", "-nonInteractive");
    if (!format.waitFor(3, TimeUnit.MINUTES) || format.exitValue() != 0) {
      throw new IOException("formatting HDFS failed; see " + log("namenode-format"));
    }
    start("namenode", portTaken -> {
      if (portTaken) {
        chooseNamenodePort();
      }
      return launch("namenode", writeConf("namenode", baseConf()), false,
          "org.apache.hadoop.hdfs.server.namenode.NameNode");
    });
    try (FileSystem fs = FileSystem.newInstance(client())) {
      awaitStarted("NameNode answering", () -> {
        ((DistributedFileSystem) fs).getDataNodeStats(HdfsConstants.DatanodeReportType.ALL);
        return true;
      });
    }
    for (int r = 0; r < racks; r++) {
      String host = LoopbackTopology.host(r, 0);
      Configuration dn = new Configuration(baseConf());
      dn.set("dfs.datanode.data.dir", work.resolve("data-" + r).toUri().toString());
      dn.set("dfs.datanode.hostname", host);
      dn.set("dfs.datanode.address", host + ":0");
      dn.set("dfs.datanode.http.address", host + ":0");
      dn.set("dfs.datanode.ipc.address", host + ":0");
      Path conf = writeConf("datanode-" + r, dn);
      String name = "datanode-" + r;
      start(name, portTaken -> launch(name, conf, false,
          "org.apache.hadoop.hdfs.server.datanode.DataNode"));
    }
    try (FileSystem fs = FileSystem.newInstance(client())) {
      DistributedFileSystem dfs = (DistributedFileSystem) fs;
      awaitStarted("DataNodes live",
          () -> dfs.getDataNodeStats(HdfsConstants.DatanodeReportType.LIVE).length == racks
              && !dfs.isInSafeMode());
    }
  }

  /**
   * Starts the ResourceManager (with the Rackwise jar on its classpath) and waits until it is
   * active, then starts the NodeManagers and waits until all have registered.
   */
  void startYarn(boolean rackwiseOnRmClasspath) throws Exception {
    start("resourcemanager", portTaken -> {
      chooseRmPorts();
      return launch("resourcemanager", writeConf("resourcemanager", baseConf()),
          rackwiseOnRmClasspath, "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager");
    });
    // Active and started: every endpoint is bound, so the NodeManagers' copy of the RM's
    // addresses below is final.
    awaitStarted("ResourceManager active", () -> {
      JsonNode cluster = rmWeb("/ws/v1/cluster/info").path("clusterInfo");
      return cluster.path("state").asText().equals("STARTED")
          && cluster.path("haState").asText().equals("ACTIVE");
    });
    for (int r = 0; r < racks; r++) {
      String host = LoopbackTopology.host(r, 0);
      String name = "nodemanager-" + r;
      int rack = r;
      start(name, portTaken -> {
        Configuration nm = new Configuration(baseConf());
        nm.set("yarn.nodemanager.hostname", host);
        nm.set("yarn.nodemanager.address", host + ":0");
        nm.set("yarn.nodemanager.webapp.address", host + ":0");
        // Fixed by default (8040, 13562): two NodeManagers on one machine need their own.
        nm.set("yarn.nodemanager.localizer.address", host + ":" + freePort());
        nm.setInt("mapreduce.shuffle.port", freePort());
        nm.set("yarn.nodemanager.local-dirs", work.resolve("nm-local-" + rack).toString());
        nm.set("yarn.nodemanager.log-dirs", work.resolve("nm-logs-" + rack).toString());
        return launch(name, writeConf(name, nm), false,
            "org.apache.hadoop.yarn.server.nodemanager.NodeManager");
      });
    }
    try (YarnClient yarn = YarnClient.createYarnClient()) {
      yarn.init(client());
      yarn.start();
      awaitStarted("NodeManagers registered",
          () -> yarn.getNodeReports(NodeState.RUNNING).size() == racks);
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
    // Appended: a daemon started again after losing a port keeps its first attempt's log.
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log(name).toFile()));
    Map<String, String> env = pb.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("HADOOP_CONF_DIR", confDir.toString());
    Process p = pb.start();
    processes.add(p);
    return p;
  }

  /** Starts a process that must stay up, as one of this cluster's daemons. */
  private void start(String name, Launcher launcher) throws IOException {
    daemons.add(new Daemon(name, launcher));
  }

  /**
   * Waits up to {@link #START_TIMEOUT} for a start phase to complete. A daemon that exits
   * meanwhile fails the wait at once with the end of its log, unless a port chosen free for it
   * was taken by another process before it bound it: then it starts again on fresh ports. A
   * timeout quotes the end of every daemon's log.
   */
  private void awaitStarted(String phase, Callable<Boolean> done) {
    try {
      await(phase).atMost(START_TIMEOUT).pollInterval(Duration.ofSeconds(1))
          .ignoreExceptionsMatching(e -> !(e instanceof DaemonExited))
          .until(() -> {
            for (Daemon daemon : daemons) {
              daemon.restartIfPortTaken();
            }
            return done.call();
          });
    } catch (ConditionTimeoutException e) {
      StringBuilder logs = new StringBuilder(e.getMessage());
      for (Daemon daemon : daemons) {
        logs.append("\n").append(daemon.logExcerpt());
      }
      throw new IllegalStateException(logs.toString(), e);
    }
  }

  /** Starts a daemon; after its port was taken, on ports chosen afresh. */
  @FunctionalInterface
  private interface Launcher {
    Process launch(boolean portTaken) throws IOException;
  }

  /** A daemon died during a start phase; the message quotes its log. */
  private static final class DaemonExited extends IllegalStateException {
    DaemonExited(String message) {
      super(message);
    }
  }

  /** A daemon process, with what it takes to start it again. */
  private final class Daemon {
    private final String name;
    private final Launcher launcher;
    private Process process;
    /** Where this attempt's output begins in the log, which every attempt appends to. */
    private long logStart;
    private int portRetries;

    Daemon(String name, Launcher launcher) throws IOException {
      this.name = name;
      this.launcher = launcher;
      begin(false);
    }

    private void begin(boolean portTaken) throws IOException {
      Path log = log(name);
      logStart = Files.exists(log) ? Files.size(log) : 0;
      process = launcher.launch(portTaken);
    }

    void restartIfPortTaken() throws IOException {
      if (process.isAlive()) {
        return;
      }
      if (portRetries < MAX_PORT_RETRIES && attemptLog().contains("java.net.BindException")) {
        portRetries++;
        begin(true);
        return;
      }
      throw new DaemonExited(name + " exited with code " + process.exitValue() + "\n"
          + logExcerpt());
    }

    /**
     * This attempt's first ERROR and FATAL lines, each with the two lines after it (where
     * Hadoop prints the exception), then the last lines of its log.
     */
    String logExcerpt() {
      try {
        List<String> lines = attemptLog().lines().collect(Collectors.toList());
        StringBuilder out = new StringBuilder("---- " + log(name) + ": first errors\n");
        int quoted = 0;
        for (int i = 0; i < lines.size() && quoted < LOG_ERRORS_QUOTED; i++) {
          if (LOG_ERROR_LINE.matcher(lines.get(i)).find()) {
            lines.subList(i, Math.min(lines.size(), i + 3))
                .forEach(line -> out.append(line).append('\n'));
            quoted++;
          }
        }
        out.append("---- ").append(log(name)).append(": last ").append(LOG_TAIL_LINES)
            .append(" lines\n");
        lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())
            .forEach(line -> out.append(line).append('\n'));
        return out.toString();
      } catch (IOException e) {
        return "---- " + log(name) + " unreadable: " + e;
      }
    }

    private String attemptLog() throws IOException {
      byte[] all = Files.readAllBytes(log(name));
      return new String(all, (int) logStart, all.length - (int) logStart,
          StandardCharsets.ISO_8859_1);
    }
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
