package io.rackwise.yarn.bridge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.wire.v1.Diagnostics;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.Locality;
import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.Plan;
import io.rackwise.wire.v1.PlanEntry;
import io.rackwise.wire.v1.QueuePlan;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;

/**
 * What one offer costs on the Java side of the boundary: encoding a typical {@code OfferRequest}
 * and reading a typical {@code OfferResponse} into an {@link OfferPlan}, three ways: (a) Jackson
 * trees, as DecisionCore does today; (b) protobuf through {@link WireCodec}; (c) Jackson
 * streaming, no trees. The Rust side's half is {@code native/rackwise-wire/examples/wire_cost.rs};
 * docs/wire.md has both sides' figures.
 *
 * <p>Run: {@code mvn -q -pl java test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.rackwise.yarn.bridge.WireCostBench}
 *
 * <p>Two scenarios. Typical: 20 events, one of them an app's ask table whose map row names 300
 * hosts on 15 racks, answered by 3 steered queues of 10 entries each. Small: the common
 * heartbeat once asks travel as changes, one container allocated and one finished, answered by
 * one queue of 3 entries. (a) builds its trees exactly as
 * DecisionCore's event methods do (it cannot call them: they only queue into a live engine).
 */
public final class WireCostBench {
  private static final int HOSTS = 300;
  private static final int RACKS = 15;
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonFactory FACTORY = new JsonFactory();
  private static final Resource TASK = Resource.newInstance(2048, 1);
  private static final Resource FREE = Resource.newInstance(16384, 8);
  private static final ResourceUtilization USED = ResourceUtilization.newInstance(40000, 0, 11.5f);
  private static final String[] REASONS =
      {"nass:node-local-map", "sarp:reduce-in-quota", "nass:saturated:defer"};

  private static final Map<String, Integer> RACK_COUNTS = new TreeMap<>();
  private static final Map<String, Integer> HOST_COUNTS = new TreeMap<>();
  // Every name the messages carry, made once: the shim reads them from Hadoop's objects, and
  // formatting them here would be measured as part of each way.
  private static final String[] APPS = new String[30];
  private static final String[] CONTAINERS = new String[108];
  private static final String[] NODES = new String[8];
  private static final String HOST_7;
  private static final String RACK_3;

  static {
    Arrays.setAll(APPS, i -> String.format("application_1700000000000_%04d", i));
    Arrays.setAll(CONTAINERS, i -> String.format("container_e01_1700000000000_0001_01_%06d", i));
    Arrays.setAll(NODES, i -> host(i) + ":8041");
    for (int r = 0; r < RACKS; r++) {
      RACK_COUNTS.put(rack(r), 40);
    }
    for (int h = 0; h < HOSTS; h++) {
      HOST_COUNTS.put(host(h), 6);
    }
    HOST_7 = host(7);
    RACK_3 = rack(3);
  }


  private WireCostBench() {}

  private static String host(int i) {
    return String.format("worker-%04d.dc1.example.com", i);
  }

  private static String rack(int i) {
    return String.format("/dc1/rack%02d", i % RACKS);
  }

  private static String app(int i) {
    return APPS[i];
  }

  private static String container(int i) {
    return CONTAINERS[i];
  }

  private static String node(int i) {
    return NODES[i];
  }

  // ---- (a) Jackson trees, as DecisionCore builds them ---------------------------------------

  private static ObjectNode resources(ObjectNode target, Resource resource) {
    return target.put("memory_mb", resource.getMemorySize())
        .put("vcores", resource.getVirtualCores());
  }

