package io.rackwise.yarn.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.yarn.config.AllocationFileExtensions.QueueExtension;
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
import java.io.IOException;
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
 * writing the native log records, handing learned ratios over, and, reported by the scheduler
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
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  /** A native offer taking longer than this is logged at WARN; see the class comment. */
  public static final long SLOW_OFFER_MS = 1000;
  /** How often the level of {@link #NATIVE_LOG} is read and handed to the library. */
  private static final long LOG_LEVEL_REFRESH_NANOS = 1_000_000_000L;

  private final ObjectMapper mapper = new ObjectMapper();
  private final boolean required;
  private final RackwiseMetrics metrics;
  private final Consumer<List<LearnedRatio>> learnedSink;
  private final ConcurrentLinkedQueue<ObjectNode> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean failed = new AtomicBoolean();
  private volatile NativeEngine engine;
  /** The level last handed to the library, and when the logger was last read (dispatcher). */
  private int nativeLogLevel = -1;
  private long logLevelReadNanos;

  private DecisionCore(boolean required, RackwiseMetrics metrics,
      Consumer<List<LearnedRatio>> learnedSink) {
    this.required = required;
    this.metrics = metrics;
    this.learnedSink = learnedSink;
  }

  /**
   * Loads the library and creates the engine.
   *
   * @throws RackwiseConfigException the core refused the configuration (always fatal: an
   *     invalid configuration must not start, whether or not native is required)
   * @throws NativeCoreException the library is unusable and native is required
   */
  public static DecisionCore start(boolean required, ObjectNode config, RackwiseMetrics metrics,
      Consumer<List<LearnedRatio>> learnedSink, NativeEngine.Factory factory)
      throws RackwiseConfigException {
    DecisionCore core = new DecisionCore(required, metrics, learnedSink);
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    if (!load.loaded()) {
      core.failed("loading the native library",
          new NativeCoreException(load.message(), load.cause()));
      return core;
    }
    try {
      core.engine = factory.open(core.bytes(config));
      core.followNativeLogLevel(System.nanoTime());
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

  /** Builds the engine configuration document (protocol {@code EngineConfig}). */
  public static ObjectNode configDocument(Map<String, String> coreSettings,
      List<QueueExtension> queues, List<LearnedRatio> learned, String source) {
    ObjectNode config = JSON.objectNode();
    ObjectNode settings = config.putObject("settings");
    coreSettings.forEach(settings::put);
    ArrayNode queueArray = config.putArray("queues");
    for (QueueExtension queue : queues) {
      ObjectNode node = queueArray.addObject().put("queue", queue.queue());
      if (queue.rackwise() != null) {
        ObjectNode rackwise = node.putObject("rackwise");
        queue.rackwise().forEach(rackwise::put);
      }
    }
    ArrayNode learnedArray = config.putArray("learned");
    for (LearnedRatio ratio : learned) {
      learnedArray.addObject().put("job_name", ratio.jobName()).put("ratio", ratio.ratio())
          .put("runs", ratio.runs());
    }
    config.put("source", source);
    return config;
  }

  /**
   * Replaces the engine's settings. A refused configuration leaves the previous one in force.
   *
   * @throws RackwiseConfigException the core refused the configuration
   */
  public void reconfigure(ObjectNode config) throws RackwiseConfigException {
    NativeEngine current = engine;
    if (current == null) {
      return;
    }
    try {
      current.reconfigure(bytes(config));
    } catch (NativeConfigException e) {
      throw new RackwiseConfigException(e.getMessage(), e);
    } catch (RuntimeException | LinkageError e) {
      failed("reconfiguring", e);
    }
  }

  // ---- events: what changed since the previous offer --------------------------------------

  public void nodeAdded(String node, String host, String rack, Resource capacity) {
    emit("node_added", () -> {
      ObjectNode event = event("node_added").put("node", node).put("host", host)
          .put("rack", rack);
      resources(event.putObject("capacity"), capacity);
      return event;
    });
  }

  public void nodeRemoved(String node) {
    emit("node_removed", () -> event("node_removed").put("node", node));
  }

  /**
   * An app the scheduler added. The RM accepts apps without a name or tags: a null name is sent
   * as "" and null tags as none, so such an app never breaks the native path.
   */
  public void appAdded(String app, String name, String user, String queue, String appType,
      Collection<String> tags, long submitMs) {
    emit("app_added", () -> {
      ObjectNode event = event("app_added").put("app", app).put("name", orEmpty(name))
          .put("user", orEmpty(user)).put("queue", queue).put("app_type", orEmpty(appType))
          .put("submit_ms", submitMs);
      ArrayNode tagArray = event.putArray("tags");
      if (tags != null) {
        tags.forEach(tagArray::add);
      }
      return event;
    });
  }

  public void appRemoved(String app) {
    emit("app_removed", () -> event("app_removed").put("app", app));
  }

  /** Starts an ask table for {@link #asks}; add one object per priority with {@link #ask}. */
  public ArrayNode newAskTable() {
    return JSON.arrayNode();
  }

  /** Adds one priority's outstanding asks to a table; returns the racks and hosts maps. */
  public void ask(ArrayNode table, int priority, int any, Resource perContainer,
      Map<String, Integer> racks, Map<String, Integer> hosts) {
    ObjectNode ask = table.addObject().put("priority", priority).put("any", any);
    resources(ask.putObject("resources"), perContainer);
    ObjectNode rackNode = ask.putObject("racks");
    racks.forEach(rackNode::put);
    ObjectNode hostNode = ask.putObject("hosts");
    hosts.forEach(hostNode::put);
  }

  /**
   * One app's ask table, built by {@code table} (with {@link #newAskTable} and {@link #ask})
   * only while the core is active.
   */
  public void asks(String app, Supplier<ArrayNode> table) {
    emit("asks", () -> {
      ObjectNode event = event("asks").put("app", app);
      event.set("asks", table.get());
      return event;
    });
  }

  public void containerAllocated(String app, String container, String node, int priority,
      NodeType locality, Resource resources, long timeMs) {
    emit("container_allocated", () -> {
      ObjectNode event = event("container_allocated").put("app", app)
          .put("container", container).put("node", node).put("priority", priority)
          .put("locality", wire(locality)).put("time_ms", timeMs);
      resources(event.putObject("resources"), resources);
      return event;
    });
  }

  public void containerFinished(String app, String container, long timeMs) {
    emit("container_finished", () -> event("container_finished").put("app", app)
        .put("container", container).put("time_ms", timeMs));
  }

  public void jobStats(JobStats stats) {
    emit(JobStats.EVENT_TYPE, () -> event(JobStats.EVENT_TYPE).put("app", stats.appId())
        .put("maps_total", stats.mapsTotal()).put("maps_completed", stats.mapsCompleted())
        .put("reduces_total", stats.reducesTotal())
        .put("map_input_bytes", stats.mapInputBytes())
        .put("map_output_bytes", stats.mapOutputBytes()));
  }

  @Override
  public void rackLoad(String rack, double utilization, long timeMs) {
    emit("rack_load", () -> event("rack_load").put("rack", rack)
        .put("utilization", utilization).put("time_ms", timeMs));
  }

  /**
   * One host's figures from the operator's feed, as
   * {@code {"type":"host_figures","host":…,"time_ms":…,<figure>:<value>…}}: only the figures the
   * feed gave, in {@link HostFigure}'s order.
   */
  @Override
  public void hostFigures(String host, Map<HostFigure, Double> figures, long timeMs) {
    emit("host_figures", () -> {
      ObjectNode event = event("host_figures").put("host", host).put("time_ms", timeMs);
      for (HostFigure figure : HostFigure.values()) {
        Double value = figures.get(figure);
        if (value != null) {
          event.put(figure.wireName(), value);
        }
      }
      return event;
    });
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
      byte[] request = bytes(offerRequest(nowMs, node, unallocated, utilization));
      stage = "setting the native log level";
      long start = System.nanoTime();
      followNativeLogLevel(start);
      stage = "the native offer call for node " + node;
      byte[] responseBytes = current.offer(request);
      long callNanos = System.nanoTime() - start;
      stage = "decoding the response to the offer of node " + node;
      JsonNode response = mapper.readTree(responseBytes);
      OfferPlan plan = OfferPlan.fromJson(response.path("plan"));
      List<LearnedRatio> learned = learnedRatios(response.path("learned"));
      stage = "writing the native log records";
      writeNativeLogs(response.path("logs"));
      stage = "handing learned ratios to the learned-history store";
      if (!learned.isEmpty()) {
        learnedSink.accept(learned);
      }
      metrics.offerDecided(callNanos, !plan.isEmpty(),
          response.path("diagnostics").path("starved").size());
      if (callNanos > SLOW_OFFER_MS * 1_000_000L) {
        metrics.slowOffer();
        LOG.warn("the native offer of node {} took {} ms (over {} ms); the scheduler thread "
            + "waited that long for this heartbeat", node, callNanos / 1_000_000, SLOW_OFFER_MS);
      }
      if (LOG.isDebugEnabled() && !plan.isEmpty()) {
        LOG.debug("offer {}: {}", node, response.path("diagnostics"));
      }
      return plan;
    } catch (IOException | RuntimeException | LinkageError e) {
      failed(stage, e);
      return null;
    }
  }

  private ObjectNode offerRequest(long nowMs, String node, Resource unallocated,
      ResourceUtilization utilization) {
    ObjectNode request = JSON.objectNode().put("now_ms", nowMs);
    ArrayNode events = request.putArray("events");
    for (ObjectNode event = pending.poll(); event != null; event = pending.poll()) {
      events.add(event);
    }
    ObjectNode offered = request.putObject("node").put("node", node);
    resources(offered.putObject("unallocated"), unallocated);
    if (utilization != null) {
      offered.putObject("utilization").put("pmem_mb", Math.max(0, utilization.getPhysicalMemory()))
          .put("cpu", Math.max(0f, utilization.getCPU()));
    }
    return request;
  }

  private static List<LearnedRatio> learnedRatios(JsonNode array) {
    List<LearnedRatio> learned = new ArrayList<>();
    for (JsonNode ratio : array) {
      learned.add(new LearnedRatio(ratio.path("job_name").asText(),
          ratio.path("ratio").asDouble(), ratio.path("runs").asInt()));
    }
    return learned;
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
  private void emit(String type, Supplier<ObjectNode> build) {
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

  private void writeNativeLogs(JsonNode logs) {
    for (JsonNode record : logs) {
      String text = record.path("target").asText() + ": " + record.path("message").asText();
      switch (record.path("level").asText()) {
        case "error":
          NATIVE_LOG.error(text);
          break;
        case "warn":
          NATIVE_LOG.warn(text);
          break;
        case "info":
          NATIVE_LOG.info(text);
          break;
        case "debug":
          NATIVE_LOG.debug(text);
          break;
        default:
          NATIVE_LOG.trace(text);
      }
    }
  }

  private byte[] bytes(JsonNode document) {
    try {
      return mapper.writeValueAsBytes(document);
    } catch (IOException e) {
      // A tree of strings and numbers always serializes; this would be a Jackson bug.
      throw new IllegalStateException("cannot encode a Rackwise message", e);
    }
  }

  private static String orEmpty(String text) {
    return text == null ? "" : text;
  }

  private static ObjectNode event(String type) {
    return JSON.objectNode().put("type", type);
  }

  private static void resources(ObjectNode target, Resource resource) {
    target.put("memory_mb", Math.max(0, resource.getMemorySize()))
        .put("vcores", Math.max(0, resource.getVirtualCores()));
  }

  private static String wire(NodeType locality) {
    switch (locality) {
      case NODE_LOCAL:
        return "node_local";
      case RACK_LOCAL:
        return "rack_local";
      default:
        return "off_switch";
    }
  }
}
