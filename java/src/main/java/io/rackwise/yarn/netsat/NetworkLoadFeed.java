package io.rackwise.yarn.netsat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads an operator's cross-rack load feed: a JSON file a monitoring agent rewrites, e.g.
 *
 * <pre>
 * {"time_ms": 1763700000000,
 *  "racks": {"/rack1": 0.93},
 *  "hosts": {"node17.example.com": 312.5}}
 * </pre>
 *
 * {@code racks} gives a rack's cross-rack link utilization (0 = idle, 1 = full); {@code hosts}
 * gives a host's cross-rack traffic in Mbit/s, which the core adds up per rack against the rack's
 * link capacity. {@code time_ms} says when the figures were measured (default: the file's
 * modification time). A background thread re-reads the file when its modification time changes,
 * never the heartbeat path; a file that does not parse or holds a bad figure is reported (file,
 * element, value, reason) and ignored, so the last good figures stay until they go stale in the
 * core ({@code netsat.feed-max-age-ms}).
 */
public final class NetworkLoadFeed implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NetworkLoadFeed.class);
  public static final String THREAD_NAME = "rackwise-network-load-feed";

  /** Where the figures go (the decision core's event queue). */
  public interface Sink {
    void rackLoad(String rack, double utilization, long timeMs);

    void hostLoad(String host, double crossRackMbps, long timeMs);
  }

  private final Path file;
  private final long pollIntervalMs;
  private final Sink sink;
  private final ObjectMapper mapper = new ObjectMapper();
  private final Thread thread;
  private volatile boolean running = true;
  private FileTime lastRead;
  private final AtomicLong filesSent = new AtomicLong();
  private boolean reportedMissing;

  public NetworkLoadFeed(Path file, long pollIntervalMs, Sink sink) {
    this.file = file;
    this.pollIntervalMs = pollIntervalMs;
    this.sink = sink;
    this.thread = new Thread(this::run, THREAD_NAME);
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(pollIntervalMs + 5000);
  }

  private void run() {
    while (running) {
      readIfChanged();
      try {
        Thread.sleep(pollIntervalMs);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** How many versions of the file were read and their figures sent. */
  public long filesSent() {
    return filesSent.get();
  }

  /** Reads the file once if it changed since the last read; true when figures were sent. */
  boolean readIfChanged() {
    FileTime modified;
    try {
      modified = Files.getLastModifiedTime(file);
    } catch (NoSuchFileException e) {
      if (!reportedMissing) {
        LOG.warn("network load feed {} does not exist (yet); NetSat uses its model", file);
        reportedMissing = true;
      }
      return false;
    } catch (IOException e) {
      LOG.warn("network load feed {} cannot be read: {}", file, e.toString());
      return false;
    }
    reportedMissing = false;
    if (modified.equals(lastRead)) {
      return false;
    }
    lastRead = modified;
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
    long timeMs = modifiedMs;
    JsonNode time = document.path("time_ms");
    if (!time.isMissingNode()) {
      if (time.canConvertToLong() && time.asLong() >= 0) {
        timeMs = time.asLong();
      } else {
        problems.add("time_ms: value '" + time + "' must be a whole number of milliseconds");
      }
    }
    Map<String, Double> racks = figures(document, "racks", problems);
    Map<String, Double> hosts = figures(document, "hosts", problems);
    if (!problems.isEmpty()) {
      LOG.error("network load feed {} is ignored, the last good figures stay: {}", file,
          String.join("; ", problems));
      return false;
    }
    filesSent.incrementAndGet();
    for (Map.Entry<String, Double> rack : racks.entrySet()) {
      sink.rackLoad(rack.getKey(), rack.getValue(), timeMs);
    }
    for (Map.Entry<String, Double> host : hosts.entrySet()) {
      sink.hostLoad(host.getKey(), host.getValue(), timeMs);
    }
    return true;
  }

  private static Map<String, Double> figures(JsonNode document, String field,
      List<String> problems) {
    Map<String, Double> values = new TreeMap<>();
    JsonNode node = document.path(field);
    if (node.isMissingNode()) {
      return values;
    }
    if (!node.isObject()) {
      problems.add(field + ": must be an object of name to number");
      return values;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> entry = it.next();
      JsonNode value = entry.getValue();
      if (value.isNumber() && Double.isFinite(value.asDouble()) && value.asDouble() >= 0) {
        values.put(entry.getKey(), value.asDouble());
      } else {
        problems.add(field + "." + entry.getKey() + ": value '" + value
            + "' must be a number >= 0");
      }
    }
    return values;
  }
}
