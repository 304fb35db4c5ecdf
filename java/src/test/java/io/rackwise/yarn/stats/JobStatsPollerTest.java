package io.rackwise.yarn.stats;

import static io.rackwise.yarn.testing.Waiting.awaitTrue;
import static io.rackwise.yarn.testing.Waiting.threadAlive;
import static io.rackwise.yarn.stats.FakeProxyServer.jobPath;
import static io.rackwise.yarn.stats.FakeProxyServer.mapTaskId;
import static io.rackwise.yarn.stats.FakeProxyServer.taskCountersPath;
import static io.rackwise.yarn.stats.FakeProxyServer.tasksPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.rackwise.yarn.stats.FakeProxyServer.Answer;
import io.rackwise.yarn.stats.FakeProxyServer.MapTask;
import io.rackwise.yarn.config.ShimSettings;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class JobStatsPollerTest {

  private static final long CLUSTER_TS = 1700000000000L;
  private static final ApplicationId APP = ApplicationId.newInstance(CLUSTER_TS, 7);
  private static final ApplicationId OTHER = ApplicationId.newInstance(CLUSTER_TS, 8);

  private FakeProxyServer server;
  private final List<JobStatsPoller> pollers = new ArrayList<>();
  private final CountDownLatch releaseHung = new CountDownLatch(1);

  @BeforeEach
  void startServer() throws Exception {
    server = new FakeProxyServer();
  }

  @AfterEach
  void stopEverything() {
    releaseHung.countDown();
    pollers.forEach(JobStatsPoller::stop);
    server.close();
    // Every poller was stopped above; none may leave its thread behind.
    assertNoPollerThread();
  }

  private JobStatsPoller poller(long intervalMs, int timeoutMs) {
    JobStatsPoller p = new JobStatsPoller(server::baseUrl, intervalMs, timeoutMs);
    pollers.add(p);
    return p;
  }

  @Test
  void readsFiguresFromJobTasksAndTaskCountersResources() {
    server.serveJob(APP, 40, 12, 5, 1_234_567_890L, 987_654_321L);
    JobStatsPoller p = poller(60_000, 2000);
    assertTrue(p.track(APP, "MAPREDUCE"));

    p.pollOnce();

    List<JobStats> got = p.drain();
    assertEquals(List.of(new JobStats(APP.toString(), 40, 12, 5, 12 * 1_234_567_890L,
        12 * 987_654_321L)), got);
    assertEquals(0, p.pollFailures());
    assertEquals(1, server.hits(jobPath(APP)));
    assertEquals(List.of("type=m"), server.queries.get(tasksPath(APP)));
    for (int k = 0; k < 40; k++) {
      // The counters of the succeeded maps only; the running and scheduled ones are not read.
      assertEquals(k < 12 ? 1 : 0, server.hits(taskCountersPath(APP, mapTaskId(APP, k))),
          "map " + k);
    }
    // The AM resources produce XML too; the poller must ask for JSON.
    assertTrue(server.acceptHeaders.stream().allMatch(h -> h.equals("application/json")),
        server.acceptHeaders.toString());
  }

  @Test
  void jobIdCarriesTheApplicationNumbers() {
    assertEquals("job_1700000000000_0007", JobStatsPoller.jobIdOf(APP));
    assertEquals("job_1700000000000_12345",
        JobStatsPoller.jobIdOf(ApplicationId.newInstance(CLUSTER_TS, 12345)));
    // The MR client derives the job id from the application id the same way.
    ApplicationId big = ApplicationId.newInstance(CLUSTER_TS, 123456);
    assertEquals(big.toString().replace("application_", "job_"), JobStatsPoller.jobIdOf(big));
  }

  @Test
  void unchangedFiguresAreNotEmittedAgain() {
    server.serveJob(APP, 10, 2, 1, 1000, 500);
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);

    p.pollOnce();
    assertEquals(1, p.drain().size());
    p.pollOnce();
    p.pollOnce();
    assertEquals(List.of(), p.drain());

    server.serveJob(APP, 10, 3, 1, 1000, 500);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 10, 3, 1, 3000, 1500)), p.drain());
    assertEquals(2, p.emittedCount());
  }

  @Test
  void onlyTheNewestUndrainedReadingIsHandedOver() {
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    server.serveJob(APP, 10, 1, 1, 100, 10);
    p.pollOnce();
    server.serveJob(APP, 10, 2, 1, 100, 10);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 10, 2, 1, 200, 20)), p.drain());
  }

  @Test
  void drainOrdersByApplication() {
    JobStatsPoller p = poller(60_000, 2000);
    server.serveJob(OTHER, 2, 0, 1, 0, 0);
    server.serveJob(APP, 3, 0, 1, 0, 0);
    p.track(OTHER);
    p.track(APP);
    p.pollOnce();
    List<String> apps = p.drain().stream().map(JobStats::appId).toList();
    assertEquals(List.of(APP.toString(), OTHER.toString()), apps);
  }

  @Test
  void onlyMapReduceAppsAreTracked() {
    JobStatsPoller p = poller(60_000, 2000);
    assertFalse(p.track(APP, "SPARK"));
    assertFalse(p.track(APP, null));
    assertEquals(0, p.trackedCount());
    // RM clients compare application types case-insensitively; so do we.
    assertTrue(p.track(APP, "mapreduce"));
    assertEquals(1, p.trackedCount());
  }

  /** Answers that must count as "unknown now", never as figures (let alone zeros). */
  static Stream<Arguments> unusableAnswers() {
    String html = "<html><head><title>Application</title></head><body>AM not up</body></html>";
    return Stream.of(
        Arguments.of("404 HTML (proxy: no such app)",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.of(404, "text/html; charset=utf-8", html))),
        Arguments.of("404 JSON RemoteException (AM: no such job)",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.of(404, "application/json",
                    "{\"RemoteException\":{\"exception\":\"NotFoundException\","
                        + "\"message\":\"java.lang.Exception: job, x, is not found\","
                        + "\"javaClassName\":\"org.apache.hadoop.yarn.webapp.NotFoundException\""
                        + "}}"))),
        Arguments.of("500",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.of(500, "text/plain", "boom"))),
        Arguments.of("200 HTML (RM app page)",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.of(200, "text/html; charset=utf-8", html))),
        Arguments.of("302 redirect to the RM app page",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.redirect("/cluster/app/" + APP))),
        Arguments.of("JSON content type, not JSON",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.of(200, "application/json", html))),
        Arguments.of("JSON without a job object",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.json("{\"jobs\":{\"job\":[]}}"))),
        Arguments.of("job object without mapsTotal",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.json("{\"job\":{\"id\":\"x\",\"state\":\"RUNNING\","
                    + "\"mapsCompleted\":1,\"reducesTotal\":1}}"))),
        Arguments.of("negative figure",
            (Consumer<FakeProxyServer>) s -> s.put(jobPath(APP),
                Answer.json(FakeProxyServer.jobJson(APP, "RUNNING", 10, -1, 1)))),
        Arguments.of("tasks resource fails while the job resource works",
            (Consumer<FakeProxyServer>) s -> s.put(tasksPath(APP),
                Answer.of(500, "text/html", html))),
        Arguments.of("tasks JSON without tasks",
            (Consumer<FakeProxyServer>) s -> s.put(tasksPath(APP),
                Answer.json("{\"task\":[]}"))),
        Arguments.of("task without a state",
            (Consumer<FakeProxyServer>) s -> s.put(tasksPath(APP),
                Answer.json(FakeProxyServer.tasksJson(APP, sixOfTenSucceeded())
                    .replace("\"state\":\"SUCCEEDED\",", "")))),
        Arguments.of("task id of another job",
            (Consumer<FakeProxyServer>) s -> s.put(tasksPath(APP),
                Answer.json(FakeProxyServer.tasksJson(OTHER, sixOfTenSucceeded())))),
        Arguments.of("newly succeeded map's counters fail",
            (Consumer<FakeProxyServer>) s -> s.put(taskCountersPath(APP, mapTaskId(APP, 5)),
                Answer.of(500, "text/html", html))),
        Arguments.of("task counters JSON without jobTaskCounters",
            (Consumer<FakeProxyServer>) s -> s.put(taskCountersPath(APP, mapTaskId(APP, 5)),
                Answer.json("{\"taskCounterGroup\":[]}"))),
        Arguments.of("task counters of another task",
            (Consumer<FakeProxyServer>) s -> s.put(taskCountersPath(APP, mapTaskId(APP, 5)),
                Answer.json(FakeProxyServer.taskCountersJson(mapTaskId(APP, 4), 1000, 2000)))),
        Arguments.of("counter value not a number",
            (Consumer<FakeProxyServer>) s -> s.put(taskCountersPath(APP, mapTaskId(APP, 5)),
                Answer.json(FakeProxyServer.taskCountersJson(mapTaskId(APP, 5), 1000, 2000)
                    .replace("\"value\":2000}", "\"value\":\"lots\"}")))));
  }

  /** The maps of {@code serveJob(APP, 10, 6, 2, 1000, 2000)}. */
  private static List<MapTask> sixOfTenSucceeded() {
    List<MapTask> maps = new ArrayList<>();
    for (int k = 0; k < 10; k++) {
      maps.add(k < 6 ? new MapTask("SUCCEEDED", 1000, 2000) : new MapTask("RUNNING", 500, 0));
    }
    return maps;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unusableAnswers")
  void unusableAnswerEmitsNothingAndIsCounted(String name, Consumer<FakeProxyServer> breakIt) {
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    server.serveJob(APP, 10, 4, 2, 1000, 2000);
    p.pollOnce();
    JobStats before = p.drain().get(0);

    // Figures change behind a broken answer; nothing (in particular no zeros, nor the sums
    // without the map whose counters are broken) may come out.
    server.serveJob(APP, 10, 6, 2, 1000, 2000);
    breakIt.accept(server);
    p.pollOnce();
    p.pollOnce();
    assertEquals(List.of(), p.drain());
    assertEquals(2, p.pollFailures());
    assertEquals(1, p.emittedCount());

    // Once the AM answers properly again, figures flow again.
    server.serveJob(APP, 10, 6, 2, 1000, 2000);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), before.mapsTotal(), 6, 2, 6000, 12000)),
        p.drain());
    assertEquals(2, p.pollFailures());
  }

  @Test
  void redirectsAreNotFollowed() {
    server.put(jobPath(APP), Answer.redirect("/cluster/app/" + APP));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(1, server.hits(jobPath(APP)));
    assertEquals(0, server.hits("/cluster/app/" + APP));
    assertEquals(1, p.pollFailures());
  }

  @Test
  void aHungAmTimesOutAndOtherAppsStillGetPolled() {
    server.put(jobPath(APP), Answer.hang(releaseHung, "{}"));
    server.serveJob(OTHER, 5, 5, 1, 10, 20);
    // The timeout must leave room for the healthy app's seven requests (job, tasks, five
    // task counters) on a loaded build machine: at 300 ms one of them timed out in CI.
    JobStatsPoller p = poller(60_000, 1_500);
    p.track(APP);
    p.track(OTHER);

    long start = System.nanoTime();
    p.pollOnce();
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertTrue(tookMs < 10_000, "a poll cycle must be bounded by the timeout, took " + tookMs);
    assertEquals(1, p.pollFailures());
    assertEquals(List.of(new JobStats(OTHER.toString(), 5, 5, 1, 50, 100)), p.drain());
  }

  @Test
  void jobNotYetInitialisedGivesNothingButIsNoFailure() {
    // A NEW job has no task objects yet, so its mapsTotal of 0 means "not decided".
    server.put(jobPath(APP), Answer.json(FakeProxyServer.jobJson(APP, "NEW", 0, 0, 0)));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(), p.drain());
    assertEquals(0, p.pollFailures());
    assertEquals(0, server.hits(tasksPath(APP)));
  }

  @Test
  void bytesAreThoseOfTheSucceededMapsOnly() {
    // The AM's job counters would add the running maps' input, which has no output yet.
    // mapsCompleted counts the failed and killed maps too, as the AM does.
    server.serveJob(APP, 4, 2, List.of(
        new MapTask("SUCCEEDED", 100_000, 104_000),
        new MapTask("RUNNING", 60_000, 0),
        new MapTask("SUCCEEDED", 200_000, 208_000),
        new MapTask("SCHEDULED", 0, 0),
        new MapTask("FAILED", 30_000, 0),
        new MapTask("KILLED", 10_000, 0)));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 6, 4, 2, 300_000, 312_000)), p.drain());
    for (int k : new int[] {1, 3, 4, 5}) {
      assertEquals(0, server.hits(taskCountersPath(APP, mapTaskId(APP, k))), "map " + k);
    }
  }

  @Test
  void eachSucceededMapsCountersAreFetchedOnce() {
    server.serveJob(APP, 5, 2, 1, 1000, 1500);
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    p.pollOnce();
    server.serveJob(APP, 5, 4, 1, 1000, 1500);
    p.pollOnce();
    p.pollOnce();

    assertEquals(List.of(new JobStats(APP.toString(), 5, 4, 1, 4000, 6000)), p.drain());
    assertEquals(4, server.hits(tasksPath(APP)));
    for (int k = 0; k < 5; k++) {
      assertEquals(k < 4 ? 1 : 0, server.hits(taskCountersPath(APP, mapTaskId(APP, k))),
          "map " + k);
    }
  }

  @Test
  void aMapTakenBackFromSucceededLeavesTheSumsUntilItSucceedsAgain() {
    // The AM moves a succeeded map back to SCHEDULED when the node holding its output is
    // lost; its output has to be made again, by a new attempt with counters of its own.
    List<MapTask> maps = new ArrayList<>(List.of(
        new MapTask("SUCCEEDED", 1000, 1100),
        new MapTask("SUCCEEDED", 2000, 2200)));
    server.serveJob(APP, 2, 1, maps);
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 2, 2, 1, 3000, 3300)), p.drain());

    maps.set(1, new MapTask("SCHEDULED", 0, 0));
    server.serveJob(APP, 1, 1, maps);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 2, 1, 1, 1000, 1100)), p.drain());

    maps.set(1, new MapTask("SUCCEEDED", 2100, 2250));
    server.serveJob(APP, 2, 1, maps);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 2, 2, 1, 3100, 3350)), p.drain());
    assertEquals(1, server.hits(taskCountersPath(APP, mapTaskId(APP, 0))));
    assertEquals(2, server.hits(taskCountersPath(APP, mapTaskId(APP, 1))));
  }

  @Test
  void aFailedCountersFetchEmitsNoPartialReadingAndIsRetried() {
    server.serveJob(APP, 4, 4, 1, 1000, 1500);
    String third = taskCountersPath(APP, mapTaskId(APP, 2));
    server.put(third, Answer.of(503, "text/plain", "busy"));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);

    p.pollOnce();
    assertEquals(List.of(), p.drain(), "three of four succeeded maps is not a reading");
    assertEquals(1, p.pollFailures());

    server.put(third, Answer.json(FakeProxyServer.taskCountersJson(mapTaskId(APP, 2), 1000,
        1500)));
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 4, 4, 1, 4000, 6000)), p.drain());
    assertEquals(2, server.hits(third));
    for (int k : new int[] {0, 1, 3}) {
      // Read once: before the failure (and kept), or after it, in the second cycle.
      assertEquals(1, server.hits(taskCountersPath(APP, mapTaskId(APP, k))), "map " + k);
    }
  }

  @Test
  void countersNotReportedReadAsZero() {
    // A valid task counters document without the groups: the map has counted no such bytes
    // (its input format is not file based, say). That is a real reading, unlike a failed
    // answer.
    server.serveJob(APP, 3, 1, 1, 0, 0);
    String taskId = mapTaskId(APP, 0);
    server.put(taskCountersPath(APP, taskId), Answer.json(
        "{\"jobTaskCounters\":{\"id\":\"" + taskId + "\",\"taskCounterGroup\":["
            + "{\"counterGroupName\":\"org.apache.hadoop.mapreduce.TaskCounter\","
            + "\"counter\":[{\"name\":\"MAP_INPUT_RECORDS\",\"value\":3}]}]}}"));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 3, 1, 1, 0, 0)), p.drain());
    assertEquals(0, p.pollFailures());
  }

  @Test
  void singleElementListsWrittenAsObjectsAreAccepted() {
    String taskId = mapTaskId(APP, 0);
    server.put(jobPath(APP), Answer.json(FakeProxyServer.jobJson(APP, "RUNNING", 1, 1, 1)));
    server.put(tasksPath(APP), Answer.json("{\"tasks\":{\"task\":{\"id\":\"" + taskId
        + "\",\"state\":\"SUCCEEDED\",\"type\":\"MAP\"}}}"));
    server.put(taskCountersPath(APP, taskId), Answer.json(
        "{\"jobTaskCounters\":{\"id\":\"" + taskId + "\",\"taskCounterGroup\":"
            + "{\"counterGroupName\":\"org.apache.hadoop.mapreduce.TaskCounter\",\"counter\":"
            + "{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"value\":8}}}}"));
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 1, 1, 1, 0, 8)), p.drain());
  }

  @Test
  void untrackStopsPollingAndDropsTheUnreadReading() {
    server.serveJob(APP, 10, 1, 1, 100, 10);
    server.serveJob(OTHER, 10, 1, 1, 100, 10);
    JobStatsPoller p = poller(60_000, 2000);
    p.track(APP);
    p.track(OTHER);
    p.pollOnce();
    int hitsBefore = server.hits(jobPath(APP));

    p.untrack(APP);
    List<JobStats> got = p.drain();
    assertEquals(List.of(OTHER.toString()), got.stream().map(JobStats::appId).toList());

    server.serveJob(APP, 10, 2, 1, 200, 20);
    p.pollOnce();
    assertEquals(hitsBefore, server.hits(jobPath(APP)));
    assertEquals(List.of(), p.drain());
    assertEquals(1, p.trackedCount());
  }

  @Test
  void noBaseUrlSkipsTheCycleQuietly() {
    JobStatsPoller p = new JobStatsPoller(() -> null, 60_000, 2000);
    pollers.add(p);
    p.track(APP);
    p.pollOnce();
    assertEquals(0, server.totalHits());
    assertEquals(0, p.pollFailures());
    assertEquals(List.of(), p.drain());
  }

  @Test
  void backgroundThreadKeepsPollingThroughFailures() throws Exception {
    server.put(jobPath(APP), Answer.of(500, "text/plain", "down"));
    server.serveJob(OTHER, 4, 1, 2, 40, 80);
    JobStatsPoller p = poller(20, 1000);
    p.track(APP);
    p.track(OTHER);
    p.start();
    p.start(); // idempotent while running

    List<JobStats> seen = new ArrayList<>();
    awaitTrue(() -> {
      seen.addAll(p.drain());
      return p.pollCycles() >= 3 && p.pollFailures() >= 3 && !seen.isEmpty();
    }, "three cycles with failures of one app and a reading of the other");
    assertEquals(List.of(new JobStats(OTHER.toString(), 4, 1, 2, 40, 80)), seen);
    assertTrue(pollerThreadAlive(), "a failing AM must not kill the thread");

    server.serveJob(APP, 9, 9, 1, 90, 30);
    awaitTrue(() -> p.drain().stream().anyMatch(s -> s.appId().equals(APP.toString())),
        "the recovered app's reading");

    p.stop();
    assertFalse(pollerThreadAlive());
    // The thread is gone (above), so nothing can poll any more; a cycle started after stop()
    // would show here.
    long cycles = p.pollCycles();
    assertEquals(cycles, p.pollCycles(), "no polling after stop()");
    p.stop(); // idempotent
    assertThrows(IllegalStateException.class, p::start);
  }

  @Test
  void stopCutsAHungRequestShort() throws Exception {
    server.put(jobPath(APP), Answer.hang(releaseHung, "{}"));
    JobStatsPoller p = poller(10, 20_000);
    p.track(APP);
    p.start();
    assertTrue(server.hangEntered.await(10, java.util.concurrent.TimeUnit.SECONDS));

    long start = System.nanoTime();
    p.stop();
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertFalse(pollerThreadAlive());
    assertTrue(tookMs < 5_000, "stop() waited " + tookMs + " ms for a hung AM");
  }

  @Test
  void stopWithoutStartIsHarmless() {
    JobStatsPoller p = poller(1000, 1000);
    p.stop();
    p.close();
    assertThrows(IllegalStateException.class, p::start);
  }

  @Test
  void configurationGivesTheProxyAddress() {
    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.PROXY_ADDRESS, "proxy.example.com:9046");
    assertEquals("http://proxy.example.com:9046", JobStatsPoller.proxyBaseUrl(conf));

    conf.unset(YarnConfiguration.PROXY_ADDRESS);
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + server.port());
    String viaRm = JobStatsPoller.proxyBaseUrl(conf);
    assertTrue(viaRm.startsWith("http://") && viaRm.endsWith(":" + server.port()), viaRm);

    conf.set(YarnConfiguration.YARN_HTTP_POLICY_KEY, "HTTPS_ONLY");
    conf.set(YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS, "127.0.0.1:8090");
    String https = JobStatsPoller.proxyBaseUrl(conf);
    assertTrue(https.startsWith("https://") && https.endsWith(":8090"),
        "HTTPS-only clusters are polled over HTTPS, at the RM's HTTPS address: " + https);
  }

  @Test
  void pollerFromTheSettingsPollsThroughTheRmWebApp() throws Exception {
    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + server.port());
    conf.set(ShimSettings.STATS_POLL_INTERVAL_MS, "60000");
    conf.set(ShimSettings.STATS_TIMEOUT_MS, "1500");
    server.serveJob(APP, 1, 1, 0, 5, 6);
    JobStatsPoller p = JobStatsPoller.fromSettings(ShimSettings.from(conf), conf);
    pollers.add(p);
    p.track(APP);
    p.pollOnce();
    assertEquals(List.of(new JobStats(APP.toString(), 1, 1, 0, 5, 6)), p.drain());
  }

  @Test
  void badSettingsAreRefused() {
    assertThrows(IllegalArgumentException.class,
        () -> new JobStatsPoller(server::baseUrl, 0, 1000));
    assertThrows(IllegalArgumentException.class,
        () -> new JobStatsPoller(server::baseUrl, 1000, 0));
  }

  @Test
  void negativeFiguresAreRefused() {
    assertThrows(IllegalArgumentException.class,
        () -> new JobStats("a", 1, -1, 0, 0, 0));
    assertThrows(IllegalArgumentException.class,
        () -> new JobStats("a", 1, 0, 0, 0, -5));
  }

  // ----------------------------------------------------------------- helpers

  private static boolean pollerThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(JobStatsPoller.THREAD_NAME) && t.isAlive());
  }

  private static void assertNoPollerThread() {
    assertFalse(pollerThreadAlive(), "a poller thread outlived its test");
  }

}
