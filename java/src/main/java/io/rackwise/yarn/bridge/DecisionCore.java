package io.rackwise.yarn.bridge;

import io.rackwise.wire.v1.EngineConfig;
import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.config.RackwiseConfigException;
import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeConfigException;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeCoreException;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.nativecore.NativeLibraryLoader;
import io.rackwise.yarn.netsat.HostFigure;
import io.rackwise.yarn.netsat.NetworkLoadFeed;
import io.rackwise.yarn.state.LearnedRatio;
import io.rackwise.yarn.stats.JobStats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ResourceManager's side of the native decision core: one engine handle, the events
 * collected since the last offer, and the failure policy.
 *
 * <p>Events may be reported from any thread (the scheduler dispatcher, AM RPC threads, the job
 * statistics poller) into a lock-free queue; {@link #offer} runs on the dispatcher thread, drains
 * the queue into one request and makes the one native call of the offer. The engine itself is
 * single-threaded behind the library's per-engine lock.
 *
 * <p>The fallback net: any failure on the native path, at any stage (loading the library,
 * building the engine, encoding an event or the offer, the native call, decoding the response,
 * writing the native log records, handing learned ratios over, applying the policies' queue
 * weights, recording closed market intervals, and, reported by the scheduler
 * through {@link #failed}, checking and applying the plan) is logged once at ERROR naming the
 * stage, counted in {@code NativeFailures}, and turns the core off: every later offer is
 * scheduled by stock FairScheduler until the ResourceManager restarts, and nothing is built for
 * the core any more (the event methods return before building anything). No exception of ours
 * reaches the caller, which is the scheduler's event dispatcher: Hadoop 3.4's exits the
 * ResourceManager on one. With {@code native.required} each failure is counted and thrown
 * instead, saying that this setting made it fatal.
 *
 * <p>A native call cannot be interrupted, so a slow one is let finish: its time goes into
 * {@code OfferCall}, and one above {@link #SLOW_OFFER_MS} is logged at WARN and counted in
 * {@code SlowOffers} (a slow call is not a failure: the plan it returns is still good).
 */
public final class DecisionCore implements AutoCloseable, NetworkLoadFeed.Sink {
  private static final Logger LOG = LoggerFactory.getLogger(DecisionCore.class);
  /** Records the native library logged, written to the ResourceManager's own log. */
  private static final Logger NATIVE_LOG = LoggerFactory.getLogger("io.rackwise.yarn.native");
  /** A native offer taking longer than this is logged at WARN; see the class comment. */
  public static final long SLOW_OFFER_MS = 1000;
  /** How often the level of {@link #NATIVE_LOG} is read and handed to the library. */
  private static final long LOG_LEVEL_REFRESH_NANOS = 1_000_000_000L;

  private final boolean required;
  private final RackwiseMetrics metrics;
  private final Consumer<List<LearnedRatio>> learnedSink;
  /** Applies the FairScheduler queue weights the policies set (market policies' output). */
  private final Consumer<List<WireResponse.QueueWeight>> weightSink;
  /** Takes the market intervals that closed (Dynamic Priority's ledger). */
  private final Consumer<List<WireResponse.MarketInterval>> intervalSink;
  private final ConcurrentLinkedQueue<Event> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean failed = new AtomicBoolean();
  private volatile NativeEngine engine;
  /** The level last handed to the library, and when the logger was last read (dispatcher). */
  private int nativeLogLevel = -1;
  private long logLevelReadNanos;

  private DecisionCore(boolean required, RackwiseMetrics metrics,
      Consumer<List<LearnedRatio>> learnedSink,
      Consumer<List<WireResponse.QueueWeight>> weightSink,
      Consumer<List<WireResponse.MarketInterval>> intervalSink) {
    this.required = required;
    this.metrics = metrics;
    this.learnedSink = learnedSink;
    this.weightSink = weightSink;
    this.intervalSink = intervalSink;
  }

  /**
   * Loads the library and creates the engine.
   *
   * @throws RackwiseConfigException the core refused the configuration (always fatal: an
   *     invalid configuration must not start, whether or not native is required)
   * @throws NativeCoreException the library is unusable and native is required
   */
  public static DecisionCore start(boolean required, EngineConfig config, RackwiseMetrics metrics,
      Consumer<List<LearnedRatio>> learnedSink,
      Consumer<List<WireResponse.QueueWeight>> weightSink,
      Consumer<List<WireResponse.MarketInterval>> intervalSink, NativeEngine.Factory factory)
      throws RackwiseConfigException {
    DecisionCore core =
        new DecisionCore(required, metrics, learnedSink, weightSink, intervalSink);
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    if (!load.loaded()) {
      core.failed("loading the native library",
          new NativeCoreException(load.message(), load.cause()));
      return core;
    }
    try {
      MapReducePriority.load();
      core.engine = factory.open(config.toByteArray());
      core.followNativeLogLevel(System.nanoTime());
      core.writeConfigurationLogs();
      metrics.setNativeActive(true);
      LOG.info("Rackwise native core {} active ({})", NativeCore.version(), load.message());
    } catch (NativeConfigException e) {
      throw new RackwiseConfigException(e.getMessage(), e);
    } catch (RuntimeException | LinkageError e) {
      core.failed("creating the engine", e);
    }
    return core;
  }

  public boolean isActive() {
    return engine != null;
  }

  /**
   * Replaces the engine's settings. A refused configuration leaves the previous one in force.
   *
   * @throws RackwiseConfigException the core refused the configuration
   */
  public void reconfigure(EngineConfig config) throws RackwiseConfigException {
    NativeEngine current = engine;
    if (current == null) {
      return;
    }
    try {
      current.reconfigure(config.toByteArray());
      writeConfigurationLogs();
    } catch (NativeConfigException e) {
      throw new RackwiseConfigException(e.getMessage(), e);
    } catch (RuntimeException | LinkageError e) {
      failed("reconfiguring", e);
    }
  }

  // ---- events: what changed since the previous offer --------------------------------------

  public void nodeAdded(String node, String host, String rack, Resource capacity) {
    emit("node_added", () -> WireCodec.nodeAdded(node, host, rack, capacity));
  }

  public void nodeRemoved(String node) {
    emit("node_removed", () -> WireCodec.nodeRemoved(node));
  }

  /**
   * An app the scheduler added. The RM accepts apps without a name or tags: a null name is sent
   * as "" and null tags as none, so such an app never breaks the native path.
   */
  public void appAdded(String app, String name, String user, String queue, String appType,
      Collection<String> tags, long submitMs) {
    emit("app_added",
        () -> WireCodec.appAdded(app, name, user, queue, appType, tags, submitMs));
  }

  public void appRemoved(String app) {
    emit("app_removed", () -> WireCodec.appRemoved(app));
  }

  /**
   * Rows of an app's asks that changed, built by {@code change} (see {@link
   * WireCodec#asksChanged}) only while the core is active.
   */
  public void asksChanged(Supplier<Event> change) {
    emit("asks_changed", change);
  }

  public void containerAllocated(String app, String container, String node, int priority,
      NodeType locality, Resource resources, long timeMs) {
    emit("container_allocated", () -> WireCodec.containerAllocated(app, container, node,
        priority, locality, resources, timeMs));
  }

  public void containerFinished(String app, String container, int exitStatus, long timeMs) {
    emit("container_finished",
        () -> WireCodec.containerFinished(app, container, exitStatus, timeMs));
  }

  public void jobStats(JobStats stats) {
    emit("job_stats", () -> WireCodec.jobStats(stats));
  }

  @Override
  public void rackLoad(String rack, double utilization, long timeMs) {
    emit("rack_load", () -> WireCodec.rackLoad(rack, utilization, timeMs));
  }

  /** One host's figures from the operator's feed: only the figures the feed gave. */
  @Override
  public void hostFigures(String host, Map<HostFigure, Double> figures, long timeMs) {
    emit("host_figures", () -> WireCodec.hostFigures(host, timeMs,
        figures.get(HostFigure.CROSS_RACK_MBPS), figures.get(HostFigure.DISK_UTILIZATION),
        figures.get(HostFigure.NETWORK_UTILIZATION), figures.get(HostFigure.CPU_SPEED)));
  }

  /** Sets a Dynamic Priority budget queue's balance and spending rate. */
  public void account(String queue, double budget, double spending) {
    emit("account", () -> WireCodec.account(queue, budget, spending));
  }

  // ---- the offer ---------------------------------------------------------------------------

  /**
   * Sends the pending events and the offered node to the core and returns its plan; null when
   * the core is off or failed during this offer, so the caller schedules as stock FairScheduler.
   */
  public OfferPlan offer(long nowMs, String node, Resource unallocated,
      ResourceUtilization utilization) {
    NativeEngine current = engine;
    if (current == null) {
      metrics.fellBack();
      return null;
    }
    String stage = "encoding the offer of node " + node;
    try {
      List<Event> events = new ArrayList<>();
      for (Event event = pending.poll(); event != null; event = pending.poll()) {
        events.add(event);
      }
      byte[] request =
          WireCodec.offerRequest(nowMs, events, node, unallocated, utilization).toByteArray();
      stage = "setting the native log level";
      long start = System.nanoTime();
      followNativeLogLevel(start);
      stage = "the native offer call for node " + node;
      byte[] responseBytes = current.offer(request);
      long callNanos = System.nanoTime() - start;
      stage = "decoding the response to the offer of node " + node;
      WireResponse response = WireCodec.decodeResponse(responseBytes);
      OfferPlan plan = response.plan();
      stage = "writing the native log records";
      writeNativeLogs(response.logs());
      stage = "handing learned ratios to the learned-history store";
      if (!response.learned().isEmpty()) {
        learnedSink.accept(response.learned());
      }
      stage = "applying the policies' queue weights";
      if (!response.queueWeights().isEmpty()) {
        weightSink.accept(response.queueWeights());
      }
      stage = "recording the closed market intervals";
      if (!response.intervals().isEmpty()) {
        intervalSink.accept(response.intervals());
      }
      if (!response.nodeScores().isEmpty()) {
        metrics.drmjsNodeScores().update(response.nodeScores());
      }
      metrics.offerDecided(callNanos, !plan.isEmpty(), response.diagnostics().starved().size());
      if (callNanos > SLOW_OFFER_MS * 1_000_000L) {
        metrics.slowOffer();
        LOG.warn("the native offer of node {} took {} ms (over {} ms); the scheduler thread "
            + "waited that long for this heartbeat", node, callNanos / 1_000_000, SLOW_OFFER_MS);
      }
      if (LOG.isDebugEnabled() && !plan.isEmpty()) {
        LOG.debug("offer {}: {}", node, response.diagnostics());
      }
      return plan;
    } catch (RuntimeException | LinkageError e) {
      failed(stage, e);
      return null;
    }
  }

  /**
   * Hands the level of the {@code io.rackwise.yarn.native} logger to the library, so that
   * {@code yarn daemonlog -setlevel} governs what native code logs. Read at most once a second
   * and passed on only when it changed: the library filters records before formatting them, so
   * a level left at debug natively would cost on every offer.
   */
  private void followNativeLogLevel(long nowNanos) {
    if (nativeLogLevel >= 0 && nowNanos - logLevelReadNanos < LOG_LEVEL_REFRESH_NANOS) {
      return;
    }
    logLevelReadNanos = nowNanos;
    int level = NATIVE_LOG.isTraceEnabled() ? 5 : NATIVE_LOG.isDebugEnabled() ? 4
        : NATIVE_LOG.isInfoEnabled() ? 3 : NATIVE_LOG.isWarnEnabled() ? 2
        : NATIVE_LOG.isErrorEnabled() ? 1 : 0;
    if (level != nativeLogLevel) {
      NativeCore.setMaxLogLevel(level);
      nativeLogLevel = level;
    }
  }

  /** Events queued for the next offer; always 0 once the core is off. */
  public int queuedEvents() {
    return pending.size();
  }

  @Override
  public synchronized void close() {
    NativeEngine current = engine;
    engine = null;
    pending.clear();
    metrics.setNativeActive(false);
    if (current != null) {
      current.close();
    }
  }

  /**
   * Queues an event built by {@code build}, which runs only while the core is active; a
   * failure to build one is a native-path failure like any other.
   */
  private void emit(String type, Supplier<Event> build) {
    if (engine == null) {
      return;
    }
    try {
      pending.add(build.get());
    } catch (RuntimeException e) {
      failed("encoding a " + type + " event", e);
    }
  }

  /**
   * A failure on the native path during {@code stage}: fall back to stock FairScheduler for good
   * (logged once, counted once), or, with {@code native.required}, count it and throw.
   *
   * @throws NativeCoreException native is required
   */
  public void failed(String stage, Throwable e) {
    if (required) {
      metrics.nativeFailed();
      throw new NativeCoreException("Rackwise native core failed while " + stage + ": " + e
          + "; this is fatal because " + ShimSettings.NATIVE_REQUIRED + "=true (false would fall "
          + "back to stock FairScheduler)", e);
    }
    // Several threads report events; only the first failure is logged and counted.
    if (!failed.compareAndSet(false, true)) {
      return;
    }
    metrics.nativeFailed();
    LOG.error("Rackwise native core failed while {}: scheduling falls back to stock "
        + "FairScheduler until the ResourceManager restarts (set {}=true to make this fatal)",
        stage, ShimSettings.NATIVE_REQUIRED, e);
    close();
  }

  /**
   * Writes what the library logged while building a configuration (an unknown key, say) now, at
   * start or reload, rather than with the next offer's response.
   */
  private void writeConfigurationLogs() {
    writeNativeLogs(WireCodec.decodeLogs(NativeCore.drainLogs()));
  }

  private void writeNativeLogs(List<WireResponse.LogLine> logs) {
    for (WireResponse.LogLine line : logs) {
      String text = line.target() + ": " + line.message();
      switch (line.level()) {
        case ERROR:
          NATIVE_LOG.error(text);
          break;
        case WARN:
          NATIVE_LOG.warn(text);
          break;
        case INFO:
          NATIVE_LOG.info(text);
          break;
        case DEBUG:
          NATIVE_LOG.debug(text);
          break;
        default:
          NATIVE_LOG.trace(text);
      }
    }
  }
}
