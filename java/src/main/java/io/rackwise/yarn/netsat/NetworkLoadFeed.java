package io.rackwise.yarn.netsat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads an operator's load feed: a JSON file a monitoring agent rewrites. Schema version 2:
 *
 * <pre>
 * {"version": 2,
 *  "time_ms": 1763700000000,
 *  "racks": {"/rack1": 0.93},
 *  "hosts": {"node17.example.com": {"cross_rack_mbps": 312.5, "disk_utilization": 0.4,
 *                                   "network_utilization": 0.3, "cpu_speed": 1.5}}}
 * </pre>
 *
 * {@code racks} gives a rack's cross-rack link utilization (0 = idle, 1 = full); {@code hosts}
 * gives each host's figures ({@link HostFigure}), every one optional: its cross-rack traffic in
 * Mbit/s (which the core adds up per rack against the rack's link capacity), its disk and network
 * utilization (0 to 1) and its CPU speed relative to nominal (1). Version 1, the file without
 * {@code version}, is still read: there each host maps to a plain number, its cross-rack
 * Mbit/s. {@code time_ms} says when the figures were measured (default: the file's modification
 * time). A background thread re-reads the file when its modification time changes, never the
 * heartbeat path; a file that does not parse, has an unknown version or holds a bad figure is
 * reported (file, element, value, reason) and ignored, so the last good figures stay until they
 * go stale in the core ({@code netsat.feed-max-age-ms}).
 */
public final class NetworkLoadFeed extends PolledFile {
  private static final Logger LOG = LoggerFactory.getLogger(NetworkLoadFeed.class);
  public static final String THREAD_NAME = "rackwise-network-load-feed";

  /** The schema versions this reader accepts; a file without {@code version} is version 1. */
  public static final int LATEST_VERSION = 2;

  /** Where the figures go (the decision core's event queue). */
  public interface Sink {
    void rackLoad(String rack, double utilization, long timeMs);

    /** One host's figures; only those the file gave are in the map, in the enum's order. */
    void hostFigures(String host, Map<HostFigure, Double> figures, long timeMs);
  }

  private final Sink sink;
  private final ObjectMapper mapper = new ObjectMapper();

  public NetworkLoadFeed(Path file, long pollIntervalMs, Sink sink) {
    super(file, pollIntervalMs, THREAD_NAME, "network load feed", "NetSat uses its model");
    this.sink = sink;
  }

  @Override
  protected boolean read(FileTime modified) {
    try {
      return send(mapper.readTree(file.toFile()), modified.toMillis());
    } catch (IOException e) {
      LOG.error("network load feed {} is not valid JSON and is ignored: {}", file,
          e.getMessage());
      return false;
    }
  }

  private boolean send(JsonNode document, long modifiedMs) {
    List<String> problems = new ArrayList<>();
    if (!document.isObject()) {
      problems.add("the document must be a JSON object");
    }
    int version = version(document.path("version"), problems);
    long timeMs = modifiedMs;
    JsonNode time = document.path("time_ms");
    if (!time.isMissingNode()) {
      if (time.canConvertToLong() && time.asLong() >= 0) {
        timeMs = time.asLong();
      } else {
        problems.add("time_ms: value '" + time + "' must be a whole number of milliseconds");
      }
    }
    Map<String, Double> racks = rackFigures(document.path("racks"), problems);
    Map<String, Map<HostFigure, Double>> hosts =
        hostFigures(document.path("hosts"), version, problems);
    if (!problems.isEmpty()) {
      LOG.error("network load feed {} is ignored, the last good figures stay: {}", file,
          String.join("; ", problems));
      return false;
    }
    for (Map.Entry<String, Double> rack : racks.entrySet()) {
      sink.rackLoad(rack.getKey(), rack.getValue(), timeMs);
    }
    for (Map.Entry<String, Map<HostFigure, Double>> host : hosts.entrySet()) {
      sink.hostFigures(host.getKey(), host.getValue(), timeMs);
    }
    return true;
  }

  private static int version(JsonNode version, List<String> problems) {
    if (version.isMissingNode()) {
      return 1;
    }
    if (version.isIntegralNumber() && version.asInt() >= 1 && version.asInt() <= LATEST_VERSION) {
      return version.asInt();
    }
    problems.add("version: value '" + version + "' is not a schema version this Rackwise reads "
        + "(1 to " + LATEST_VERSION + ")");
    return LATEST_VERSION;
  }

  private static Map<String, Double> rackFigures(JsonNode node, List<String> problems) {
    Map<String, Double> values = new TreeMap<>();
    for (Map.Entry<String, JsonNode> entry : entries(node, "racks", problems)) {
      JsonNode value = entry.getValue();
      if (value.isNumber() && Double.isFinite(value.asDouble()) && value.asDouble() >= 0) {
        values.put(entry.getKey(), value.asDouble());
      } else {
        problems.add("racks." + entry.getKey() + ": value '" + value
            + "' must be a number >= 0");
      }
    }
    return values;
  }

  /**
   * Version 1: host to its cross-rack Mbit/s. Version 2: host to an object of optional figures;
   * an unknown figure name is refused, so a misspelt one is not silently dropped.
   */
  private static Map<String, Map<HostFigure, Double>> hostFigures(JsonNode node, int version,
      List<String> problems) {
    Map<String, Map<HostFigure, Double>> hosts = new TreeMap<>();
    for (Map.Entry<String, JsonNode> host : entries(node, "hosts", problems)) {
      String where = "hosts." + host.getKey();
      Map<HostFigure, Double> figures = new EnumMap<>(HostFigure.class);
      if (version == 1) {
        figure(HostFigure.CROSS_RACK_MBPS, host.getValue(), where, figures, problems);
      } else if (!host.getValue().isObject()) {
        problems.add(where + ": value '" + host.getValue() + "' must be an object of figures ("
            + wireNames() + ") in schema version 2");
      } else {
        for (Iterator<Map.Entry<String, JsonNode>> it = host.getValue().fields(); it.hasNext();) {
          Map.Entry<String, JsonNode> field = it.next();
          HostFigure figure = HostFigure.ofWireName(field.getKey());
          if (figure == null) {
            problems.add(where + "." + field.getKey() + ": unknown figure (expected one of: "
                + wireNames() + ")");
          } else {
            figure(figure, field.getValue(), where + "." + field.getKey(), figures, problems);
          }
        }
      }
      hosts.put(host.getKey(), figures);
    }
    return hosts;
  }

  private static void figure(HostFigure figure, JsonNode value, String where,
      Map<HostFigure, Double> figures, List<String> problems) {
    if (value.isNumber() && figure.accepts(value.asDouble())) {
      figures.put(figure, value.asDouble());
    } else {
      problems.add(where + ": value '" + value + "' must be " + figure.expected());
    }
  }

  private static String wireNames() {
    StringBuilder names = new StringBuilder();
    for (HostFigure figure : HostFigure.values()) {
      names.append(names.length() == 0 ? "" : ", ").append(figure.wireName());
    }
    return names.toString();
  }

  private static List<Map.Entry<String, JsonNode>> entries(JsonNode node, String field,
      List<String> problems) {
    List<Map.Entry<String, JsonNode>> entries = new ArrayList<>();
    if (node.isMissingNode()) {
      return entries;
    }
    if (!node.isObject()) {
      problems.add(field + ": must be an object of name to figures");
      return entries;
    }
    node.fields().forEachRemaining(entries::add);
    return entries;
  }
}
