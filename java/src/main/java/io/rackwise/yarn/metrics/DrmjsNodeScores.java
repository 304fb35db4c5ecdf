package io.rackwise.yarn.metrics;

import io.rackwise.yarn.bridge.WireResponse.NodeScore;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * DRMJS's latest per-node scores and the inputs behind them, as Hadoop metrics2 records (JMX
 * bean {@code Hadoop:service=ResourceManager,name=RackwiseDrmjsNodeScores}): one record
 * {@value #RECORD} per queue and node, tagged with the queue, the node and its map and reduce
 * classes. The core sends a queue's whole board when it logs it (at most once per
 * {@code refreshMs}); that board replaces the queue's previous one, so a node that left goes
 * with the next refresh.
 */
public final class DrmjsNodeScores implements MetricsSource {
  public static final String SOURCE_NAME = "RackwiseDrmjsNodeScores";
  public static final String DESCRIPTION = "DRMJS per-node scores and their inputs";
  public static final String RECORD = "DrmjsNodeScore";

  private static final MetricsInfo QUEUE = Interns.info("Queue", "DRMJS queue");
  private static final MetricsInfo NODE = Interns.info("Node", "NodeManager");
  private static final MetricsInfo MAP_CLASS =
      Interns.info("MapClass", "Performance class for maps (High, Medium, Low)");
  private static final MetricsInfo REDUCE_CLASS =
      Interns.info("ReduceClass", "Performance class for reduces (High, Medium, Low)");
  private static final MetricsInfo DISK_SOURCE =
      Interns.info("DiskSource", "Feed (operator's disk utilization) or Observed (slowdown)");
  private static final MetricsInfo NET_SOURCE =
      Interns.info("NetSource", "Feed (operator's network utilization) or Observed (slowdown)");

  /** A gauge of every record: its name, description and where its value comes from. */
  private record Gauge(MetricsInfo info, ToDoubleFunction<NodeScore> value) {
    Gauge(String name, String description, ToDoubleFunction<NodeScore> value) {
      this(Interns.info(name, description), value);
    }
  }

  private static final List<Gauge> GAUGES = List.of(
      new Gauge("CpuSpeed", "CPU speed relative to the fastest node", NodeScore::cpuSpeed),
      new Gauge("CpuFree", "Free share of the node's CPU by its NodeManager's report",
          NodeScore::cpuFree),
      new Gauge("Disk", "Disk term of the map score", NodeScore::disk),
      new Gauge("Net", "Network term of the reduce score", NodeScore::net),
      new Gauge("MapInfluence", "Influence term from the node's recent map latencies",
          NodeScore::mapInfluence),
      new Gauge("ReduceInfluence", "Influence term from the node's recent reduce latencies",
          NodeScore::reduceInfluence),
      new Gauge("MapScore", "MPS, the map performance score", NodeScore::mapScore),
      new Gauge("ReduceScore", "RPS, the reduce performance score", NodeScore::reduceScore));

  /** Per queue, its latest board by node. */
  private final Map<String, Map<String, NodeScore>> boards = new ConcurrentHashMap<>();

  /** Takes the boards of one offer's response (each queue's nodes together). */
  public void update(List<NodeScore> scores) {
    Map<String, Map<String, NodeScore>> byQueue = new TreeMap<>();
    for (NodeScore score : scores) {
      byQueue.computeIfAbsent(score.queue(), queue -> new TreeMap<>()).put(score.node(), score);
    }
    boards.putAll(byQueue);
  }

  /** The latest scores of {@code node} in {@code queue}, or null. */
  public NodeScore score(String queue, String node) {
    return boards.getOrDefault(queue, Map.of()).get(node);
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    boards.forEach((queue, nodes) -> nodes.values().forEach(score -> {
      MetricsRecordBuilder record = collector.addRecord(RECORD).setContext("yarn")
          .tag(QUEUE, queue).tag(NODE, score.node())
          .tag(MAP_CLASS, score.mapClass()).tag(REDUCE_CLASS, score.reduceClass())
          .tag(DISK_SOURCE, score.diskFromFeed() ? "Feed" : "Observed")
          .tag(NET_SOURCE, score.netFromFeed() ? "Feed" : "Observed");
      for (Gauge gauge : GAUGES) {
        record.addGauge(gauge.info(), gauge.value().applyAsDouble(score));
      }
    }));
  }
}
