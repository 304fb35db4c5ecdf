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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
  /** Query strings asked with each path, in order ("" for none). */
  final Map<String, List<String>> queries = new ConcurrentHashMap<>();
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

  static String tasksPath(ApplicationId appId) {
    return jobPath(appId) + "/tasks";
  }

  /** The id the AM gives map {@code k} of the job of {@code appId}. */
  static String mapTaskId(ApplicationId appId, int k) {
    return String.format(Locale.ROOT, "task_%d_%04d_m_%06d", appId.getClusterTimestamp(),
        appId.getId(), k);
  }

  static String taskCountersPath(ApplicationId appId, String taskId) {
    return tasksPath(appId) + "/" + taskId + "/counters";
  }

  /** One map task of a served job: its state and its map-side byte counters. */
  record MapTask(String state, long inputBytes, long outputBytes) {
  }

  /**
   * Serves a running job whose first {@code mapsCompleted} maps have SUCCEEDED, each having
   * read {@code inputBytesPerMap} and materialised {@code outputBytesPerMap}, and whose other
   * maps are RUNNING (the first of them) or SCHEDULED. Running maps serve counters too, with
   * input read but no output yet, as the AM does, so a poller that reads them is caught.
   */
  void serveJob(ApplicationId appId, int mapsTotal, int mapsCompleted, int reducesTotal,
                long inputBytesPerMap, long outputBytesPerMap) {
    List<MapTask> maps = new ArrayList<>();
    for (int k = 0; k < mapsTotal; k++) {
      maps.add(k < mapsCompleted
          ? new MapTask("SUCCEEDED", inputBytesPerMap, outputBytesPerMap)
          : k == mapsCompleted
              ? new MapTask("RUNNING", inputBytesPerMap / 2, 0)
              : new MapTask("SCHEDULED", 0, 0));
    }
    serveJob(appId, mapsCompleted, reducesTotal, maps);
  }

  /** Serves a running job with these maps at its job, tasks and task counters paths. */
  void serveJob(ApplicationId appId, int mapsCompleted, int reducesTotal, List<MapTask> maps) {
    put(jobPath(appId), Answer.json(jobJson(appId, "RUNNING", maps.size(), mapsCompleted,
        reducesTotal)));
    put(tasksPath(appId), Answer.json(tasksJson(appId, maps)));
    for (int k = 0; k < maps.size(); k++) {
      String taskId = mapTaskId(appId, k);
      put(taskCountersPath(appId, taskId), Answer.json(taskCountersJson(taskId,
          maps.get(k).inputBytes(), maps.get(k).outputBytes())));
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    String query = ex.getRequestURI().getRawQuery();
    queries.computeIfAbsent(path, p -> new CopyOnWriteArrayList<>())
        .add(query == null ? "" : query);
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
   * {@code GET /ws/v1/mapreduce/jobs/{jobid}/tasks?type=m}: a TasksInfo under a "tasks" root,
   * map k carrying the id {@link #mapTaskId} gives it.
   */
  static String tasksJson(ApplicationId appId, List<MapTask> maps) {
    ObjectNode tasks = JSON.createObjectNode();
    ArrayNode list = tasks.putArray("task");
    for (int k = 0; k < maps.size(); k++) {
      String state = maps.get(k).state();
      boolean done = state.equals("SUCCEEDED");
      ObjectNode task = list.addObject();
      task.put("startTime", 1700000100000L + k);
      task.put("finishTime", done ? 1700000160000L + k : 0);
      task.put("elapsedTime", 60000);
      task.put("progress", done ? 100.0 : 0.0);
      task.put("id", mapTaskId(appId, k));
      task.put("state", state);
      task.put("type", "MAP");
      task.put("successfulAttempt", done
          ? mapTaskId(appId, k).replace("task_", "attempt_") + "_0" : "");
      task.put("status", done ? "map > sort" : "");
    }
    ObjectNode root = JSON.createObjectNode();
    root.set("tasks", tasks);
    return root.toString();
  }

  /**
   * {@code GET /ws/v1/mapreduce/jobs/{jobid}/tasks/{taskid}/counters}: a JobTaskCounterInfo
   * under a "jobTaskCounters" root, with the groups a real map reports. A counter of the same
   * name in another group is there on purpose, so a test sees whether the group was checked.
   */
  static String taskCountersJson(String taskId, long inputBytes, long outputBytes) {
    ObjectNode counters = JSON.createObjectNode();
    counters.put("id", taskId);
    ArrayNode groups = counters.putArray("taskCounterGroup");

    ObjectNode fs = groups.addObject();
    fs.put("counterGroupName", "org.apache.hadoop.mapreduce.FileSystemCounter");
    ArrayNode fsc = fs.putArray("counter");
    counter(fsc, "FILE_BYTES_WRITTEN", outputBytes + 480);
    counter(fsc, "HDFS_BYTES_READ", inputBytes + 150);
    counter(fsc, "BYTES_READ", 99); // same name as below, other group

    ObjectNode task = groups.addObject();
    task.put("counterGroupName", "org.apache.hadoop.mapreduce.TaskCounter");
    ArrayNode tc = task.putArray("counter");
    counter(tc, "MAP_INPUT_RECORDS", 1000);
    counter(tc, "MAP_OUTPUT_RECORDS", 5000);
    counter(tc, "MAP_OUTPUT_BYTES", outputBytes * 2);
    counter(tc, "MAP_OUTPUT_MATERIALIZED_BYTES", outputBytes);
    counter(tc, "SPILLED_RECORDS", 5000);

    ObjectNode in = groups.addObject();
    in.put("counterGroupName", "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter");
    counter(in.putArray("counter"), "BYTES_READ", inputBytes);

    ObjectNode root = JSON.createObjectNode();
    root.set("jobTaskCounters", counters);
    return root.toString();
  }

  private static void counter(ArrayNode list, String name, long value) {
    list.addObject().put("name", name).put("value", value);
  }
}
