package io.rackwise.yarn.stats;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.config.ShimSettings;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.authentication.client.AuthenticationException;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the progress and byte counters of running MapReduce jobs from their
 * ApplicationMasters, on a thread of its own, and hands the readings to the scheduler
 * without ever taking a scheduler lock.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>The scheduler thread calls {@link #track}, {@link #untrack} and {@link #drain}. Each
 *       is a few concurrent-map operations: no I/O, no waiting, no scheduler lock needed or
 *       taken. The heartbeat path never waits for an AM.</li>
 *   <li>One daemon thread ({@value #THREAD_NAME}) polls every tracked app in turn, then
 *       sleeps the poll interval (a fixed delay, so a slow cycle never piles up cycles).
 *       Readings go into a map holding the latest unread reading per app; the next node offer
 *       drains it. Keeping only the latest bounds the hand-over at one reading per tracked
 *       app however long the scheduler goes without an offer, and the core only ever needs
 *       the newest figures anyway.</li>
 * </ul>
 *
 * <h2>What is read</h2>
 * Through the ResourceManager's web proxy, {@code <base>/proxy/<appId>/ws/v1/mapreduce/}:
 * {@code jobs/<jobId>} for {@code mapsTotal}, {@code mapsCompleted}, {@code reducesTotal};
 * {@code jobs/<jobId>/tasks?type=m} for which maps have SUCCEEDED; and, once for each such
 * map, {@code jobs/<jobId>/tasks/<taskId>/counters} for its
 * {@code FileInputFormatCounter.BYTES_READ} and {@code TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES}.
 * The byte figures handed over are the sums over the succeeded maps only. The job's own
 * counters would be simpler to read but include the running maps, which have read input but
 * materialise their output only when they finish; during the map phase that makes a
 * shuffle-heavy job look shuffle-light, just when its reduces are placed.
 *
 * <p>A succeeded task's counters no longer change, so each is fetched once and kept in the
 * app's {@link Tracked}. A map the AM takes back from SUCCEEDED (its node was lost with its
 * output, so it runs again) is dropped from the sums and read again once it succeeds again.
 * The job id carries the application id's numbers ({@code application_<ts>_<n>} →
 * {@code job_<ts>_<n>}), which is how the MR client names the job of an MR app.
 *
 * <h2>Failures</h2>
 * Before its AM has registered, and after it has finished, the proxy answers with a redirect
 * to an HTML page; a slow or dead AM times out; with ACLs or authentication it may answer
 * 401/403. All of these mean "unknown now": nothing is emitted for that app in that cycle (the
 * core keeps what it knew), the failure is counted ({@link #pollFailures()}), the app's first
 * failure is logged at INFO and later ones at DEBUG, and polling goes on. Redirects are
 * deliberately not followed: the only places they lead are HTML pages. When one map's
 * counters cannot be read, nothing is emitted either: the sums would lack a succeeded map
 * and so be a partial reading. The counters already read are kept, and the failed ones are
 * asked for again in the next cycle.
 *
 * <h2>Secure clusters</h2>
 * With {@code yarn.http.policy=HTTPS_ONLY} the proxy is polled over HTTPS, and with Kerberos
 * the poller authenticates with SPNEGO as the RM's login user ({@link AmConnections}). A failed
 * authentication is a failure like the others: logged once per app with its reason, retried
 * only at the next cycle.
 *
 * <h2>Not supported yet</h2>
 * A tasks document takes about 250 bytes per map, so a job of more than about 30,000 maps
 * exceeds {@link #MAX_BODY_BYTES} and is never read (counted and logged as a failure).
 */
public final class JobStatsPoller implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(JobStatsPoller.class);

  /** The application type MR clients submit with ({@code MRJobConfig.MR_APPLICATION_TYPE}). */
  public static final String MAPREDUCE_APPLICATION_TYPE = "MAPREDUCE";
  public static final String THREAD_NAME = "rackwise-job-stats-poller";

  /**
   * Upper bound of one answer. A counters document is a few KB even with many user
   * counters, a tasks document about 250 bytes per map; the cap protects the RM's heap from
   * something that is not an AM.
   */
  static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();

  private enum Lifecycle { NEW, RUNNING, STOPPED }

  /** Per tracked app. The mutable fields are touched by the polling thread only. */
  private static final class Tracked {
    final ApplicationId appId;
    final String appIdString;
    final String jobId;
    final String jobPath;
    /** Map-side bytes of each map counted so far, by task id; all of them SUCCEEDED. */
    final Map<String, AmRestParser.MapBytes> succeededMaps = new HashMap<>();
    JobStats lastEmitted;
    boolean failureLogged;

    Tracked(ApplicationId appId) {
      this.appId = appId;
      this.appIdString = appId.toString();
      this.jobId = jobIdOf(appId);
      this.jobPath = "/proxy/" + appIdString + "/ws/v1/mapreduce/jobs/" + jobId;
    }
  }

  private final Supplier<String> proxyBaseUrl;
  private final long pollIntervalMs;
  private final int timeoutMs;
  /** How requests reach the proxy (TLS, SPNEGO); used by the polling thread only. */
  private final AmConnections connections;

  private final ConcurrentHashMap<ApplicationId, Tracked> tracked = new ConcurrentHashMap<>();
  /** Latest reading per app that the scheduler has not drained yet. */
  private final ConcurrentHashMap<ApplicationId, JobStats> pending = new ConcurrentHashMap<>();

  private final AtomicLong pollFailures = new AtomicLong();
  private final AtomicLong pollCycles = new AtomicLong();
  private final AtomicLong emitted = new AtomicLong();

  /** Serialises cycles, so a test calling {@link #pollOnce()} never races the thread. */
  private final ReentrantLock pollLock = new ReentrantLock();
  private final Object lifecycleLock = new Object();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private Lifecycle lifecycle = Lifecycle.NEW;
  private Thread thread;
  /** The request in flight, so that stop() can cut a hung read short. */
  private volatile HttpURLConnection inFlight;
  private volatile boolean noBaseUrlLogged;

  /**
   * @param proxyBaseUrl   {@code http://host:port} of the web proxy (the RM web app when no
   *                       separate proxy runs), asked once per cycle because the RM learns
   *                       its actual web port only after its web app has started. A null
   *                       answer skips the cycle.
   * @param pollIntervalMs delay between cycles, > 0
   * @param timeoutMs      connect and read timeout of each request, > 0
   */
  public JobStatsPoller(Supplier<String> proxyBaseUrl, long pollIntervalMs, int timeoutMs) {
    this(proxyBaseUrl, pollIntervalMs, timeoutMs, AmConnections.plain(timeoutMs));
  }

  private JobStatsPoller(Supplier<String> proxyBaseUrl, long pollIntervalMs, int timeoutMs,
      AmConnections connections) {
    this.proxyBaseUrl = Objects.requireNonNull(proxyBaseUrl, "proxyBaseUrl");
    if (pollIntervalMs <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATS_POLL_INTERVAL_MS + " must be > 0, got "
          + pollIntervalMs);
    }
    if (timeoutMs <= 0) {
      throw new IllegalArgumentException(ShimSettings.STATS_TIMEOUT_MS + " must be > 0, got "
          + timeoutMs);
    }
    this.pollIntervalMs = pollIntervalMs;
    this.timeoutMs = timeoutMs;
    this.connections = connections;
  }

  /**
   * A poller as the {@code stats.*} settings configure it, polling the proxy address
   * {@link #proxyBaseUrl(Configuration)} derives from {@code conf}, over HTTPS and with SPNEGO
   * when the cluster is so secured.
   *
   * @throws IOException when the cluster serves HTTPS and the TLS client cannot be set up
   */
  public static JobStatsPoller fromSettings(ShimSettings settings, Configuration conf)
      throws IOException {
    return new JobStatsPoller(() -> proxyBaseUrl(conf), settings.statsPollIntervalMs(),
        settings.statsTimeoutMs(), AmConnections.forCluster(conf, settings.statsTimeoutMs()));
  }

  /**
   * {@code http(s)://<yarn.web-proxy.address>}, or the RM's own web address when no separate
   * proxy is configured (the RM then mounts the proxy servlet in its web app); {@code https}
   * when the cluster's web endpoints serve HTTPS only.
   */
  public static String proxyBaseUrl(Configuration conf) {
    return (YarnConfiguration.useHttps(conf) ? "https://" : "http://")
        + WebAppUtils.getProxyHostAndPort(conf);
  }

  /** {@code job_<clusterTimestamp>_<seq>}, padded the way {@code JobID} prints it. */
  static String jobIdOf(ApplicationId appId) {
    return String.format(Locale.ROOT, "job_%d_%04d", appId.getClusterTimestamp(), appId.getId());
  }

  // ---------------------------------------------------------------- scheduler-thread API

  /**
   * Starts polling {@code appId} if it is a MapReduce app. Cheap and thread-safe; tracking
   * an app twice is harmless.
   *
   * @return whether the app is now tracked
   */
  public boolean track(ApplicationId appId, String applicationType) {
    if (!MAPREDUCE_APPLICATION_TYPE.equalsIgnoreCase(applicationType)) {
      return false;
    }
    track(appId);
    return true;
  }

  /**
   * Starts polling {@code appId}, which the caller knows to be a MapReduce app (anything
   * else has no MR REST API and would only add failures). Cheap and thread-safe.
   */
  public void track(ApplicationId appId) {
    tracked.computeIfAbsent(Objects.requireNonNull(appId, "appId"), Tracked::new);
  }

  /**
   * Stops polling {@code appId} and drops its unread reading. Once this returns,
   * {@link #drain()} on the same thread never returns a reading of this app, even if a poll
   * of it was in flight.
   */
  public void untrack(ApplicationId appId) {
    tracked.remove(appId);
    pending.remove(appId);
  }

  /**
   * Takes the unread readings, at most one per app (the newest), ordered by application id
   * so that a replayed event log is deterministic. Never blocks; returns an empty list when
   * there is nothing new.
   */
  public List<JobStats> drain() {
    if (pending.isEmpty()) {
      return List.of();
    }
    List<JobStats> out = new ArrayList<>(pending.size());
    for (ApplicationId appId : pending.keySet()) {
      JobStats stats = pending.remove(appId);
      // The poller may have put a reading after untrack() removed the app (it checks and
      // removes again, but not atomically with the put); such a reading is not delivered.
      if (stats != null && tracked.containsKey(appId)) {
        out.add(stats);
      }
    }
    out.sort(Comparator.comparing(JobStats::appId));
    return out;
  }

  // ---------------------------------------------------------------------- lifecycle

  /** Starts the polling thread. Calling it again while running does nothing. */
  public void start() {
    synchronized (lifecycleLock) {
      if (lifecycle == Lifecycle.RUNNING) {
        return;
      }
      if (lifecycle == Lifecycle.STOPPED) {
        throw new IllegalStateException("job stats poller was stopped; create a new one");
      }
      thread = new Thread(this::runLoop, THREAD_NAME);
      // Daemon: a poller must never be what keeps an RM (or a test JVM) from exiting.
      thread.setDaemon(true);
      thread.start();
      lifecycle = Lifecycle.RUNNING;
    }
  }

  /**
   * Stops the polling thread and waits for it (bounded by one request's timeouts plus a
   * second). Idempotent. A request in flight is cut off by closing its connection, because a
   * blocking socket read does not notice an interrupt.
   */
  public void stop() {
    Thread toJoin;
    synchronized (lifecycleLock) {
      if (lifecycle == Lifecycle.STOPPED) {
        return;
      }
      lifecycle = Lifecycle.STOPPED;
      toJoin = thread;
    }
    stopped.countDown();
    HttpURLConnection conn = inFlight;
    if (conn != null) {
      conn.disconnect();
    }
    if (toJoin == null) {
      connections.close();
      return;
    }
    try {
      toJoin.join(2L * timeoutMs + 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (toJoin.isAlive()) {
      LOG.warn("{} did not stop within {} ms; it is a daemon and exits after its current "
          + "request", THREAD_NAME, 2L * timeoutMs + 1000);
      return;
    }
    connections.close();
  }

  /** Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  // ---------------------------------------------------------------------- metrics

  /** Polls of one app that produced nothing: unreachable, error status, not JSON, malformed. */
  public long pollFailures() {
    return pollFailures.get();
  }

  /** Completed poll cycles (each visits every tracked app once). */
  public long pollCycles() {
    return pollCycles.get();
  }

  /** Readings handed over, i.e. readings that differed from the app's previous one. */
  public long emittedCount() {
    return emitted.get();
  }

  public int trackedCount() {
    return tracked.size();
  }

  // ---------------------------------------------------------------------- polling

  private void runLoop() {
    try {
      // Wait first: an app is tracked when it is submitted, long before its AM can answer.
      while (!stopped.await(pollIntervalMs, TimeUnit.MILLISECONDS)) {
        try {
          pollOnce();
        } catch (RuntimeException e) {
          // Should not happen (pollApp catches per app); if it does, the thread must live on,
          // or the scheduler silently stops getting figures.
          LOG.warn("job stats poll cycle failed", e);
        }
      }
    } catch (InterruptedException e) {
      // Only stop() ends this thread on purpose; an interrupt from elsewhere (JVM shutdown)
      // ends it too, quietly.
    }
  }

  /** One cycle over every tracked app. Package-private so tests can step it. */
  void pollOnce() {
    pollLock.lock();
    try {
      String base = proxyBaseUrl.get();
      if (base == null || base.isBlank()) {
        if (!noBaseUrlLogged) {
          noBaseUrlLogged = true;
          LOG.warn("No web proxy address to poll MapReduce AMs through yet; job stats are "
              + "not collected until there is one");
        }
        return;
      }
      if (base.endsWith("/")) {
        base = base.substring(0, base.length() - 1);
      }
      for (Tracked app : tracked.values()) {
        if (stopped.getCount() == 0) {
          return;
        }
        pollApp(base, app);
      }
      pollCycles.incrementAndGet();
    } finally {
      pollLock.unlock();
    }
  }

  private void pollApp(String base, Tracked app) {
    JobStats stats;
    try {
      AmRestParser.JobCounts counts =
          AmRestParser.parseJob(getJson(base + app.jobPath));
      if (counts == null) {
        LOG.debug("{}: job not initialised yet, no figures", app.appIdString);
        return;
      }
      AmRestParser.MapBytes bytes = succeededMapBytes(base, app);
      stats = new JobStats(app.appIdString, counts.mapsTotal(), counts.mapsCompleted(),
          counts.reducesTotal(), bytes.input(), bytes.output());
    } catch (PollException | RuntimeException e) {
      if (stopped.getCount() == 0) {
        // stop() closed the connection under us; that says nothing about the AM.
        return;
      }
      pollFailures.incrementAndGet();
      if (!app.failureLogged) {
        app.failureLogged = true;
        LOG.info("Cannot read job stats of {} from its AM (normal while the AM starts or "
            + "after it finishes; further failures of this app are logged at DEBUG): {}",
            app.appIdString, e.getMessage());
      } else {
        LOG.debug("Cannot read job stats of {}: {}", app.appIdString, e.getMessage());
      }
      return;
    }
    if (stats.equals(app.lastEmitted)) {
      return;
    }
    app.lastEmitted = stats;
    pending.put(app.appId, stats);
    // untrack() may have run since this poll began; it removes the app, then its pending
    // reading. If that removal came before our put, undo the put here.
    if (tracked.get(app.appId) != app) {
      pending.remove(app.appId, stats);
      return;
    }
    emitted.incrementAndGet();
  }

  /**
   * Brings the app's succeeded maps up to date with the AM's task list and sums their bytes.
   * Throws if any succeeded map's counters cannot be read, so that no sum missing a succeeded
   * map is ever emitted; the maps read before the failure stay counted.
   */
  private AmRestParser.MapBytes succeededMapBytes(String base, Tracked app)
      throws PollException {
    Set<String> succeeded = AmRestParser.parseSucceededMaps(
        getJson(base + app.jobPath + "/tasks?type=m"), app.jobId);
    // A map taken back from SUCCEEDED no longer has its output; it is read again once it
    // succeeds again (its new attempt's counters).
    app.succeededMaps.keySet().retainAll(succeeded);
    for (String taskId : succeeded) {
      if (app.succeededMaps.containsKey(taskId)) {
        continue;
      }
      if (stopped.getCount() == 0) {
        // A job may have thousands of maps to read; stop() must not wait for them all.
        throw new PollException("poller stopped");
      }
      app.succeededMaps.put(taskId, AmRestParser.parseTaskCounters(
          getJson(base + app.jobPath + "/tasks/" + taskId + "/counters"), taskId));
    }
    // Summed anew each cycle rather than kept as running totals, so that a map dropped above
    // needs no subtraction; a loop over the maps costs less than the tasks document already
    // parsed.
    long input = 0;
    long output = 0;
    for (AmRestParser.MapBytes bytes : app.succeededMaps.values()) {
      input = Math.addExact(input, bytes.input());
      output = Math.addExact(output, bytes.output());
    }
    return new AmRestParser.MapBytes(input, output);
  }

  /** GET one JSON document, or explain why there is none. */
  private JsonNode getJson(String url) throws PollException {
    HttpURLConnection conn;
    try {
      conn = connections.open(url);
    } catch (AuthenticationException e) {
      throw new PollException("GET " + url + ": Kerberos (SPNEGO) authentication as the RM's "
          + "login user failed: " + e.getMessage(), e);
    } catch (SocketTimeoutException e) {
      throw new PollException("GET " + url + " timed out after " + timeoutMs + " ms", e);
    } catch (IOException | IllegalArgumentException e) {
      throw new PollException("GET " + url + " failed: " + e, e);
    }
    boolean ok = false;
    inFlight = conn;
    try {
      int status = conn.getResponseCode();
      if (status == HttpURLConnection.HTTP_UNAUTHORIZED) {
        connections.unauthorized();
      }
      if (status != HttpURLConnection.HTTP_OK) {
        String where = conn.getHeaderField("Location");
        throw new PollException("GET " + url + " answered HTTP " + status
            + (where != null ? " (redirect to " + where + ")" : ""));
      }
      String type = conn.getContentType();
      if (type == null || !type.toLowerCase(Locale.ROOT).contains("json")) {
        throw new PollException("GET " + url + " answered " + type + ", not JSON");
      }
      byte[] body;
      try (InputStream in = conn.getInputStream()) {
        body = in.readNBytes(MAX_BODY_BYTES + 1);
      }
      if (body.length > MAX_BODY_BYTES) {
        throw new PollException("GET " + url + " answered more than " + MAX_BODY_BYTES
            + " bytes");
      }
      JsonNode root;
      try {
        root = JSON.readTree(body);
      } catch (JsonProcessingException e) {
        throw new PollException("GET " + url + " answered malformed JSON: "
            + e.getOriginalMessage(), e);
      }
      if (root == null || !root.isObject()) {
        throw new PollException("GET " + url + " answered JSON that is not an object");
      }
      ok = true;
      return root;
    } catch (SocketTimeoutException e) {
      throw new PollException("GET " + url + " timed out after " + timeoutMs + " ms", e);
    } catch (IOException e) {
      throw new PollException("GET " + url + " failed: " + e, e);
    } finally {
      inFlight = null;
      // After a complete, successful read the connection goes back to the keep-alive pool
      // (the next request goes to the same proxy); after anything else it is closed.
      if (!ok) {
        conn.disconnect();
      }
    }
  }
}