  private static byte[] treeRequest() throws IOException {
    ObjectNode request = JSON.objectNode().put("now_ms", 1_700_000_100_500L);
    ArrayNode events = request.putArray("events");
    ObjectNode added = events.addObject().put("type", "app_added").put("app", app(2))
        .put("name", "nightly-etl").put("user", "etl").put("queue", "root.batch")
        .put("app_type", "MAPREDUCE").put("submit_ms", 1_700_000_000_000L);
    added.putArray("tags").add("rackwise.shuffle-ratio=0.4");
    ObjectNode asks = events.addObject().put("type", "asks").put("app", app(1));
    ArrayNode table = asks.putArray("asks");
    treeAsk(table, 10, 20, Map.of(), Map.of());
    treeAsk(table, 20, 600, RACK_COUNTS, HOST_COUNTS);
    for (int i = 0; i < 8; i++) {
      ObjectNode event = events.addObject().put("type", "container_allocated")
          .put("app", app(1)).put("container", container(100 + i)).put("node", node(i))
          .put("priority", 20).put("locality", "node_local")
          .put("time_ms", 1_700_000_100_000L + i);
      resources(event.putObject("resources"), TASK);
    }
    for (int i = 0; i < 8; i++) {
      events.addObject().put("type", "container_finished").put("app", app(1))
          .put("container", container(i)).put("time_ms", 1_700_000_100_000L + i);
    }
    events.addObject().put("type", "job_stats").put("app", app(1)).put("maps_total", 1200)
        .put("maps_completed", 600).put("reduces_total", 20)
        .put("map_input_bytes", 80L << 30).put("map_output_bytes", 30L << 30);
    events.addObject().put("type", "host_load").put("host", HOST_7)
        .put("cross_rack_mbps", 420.5).put("time_ms", 1_700_000_100_000L);
    ObjectNode offered = request.putObject("node").put("node", node(3));
    resources(offered.putObject("unallocated"), FREE);
    offered.putObject("utilization").put("pmem_mb", USED.getPhysicalMemory())
        .put("cpu", USED.getCPU());
    return MAPPER.writeValueAsBytes(request);
  }

  private static void treeAsk(ArrayNode table, int priority, int any, Map<String, Integer> racks,
      Map<String, Integer> hosts) {
    ObjectNode ask = table.addObject().put("priority", priority).put("any", any);
    resources(ask.putObject("resources"), TASK);
    ObjectNode rackNode = ask.putObject("racks");
    racks.forEach(rackNode::put);
    ObjectNode hostNode = ask.putObject("hosts");
    hosts.forEach(hostNode::put);
  }

  private static OfferPlan treeResponse(byte[] bytes) throws IOException {
    JsonNode response = MAPPER.readTree(bytes);
    for (JsonNode ratio : response.path("learned")) {
      ratio.path("job_name").asText();
    }
    return OfferPlan.fromJson(response.path("plan"));
  }

  // ---- (b) protobuf ----------------------------------------------------------------------------

  private static byte[] protoRequest() {
    List<Event> events = new ArrayList<>(20);
    events.add(WireCodec.appAdded(app(2), "nightly-etl", "etl", "root.batch", "MAPREDUCE",
        List.of("rackwise.shuffle-ratio=0.4"), 1_700_000_000_000L));
    events.add(Event.newBuilder().setAsksChanged(io.rackwise.wire.v1.AsksChanged.newBuilder()
        .setApp(app(1))
        .addRows(WireCodec.askRow(10, 20, TASK, Map.of(), Map.of()))
        .addRows(WireCodec.askRow(20, 600, TASK, RACK_COUNTS, HOST_COUNTS))).build());
    for (int i = 0; i < 8; i++) {
      events.add(WireCodec.containerAllocated(app(1), container(100 + i), node(i), 20,
          NodeType.NODE_LOCAL, TASK, 1_700_000_100_000L + i));
    }
    for (int i = 0; i < 8; i++) {
      events.add(WireCodec.containerFinished(app(1), container(i), 1_700_000_100_000L + i));
    }
    events.add(WireCodec.jobStats(new io.rackwise.yarn.stats.JobStats(app(1), 1200, 600, 20,
        80L << 30, 30L << 30)));
    events.add(WireCodec.hostFigures(HOST_7, 1_700_000_100_000L, 420.5, null, null, null));
    return WireCodec.offerRequest(1_700_000_100_500L, events, node(3), FREE, USED)
        .toByteArray();
  }

  // ---- the small request: the common heartbeat once asks travel as changes -------------------

  private static byte[] smallTreeRequest() throws IOException {
    ObjectNode request = JSON.objectNode().put("now_ms", 1_700_000_100_500L);
    ArrayNode events = request.putArray("events");
    ObjectNode allocated = events.addObject().put("type", "container_allocated")
        .put("app", app(1)).put("container", container(100)).put("node", node(0))
        .put("priority", 20).put("locality", "node_local").put("time_ms", 1_700_000_100_000L);
    resources(allocated.putObject("resources"), TASK);
    events.addObject().put("type", "container_finished").put("app", app(1))
        .put("container", container(0)).put("time_ms", 1_700_000_100_000L);
    ObjectNode offered = request.putObject("node").put("node", node(3));
    resources(offered.putObject("unallocated"), FREE);
    offered.putObject("utilization").put("pmem_mb", USED.getPhysicalMemory())
        .put("cpu", USED.getCPU());
    return MAPPER.writeValueAsBytes(request);
  }

