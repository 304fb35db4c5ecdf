package io.rackwise.yarn.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.yarn.config.AllocationFileExtensions.QueueExtension;
import io.rackwise.yarn.config.RackwiseConfigException;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeConfigException;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeCoreException;
import io.rackwise.yarn.nativecore.NativeLibraryLoader;
import io.rackwise.yarn.netsat.NetworkLoadFeed;
import io.rackwise.yarn.state.LearnedRatio;
import io.rackwise.yarn.stats.JobStats;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
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
 * <p>A failure to load the library, or any exception from a native call, is logged loudly once,
 * counted, and turns the core off: every later offer is scheduled by stock FairScheduler until the
 * ResourceManager restarts. With {@code native.required} the failure is thrown instead.
 */
public final class DecisionCore implements AutoCloseable, NetworkLoadFeed.Sink {
  private static final Logger LOG = LoggerFactory.getLogger(DecisionCore.class);
  /** Records the native library logged, written to the ResourceManager's own log. */
  private static final Logger NATIVE_LOG = LoggerFactory.getLogger("io.rackwise.yarn.native");
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final ObjectMapper mapper = new ObjectMapper();
  private final boolean required;
  private final RackwiseMetrics metrics;
  private final Consumer<List<LearnedRatio>> learnedSink;
  private final ConcurrentLinkedQueue<ObjectNode> pending = new ConcurrentLinkedQueue<>();
  private volatile NativeCore engine;

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
      Consumer<List<LearnedRatio>> learnedSink) throws RackwiseConfigException {
    DecisionCore core = new DecisionCore(required, metrics, learnedSink);
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    if (!load.loaded()) {
      core.fail("loading the native library", new NativeCoreException(load.message()));
      return core;
    }
    try {
      core.engine = NativeCore.open(core.bytes(config));
      metrics.setNativeActive(true);
      LOG.info("Rackwise native core {} active ({})", NativeCore.version(), load.message());
    } catch (NativeConfigException e) {
      throw new RackwiseConfigException(e.getMessage(), e);
    } catch (NativeCoreException e) {
      core.fail("creating the engine", e);
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
    NativeCore current = engine;
    if (current == null) {
      return;
    }
    try {
      current.reconfigure(bytes(config));
    } catch (NativeConfigException e) {
      throw new RackwiseConfigException(e.getMessage(), e);
    } catch (NativeCoreException e) {
      fail("reconfiguring", e);
    }
  }

  // ---- events: what changed since the previous offer --------------------------------------

  public void nodeAdded(String node, String host, String rack, Resource capacity) {
    ObjectNode event = event("node_added").put("node", node).put("host", host).put("rack", rack);
    resources(event.putObject("capacity"), capacity);
    emit(event);
  }

  public void nodeRemoved(String node) {
    emit(event("node_removed").put("node", node));
  }

  public void appAdded(String app, String name, String user, String queue, String appType,
      Collection<String> tags, long submitMs) {
    ObjectNode event = event("app_added").put("app", app).put("name", name).put("user", user)
        .put("queue", queue).put("app_type", appType).put("submit_ms", submitMs);
    ArrayNode tagArray = event.putArray("tags");
    tags.forEach(tagArray::add);
    emit(event);
  }

  public void appRemoved(String app) {
    emit(event("app_removed").put("app", app));
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

  public void asks(String app, ArrayNode table) {
    ObjectNode event = event("asks").put("app", app);
    event.set("asks", table);
    emit(event);
  }

  public void containerAllocated(String app, String container, String node, int priority,
      NodeType locality, Resource resources, long timeMs) {
    ObjectNode event = event("container_allocated").put("app", app).put("container", container)
        .put("node", node).put("priority", priority).put("locality", wire(locality))
        .put("time_ms", timeMs);
    resources(event.putObject("resources"), resources);
    emit(event);
  }

  public void containerFinished(String app, String container, long timeMs) {
    emit(event("container_finished").put("app", app).put("container", container)
        .put("time_ms", timeMs));
  }

  public void jobStats(JobStats stats) {
    emit(event(JobStats.EVENT_TYPE).put("app", stats.appId())
        .put("maps_total", stats.mapsTotal()).put("maps_completed", stats.mapsCompleted())
        .put("reduces_total", stats.reducesTotal())
        .put("map_input_bytes", stats.mapInputBytes())
        .put("map_output_bytes", stats.mapOutputBytes()));
  }

  @Override
  public void rackLoad(String rack, double utilization, long timeMs) {
    emit(event("rack_load").put("rack", rack).put("utilization", utilization)
        .put("time_ms", timeMs));
  }

  @Override
  public void hostLoad(String host, double crossRackMbps, long timeMs) {
    emit(event("host_load").put("host", host).put("cross_rack_mbps", crossRackMbps)
        .put("time_ms", timeMs));
  }

  // ---- the offer ---------------------------------------------------------------------------

  /**
   * Sends the pending events and the offered node to the core and returns its plan; null when
   * the core is off, so the caller schedules as stock FairScheduler.
   */
  public OfferPlan offer(long nowMs, String node, Resource unallocated,
      ResourceUtilization utilization) {
    NativeCore current = engine;
    if (current == null) {
      metrics.fellBack();
      return null;
    }
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
    long start = System.nanoTime();
    JsonNode response;
    try {
      response = mapper.readTree(current.offer(bytes(request)));
    } catch (NativeCoreException | IOException e) {
      fail("an offer of node " + node, e instanceof RuntimeException
          ? (RuntimeException) e : new NativeCoreException("unreadable response: " + e));
      return null;
    }
    writeNativeLogs(response.path("logs"));
    List<LearnedRatio> learned = new ArrayList<>();
    for (JsonNode ratio : response.path("learned")) {
      learned.add(new LearnedRatio(ratio.path("job_name").asText(),
          ratio.path("ratio").asDouble(), ratio.path("runs").asInt()));
    }
    if (!learned.isEmpty()) {
      learnedSink.accept(learned);
    }
    OfferPlan plan = OfferPlan.fromJson(response.path("plan"));
    metrics.offerDecided(System.nanoTime() - start, !plan.isEmpty(),
        response.path("diagnostics").path("starved").size());
    if (LOG.isDebugEnabled() && !plan.isEmpty()) {
      LOG.debug("offer {}: {}", node, response.path("diagnostics"));
    }
    return plan;
  }

  @Override
  public synchronized void close() {
    NativeCore current = engine;
    engine = null;
    pending.clear();
    metrics.setNativeActive(false);
    if (current != null) {
      current.close();
    }
  }

  private void emit(ObjectNode event) {
    if (engine != null) {
      pending.add(event);
    }
  }

  private void fail(String during, RuntimeException e) {
    metrics.nativeFailed();
    if (required) {
      throw e;
    }
    LOG.error("Rackwise native core failed while {}: scheduling falls back to stock "
        + "FairScheduler until the ResourceManager restarts (set "
        + "yarn.scheduler.rackwise.native.required=true to make this fatal)", during, e);
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
