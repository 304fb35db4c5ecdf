package io.rackwise.yarn.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.junit.jupiter.api.Test;

/**
 * The shim applies a plan exactly as the core's simulator does: every case of the vectors the
 * Rust rule is tested against ({@code native/rackwise-core/tests/vectors/plan_application.json})
 * gives the same answer through {@link OfferPlan#steers}, {@link OfferPlan#entryFor} and
 * {@link OfferPlan#markFailed}, the calls {@code RackwiseAppAttempt} makes.
 */
class PlanApplicationVectorsTest {
  private static final Path VECTORS = Paths.get("..", "native", "rackwise-core", "tests",
      "vectors", "plan_application.json");

  @Test
  void everyVectorGivesTheCoresAnswer() throws IOException {
    JsonNode cases = new ObjectMapper().readTree(VECTORS.toFile()).path("cases");
    assertTrue(cases.size() >= 10, "the vectors file lists its cases: " + VECTORS);
    for (JsonNode vector : cases) {
      String name = vector.path("name").asText();
      assertEquals(vector.path("expected").toString(), answer(vector), name);
    }
  }

  /** The shim's answer, written as the vectors write theirs. */
  private static String answer(JsonNode vector) {
    JsonNode queuePlan = vector.path("plan");
    String queue = queuePlan.path("queue").asText();
    Map<String, String> steered = new HashMap<>();
    queuePlan.path("steered").forEach(app -> steered.put(app.asText(), queue));
    List<OfferPlan.Entry> entries = new ArrayList<>();
    for (JsonNode entry : queuePlan.path("entries")) {
      entries.add(new OfferPlan.Entry(entry.path("app").asText(), entry.path("priority").asInt(),
          locality(entry.path("locality").asText()), entry.path("reason").asText()));
    }
    OfferPlan plan = new OfferPlan(Map.of(queue, entries), steered,
        queuePlan.path("scheduler_orders_apps").asBoolean(false) ? Set.of(queue) : Set.of());
    vector.path("spent").forEach(position -> plan.markFailed(entries.get(position.asInt())));

    String app = vector.path("app").asText();
    if (!plan.steers(app)) {
      return "\"stock\"";
    }
    JsonNode asks = vector.path("asks");
    // RackwiseAppAttempt asks YARN for a pending ask at the node, its rack or anywhere, as the
    // cap says; a MapReduce ask at a node is also one at its rack and anywhere, so an entry is
    // satisfiable exactly when the app's closest ask at that priority is no looser than the cap.
    OfferPlan.Entry placed = plan.entryFor(app, entry -> {
      JsonNode best = asks.path(entry.app()).path(Integer.toString(entry.priority()));
      return !best.isMissingNode() && locality(best.asText()).compareTo(entry.locality()) <= 0;
    });
    if (placed == null) {
      return "\"vetoed\"";
    }
    return "{\"priority\":" + placed.priority() + ",\"cap\":\""
        + placed.locality().name().toLowerCase() + "\"}";
  }

  private static NodeType locality(String wire) {
    return NodeType.valueOf(wire.toUpperCase());
  }
}
