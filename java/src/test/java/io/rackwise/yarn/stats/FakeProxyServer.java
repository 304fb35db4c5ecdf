package io.rackwise.yarn.stats;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * A real HTTP server standing in for the RM web proxy in front of MapReduce AMs. It answers
 * whatever a test has put at a path, and records what was asked. The JSON documents it
 * builds have the structure of the AM's REST resources (root element kept, Jersey natural
 * notation), including fields the poller ignores, so the parser is exercised on realistic
 * input rather than on the minimum it reads.
 */
final class FakeProxyServer implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();

  /** What to answer at one path. */
  record Answer(int status, String contentType, byte[] body, Map<String, String> headers,
                CountDownLatch holdUntil) {

    static Answer json(String json) {
      return new Answer(200, "application/json; charset=utf-8",
          json.getBytes(StandardCharsets.UTF_8), Map.of(), null);
    }

    static Answer of(int status, String contentType, String body) {
      return new Answer(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of(),
          null);
    }

    static Answer redirect(String location) {
      return new Answer(302, "text/html; charset=utf-8",
          ("<html><body>Redirecting to <a href=\"" + location + "\">" + location
              + "</a></body></html>").getBytes(StandardCharsets.UTF_8),
          Map.of("Location", location), null);
    }

    /** Answers only once {@code latch} opens (or after 30 s), to simulate a hung AM. */
    static Answer hang(CountDownLatch latch, String json) {
      return new Answer(200, "application/json", json.getBytes(StandardCharsets.UTF_8),
          Map.of(), latch);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor;
  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
  final List<String> acceptHeaders = new CopyOnWriteArrayList<>();
  final CountDownLatch hangEntered = new CountDownLatch(1);

  FakeProxyServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    // Several handler threads, so one hung answer does not block the others.
    executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-proxy-handler");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  int port() {
    return server.getAddress().getPort();
  }

  void put(String path, Answer answer) {
    answers.put(path, answer);
  }

  int hits(String path) {
    AtomicInteger n = hits.get(path);
    return n == null ? 0 : n.get();
  }

  int totalHits() {
    return hits.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  static String jobPath(ApplicationId appId) {
    return "/proxy/" + appId + "/ws/v1/mapreduce/jobs/" + JobStatsPoller.jobIdOf(appId);
  }

  static String countersPath(ApplicationId appId) {
    return jobPath(appId) + "/counters";
  }

  /** Serves a running job with these figures at both paths of {@code appId}. */
  void serveJob(ApplicationId appId, int mapsTotal, int mapsCompleted, int reducesTotal,
                long mapInputBytes, long mapOutputBytes) {
    put(jobPath(appId), Answer.json(jobJson(appId, "RUNNING", mapsTotal, mapsCompleted,
        reducesTotal)));
    put(countersPath(appId), Answer.json(countersJson(appId, mapInputBytes, mapOutputBytes)));
  }

  private void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    String accept = ex.getRequestHeaders().getFirst("Accept");
    acceptHeaders.add(accept == null ? "" : accept);
    Answer a = answers.get(path);
    if (a == null) {
      a = Answer.of(404, "text/html; charset=utf-8",
          "<html><body>Not found: " + path + "</body></html>");
    }
    if (a.holdUntil() != null) {
      hangEntered.countDown();
      try {
        a.holdUntil().await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    a.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
    if (a.contentType() != null) {
      ex.getResponseHeaders().set("Content-Type", a.contentType());
    }
    try {
      ex.sendResponseHeaders(a.status(), a.body().length == 0 ? -1 : a.body().length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(a.body());
      }
    } catch (IOException e) {
      // The client gave up (timeout, stop()); nothing to do.
    } finally {
      ex.close();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  // ------------------------------------------------------------ AM-shaped documents

  /** {@code GET /ws/v1/mapreduce/jobs/{jobid}}: a JobInfo under a "job" root. */
  static String jobJson(ApplicationId appId, String state, int mapsTotal, int mapsCompleted,
                        int reducesTotal) {
    ObjectNode job = JSON.createObjectNode();
    job.put("startTime", 1700000100000L);
    job.put("finishTime", 0);
    job.put("elapsedTime", 42000);
    job.put("id", JobStatsPoller.jobIdOf(appId));
    job.put("name", "word count");
    job.put("user", "alice");
    job.put("queue", "root.analytics");
    job.put("state", state);
    job.put("mapsTotal", mapsTotal);
    job.put("mapsCompleted", mapsCompleted);
    job.put("reducesTotal", reducesTotal);
    job.put("reducesCompleted", 0);
    job.put("mapProgress", mapsTotal == 0 ? 0.0 : 100.0 * mapsCompleted / mapsTotal);
    job.put("reduceProgress", 0.0);
    job.put("mapsPending", Math.max(0, mapsTotal - mapsCompleted - 1));
    job.put("mapsRunning", Math.min(1, mapsTotal - mapsCompleted));
    job.put("reducesPending", reducesTotal);
    job.put("reducesRunning", 0);
    job.put("uberized", false);
    job.put("diagnostics", "");
    for (String k : List.of("newReduceAttempts", "runningReduceAttempts",
        "failedReduceAttempts", "killedReduceAttempts", "successfulReduceAttempts",
        "newMapAttempts", "runningMapAttempts", "failedMapAttempts", "killedMapAttempts")) {
      job.put(k, 0);
    }
    job.put("successfulMapAttempts", mapsCompleted);
    ArrayNode acls = job.putArray("acls");
    acls.addObject().put("name", "mapreduce.job.acl-modify-job").put("value", " ");
    acls.addObject().put("name", "mapreduce.job.acl-view-job").put("value", " ");
    ObjectNode root = JSON.createObjectNode();
    root.set("job", job);
    return root.toString();
  }

  /**
   * {@code GET /ws/v1/mapreduce/jobs/{jobid}/counters}: a JobCounterInfo under a
   * "jobCounters" root. Map and total values differ on purpose (the reduce side adds to the
   * totals), so a test sees whether the map-side value was read.
   */
  static String countersJson(ApplicationId appId, long mapInputBytes, long mapOutputBytes) {
    ObjectNode counters = JSON.createObjectNode();
    counters.put("id", JobStatsPoller.jobIdOf(appId));
    ArrayNode groups = counters.putArray("counterGroup");

    ObjectNode fs = groups.addObject();
    fs.put("counterGroupName", "org.apache.hadoop.mapreduce.FileSystemCounter");
    ArrayNode fsc = fs.putArray("counter");
    counter(fsc, "FILE_BYTES_READ", 480, 0, 480);
    counter(fsc, "HDFS_BYTES_READ", mapInputBytes + 3000, mapInputBytes + 3000, 0);
    counter(fsc, "BYTES_READ", 99, 77, 22); // same name as below, other group

    ObjectNode task = groups.addObject();
    task.put("counterGroupName", "org.apache.hadoop.mapreduce.TaskCounter");
    ArrayNode tc = task.putArray("counter");
    counter(tc, "MAP_INPUT_RECORDS", 1000, 1000, 0);
    counter(tc, "MAP_OUTPUT_RECORDS", 5000, 5000, 0);
    counter(tc, "MAP_OUTPUT_BYTES", mapOutputBytes * 2, mapOutputBytes * 2, 0);
    counter(tc, "MAP_OUTPUT_MATERIALIZED_BYTES", mapOutputBytes + 555, mapOutputBytes, 555);
    counter(tc, "REDUCE_SHUFFLE_BYTES", 555, 0, 555);

    ObjectNode in = groups.addObject();
    in.put("counterGroupName", "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter");
    counter(in.putArray("counter"), "BYTES_READ", mapInputBytes + 111, mapInputBytes, 111);

    ObjectNode out = groups.addObject();
    out.put("counterGroupName",
        "org.apache.hadoop.mapreduce.lib.output.FileOutputFormatCounter");
    counter(out.putArray("counter"), "BYTES_WRITTEN", 321, 0, 321);

    ObjectNode root = JSON.createObjectNode();
    root.set("jobCounters", counters);
    return root.toString();
  }

  private static void counter(ArrayNode list, String name, long total, long map, long reduce) {
    list.addObject()
        .put("name", name)
        .put("totalCounterValue", total)
        .put("mapCounterValue", map)
        .put("reduceCounterValue", reduce);
  }
}