  private static byte[] smallProtoRequest() {
    List<Event> events = List.of(
        WireCodec.containerAllocated(app(1), container(100), node(0), 20, NodeType.NODE_LOCAL,
            TASK, 1_700_000_100_000L),
        WireCodec.containerFinished(app(1), container(0), 1_700_000_100_000L));
    return WireCodec.offerRequest(1_700_000_100_500L, events, node(3), FREE, USED)
        .toByteArray();
  }

  // ---- (c) Jackson streaming --------------------------------------------------------------------

  private static byte[] streamedRequest() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
    try (JsonGenerator gen = FACTORY.createGenerator(out)) {
      gen.writeStartObject();
      gen.writeNumberField("now_ms", 1_700_000_100_500L);
      gen.writeArrayFieldStart("events");
      gen.writeStartObject();
      gen.writeStringField("type", "app_added");
      gen.writeStringField("app", app(2));
      gen.writeStringField("name", "nightly-etl");
      gen.writeStringField("user", "etl");
      gen.writeStringField("queue", "root.batch");
      gen.writeStringField("app_type", "MAPREDUCE");
      gen.writeNumberField("submit_ms", 1_700_000_000_000L);
      gen.writeArrayFieldStart("tags");
      gen.writeString("rackwise.shuffle-ratio=0.4");
      gen.writeEndArray();
      gen.writeEndObject();
      gen.writeStartObject();
      gen.writeStringField("type", "asks");
      gen.writeStringField("app", app(1));
      gen.writeArrayFieldStart("asks");
      streamedAsk(gen, 10, 20, Map.of(), Map.of());
      streamedAsk(gen, 20, 600, RACK_COUNTS, HOST_COUNTS);
      gen.writeEndArray();
      gen.writeEndObject();
      for (int i = 0; i < 8; i++) {
        gen.writeStartObject();
        gen.writeStringField("type", "container_allocated");
        gen.writeStringField("app", app(1));
        gen.writeStringField("container", container(100 + i));
        gen.writeStringField("node", node(i));
        gen.writeNumberField("priority", 20);
        gen.writeStringField("locality", "node_local");
        gen.writeNumberField("time_ms", 1_700_000_100_000L + i);
        streamedResources(gen, "resources", TASK);
        gen.writeEndObject();
      }
      for (int i = 0; i < 8; i++) {
        gen.writeStartObject();
        gen.writeStringField("type", "container_finished");
        gen.writeStringField("app", app(1));
        gen.writeStringField("container", container(i));
        gen.writeNumberField("time_ms", 1_700_000_100_000L + i);
        gen.writeEndObject();
      }
      new io.rackwise.yarn.stats.JobStats(app(1), 1200, 600, 20, 80L << 30, 30L << 30)
          .writeJson(gen);
      gen.writeStartObject();
      gen.writeStringField("type", "host_load");
      gen.writeStringField("host", HOST_7);
      gen.writeNumberField("cross_rack_mbps", 420.5);
      gen.writeNumberField("time_ms", 1_700_000_100_000L);
      gen.writeEndObject();
      gen.writeEndArray();
      gen.writeObjectFieldStart("node");
      gen.writeStringField("node", node(3));
      streamedResources(gen, "unallocated", FREE);
      gen.writeObjectFieldStart("utilization");
      gen.writeNumberField("pmem_mb", USED.getPhysicalMemory());
      gen.writeNumberField("cpu", USED.getCPU());
      gen.writeEndObject();
      gen.writeEndObject();
      gen.writeEndObject();
    }
    return out.toByteArray();
  }

  private static void streamedResources(JsonGenerator gen, String field, Resource resource)
      throws IOException {
    gen.writeObjectFieldStart(field);
    gen.writeNumberField("memory_mb", resource.getMemorySize());
    gen.writeNumberField("vcores", resource.getVirtualCores());
    gen.writeEndObject();
  }

  private static void streamedAsk(JsonGenerator gen, int priority, int any,
      Map<String, Integer> racks, Map<String, Integer> hosts) throws IOException {
    gen.writeStartObject();
    gen.writeNumberField("priority", priority);
    gen.writeNumberField("any", any);
    streamedResources(gen, "resources", TASK);
    gen.writeObjectFieldStart("racks");
    for (Map.Entry<String, Integer> rack : racks.entrySet()) {
      gen.writeNumberField(rack.getKey(), rack.getValue());
    }
    gen.writeEndObject();
    gen.writeObjectFieldStart("hosts");
    for (Map.Entry<String, Integer> host : hosts.entrySet()) {
      gen.writeNumberField(host.getKey(), host.getValue());
    }
    gen.writeEndObject();
    gen.writeEndObject();
  }

  /** Reads the response's plan with a parser and no tree; the other fields are skipped. */
  private static OfferPlan streamedResponse(byte[] bytes) throws IOException {
    Map<String, List<OfferPlan.Entry>> entries = new HashMap<>();
    Map<String, String> steered = new HashMap<>();
    try (JsonParser parser = FACTORY.createParser(bytes)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.getCurrentName();
        parser.nextToken();
        if (!field.equals("plan")) {
          parser.skipChildren();
          continue;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          parser.nextToken();
          while (parser.nextToken() == JsonToken.START_OBJECT) {
            String queue = null;
            List<String> apps = new ArrayList<>();
            List<OfferPlan.Entry> list = new ArrayList<>();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
              String name = parser.getCurrentName();
              parser.nextToken();
              if (name.equals("queue")) {
                queue = parser.getText();
              } else if (name.equals("steered")) {
                while (parser.nextToken() == JsonToken.VALUE_STRING) {
                  apps.add(parser.getText());
                }
              } else {
                while (parser.nextToken() == JsonToken.START_OBJECT) {
                  list.add(streamedEntry(parser));
                }
              }
            }
            for (String app : apps) {
              steered.put(app, queue);
            }
            entries.put(queue, list);
          }
        }
      }
    }
    return new OfferPlan(entries, steered);
  }

  private static OfferPlan.Entry streamedEntry(JsonParser parser) throws IOException {
    String app = null;
    int priority = 0;
    NodeType locality = null;
    String reason = null;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String name = parser.getCurrentName();
      parser.nextToken();
      switch (name) {
        case "app":
          app = parser.getText();
          break;
        case "priority":
          priority = parser.getIntValue();
          break;
        case "locality":
          locality = NodeType.valueOf(parser.getText().toUpperCase(java.util.Locale.ROOT));
          break;
        default:
          reason = parser.getText();
      }
    }
    return new OfferPlan.Entry(app, priority, locality, reason);
  }

  // ---- the response, both encodings of the same content -------------------------------------

  private static byte[] jsonResponse(int queueCount, int entryCount) throws IOException {
    ObjectNode response = JSON.objectNode();
    ArrayNode queues = response.putObject("plan").putArray("queues");
    for (int q = 0; q < queueCount; q++) {
      ObjectNode queue = queues.addObject().put("queue", "root.queue" + q);
      ArrayNode steered = queue.putArray("steered");
      ArrayNode entries = queue.putArray("entries");
      for (int a = 0; a < entryCount; a++) {
        steered.add(app(q * entryCount + a));
        entries.addObject().put("app", app(q * entryCount + a)).put("priority", a % 3 == 0 ? 10 : 20)
            .put("locality", "rack_local").put("reason", REASONS[a % 3]);
      }
    }
    response.putArray("learned");
    response.putObject("diagnostics").put("rack", RACK_3).put("rack_utilization", 0.62)
        .put("rack_saturated", false).putArray("starved");
    response.putArray("logs");
    return MAPPER.writeValueAsBytes(response);
  }

  private static byte[] protoResponse(int queueCount, int entryCount) {
    Plan.Builder plan = Plan.newBuilder();
    for (int q = 0; q < queueCount; q++) {
      QueuePlan.Builder queue = plan.addQueuesBuilder().setQueue("root.queue" + q);
      for (int a = 0; a < entryCount; a++) {
        queue.addSteered(app(q * entryCount + a));
        queue.addEntries(PlanEntry.newBuilder().setApp(app(q * entryCount + a))
            .setPriority(a % 3 == 0 ? 10 : 20).setLocality(Locality.LOCALITY_RACK_LOCAL)
            .setReason(REASONS[a % 3]));
      }
    }
    return OfferResponse.newBuilder().setPlan(plan).setDiagnostics(Diagnostics.newBuilder()
        .setRack(RACK_3).setRackUtilization(0.62).setRackSaturated(false)).build()
        .toByteArray();
  }

  // ---- measuring --------------------------------------------------------------------------------

  private interface Work {
    Object run() throws IOException;
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static final int BATCH = 1_000;
  private static final int ROUNDS = 31;

  /** One way of doing one message's work, with what it measured. */
  private static final class Way {
    final String name;
    final int bytes;
    final Work work;
    final double[] micros = new double[ROUNDS];
    long allocatedPerCall;

    Way(String name, int bytes, Work work) {
      this.name = name;
      this.bytes = bytes;
      this.work = work;
    }
  }

  /**
   * Runs every way in batches after a warm-up, the ways interleaved round by round so that the
   * machine's load (other builds share its two cores) weighs on all of them alike.
   */
  private static void measure(List<Way> ways) throws IOException {
    Object sink = null;
    long thread = Thread.currentThread().getId();
    for (Way way : ways) {
      for (int i = 0; i < 20 * BATCH; i++) {
        sink = way.work.run();
      }
      long before = THREADS.getThreadAllocatedBytes(thread);
      for (int i = 0; i < BATCH; i++) {
        sink = way.work.run();
      }
      way.allocatedPerCall = (THREADS.getThreadAllocatedBytes(thread) - before) / BATCH;
    }
    for (int round = 0; round < ROUNDS; round++) {
      for (Way way : ways) {
        long start = System.nanoTime();
        for (int i = 0; i < BATCH; i++) {
          sink = way.work.run();
        }
        way.micros[round] = (System.nanoTime() - start) / 1e3 / BATCH;
      }
    }
    if (sink == null) {
      throw new IllegalStateException("the work produced nothing");
    }
  }

  public static void main(String[] args) throws IOException {
    byte[] json = jsonResponse(3, 10);
    byte[] proto = protoResponse(3, 10);
    byte[] smallJson = jsonResponse(1, 3);
    byte[] smallProto = protoResponse(1, 3);
    checkSamePlan(treeResponse(json), WireCodec.decodeResponse(proto).plan());
    checkSamePlan(treeResponse(json), streamedResponse(json));
    if (!MAPPER.readTree(treeRequest()).equals(MAPPER.readTree(streamedRequest()))) {
      throw new IllegalStateException("the streamed request differs from the tree request");
    }

    List<Way> ways = List.of(
        new Way("(a) Jackson tree: build + write OfferRequest", treeRequest().length,
            WireCostBench::treeRequest),
        new Way("(b) protobuf: build + write OfferRequest", protoRequest().length,
            WireCostBench::protoRequest),
        new Way("(c) Jackson streaming: write OfferRequest", streamedRequest().length,
            WireCostBench::streamedRequest),
        new Way("(a) Jackson tree: read OfferResponse -> plan", json.length,
            () -> treeResponse(json)),
        new Way("(b) protobuf: read + check OfferResponse", proto.length,
            () -> WireCodec.decodeResponse(proto)),
        new Way("(c) Jackson streaming: read plan", json.length,
            () -> streamedResponse(json)),
        new Way("small (a) Jackson tree: build + write request", smallTreeRequest().length,
            WireCostBench::smallTreeRequest),
        new Way("small (b) protobuf: build + write request", smallProtoRequest().length,
            WireCostBench::smallProtoRequest),
        new Way("small (a) Jackson tree: read response -> plan", smallJson.length,
            () -> treeResponse(smallJson)),
        new Way("small (b) protobuf: read + check response", smallProto.length,
            () -> WireCodec.decodeResponse(smallProto)));
    measure(ways);
    System.out.printf("Java side, per offer: %d interleaved rounds of %d calls after warm-up%n",
        ROUNDS, BATCH);
    System.out.printf("%-48s %9s %9s %8s %12s%n", "", "min µs", "median µs", "bytes",
        "alloc bytes");
    for (Way way : ways) {
      Arrays.sort(way.micros);
      System.out.printf("%-48s %9.2f %9.2f %8d %12d%n", way.name, way.micros[0],
          way.micros[ROUNDS / 2], way.bytes, way.allocatedPerCall);
    }
  }

  /** The three readers must agree, or the comparison says nothing. */
  private static void checkSamePlan(OfferPlan expected, OfferPlan actual) {
    for (int q = 0; q < 3; q++) {
      for (int a = 0; a < 10; a++) {
        String app = app(q * 10 + a);
        OfferPlan.Entry one = expected.head(app, e -> true);
        OfferPlan.Entry other = actual.head(app, e -> true);
        if (!one.toString().equals(other.toString())) {
          throw new IllegalStateException("plan of " + app + ": " + one + " vs " + other);
        }
      }
    }
  }
}
