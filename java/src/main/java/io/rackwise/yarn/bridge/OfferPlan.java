package io.rackwise.yarn.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;

/**
 * The core's plan for one node offer (protocol {@code Plan}), with the rule that applies it:
 * within a steered queue, only the first entry that its app can still satisfy on this node is
 * allowed; every other steered app of that queue is vetoed. Apps the plan does not steer are left
 * to FairScheduler. Entries are re-evaluated on every {@code assignContainer} call, so with
 * {@code assignmultiple} the next container of the same heartbeat goes to the next entry once the
 * first is used up, and an entry that failed to place (e.g. did not fit) is skipped for the rest
 * of the offer.
 */
public final class OfferPlan {
  /** One allowed (app, priority) placement with the loosest locality it may take. */
  public static final class Entry {
    private final String app;
    private final int priority;
    private final NodeType locality;
    private final String reason;
    private boolean failed;

    Entry(String app, int priority, NodeType locality, String reason) {
      this.app = app;
      this.priority = priority;
      this.locality = locality;
      this.reason = reason;
    }

    public String app() {
      return app;
    }

    public int priority() {
      return priority;
    }

    public NodeType locality() {
      return locality;
    }

    public String reason() {
      return reason;
    }

    @Override
    public String toString() {
      return app + "@" + priority + "/" + locality + " (" + reason + ")";
    }
  }

  private final Map<String, List<Entry>> entriesByQueue;
  private final Map<String, String> queueOfSteeredApp;

  OfferPlan(Map<String, List<Entry>> entriesByQueue,
      Map<String, String> queueOfSteeredApp) {
    this.entriesByQueue = entriesByQueue;
    this.queueOfSteeredApp = queueOfSteeredApp;
  }

  /**
   * Reads the {@code plan} object of an offer response, refusing anything that is not a plan:
   * a missing or mistyped field, an unknown locality, or a priority that is not a MapReduce
   * task's.
   *
   * @throws IllegalArgumentException naming the field, the value and the reason
   */
  static OfferPlan fromJson(JsonNode plan) {
    Map<String, List<Entry>> entries = new HashMap<>();
    Map<String, String> steered = new HashMap<>();
    for (JsonNode queuePlan : array(plan, "queues", "plan")) {
      String queue = text(queuePlan, "queue", "plan.queues[]");
      String where = "plan of queue " + queue;
      for (JsonNode app : array(queuePlan, "steered", where)) {
        if (!app.isTextual()) {
          throw refused(where, "steered", app, "must be an app id string");
        }
        steered.put(app.asText(), queue);
      }
      List<Entry> list = new ArrayList<>();
      for (JsonNode entry : array(queuePlan, "entries", where)) {
        JsonNode priority = entry.path("priority");
        if (!priority.canConvertToInt() || !priority.isIntegralNumber()
            || !MapReducePriority.isTask(priority.asInt())) {
          throw refused(where, "entries[].priority", priority,
              "must be a MapReduce map or reduce priority");
        }
        list.add(new Entry(text(entry, "app", where + " entries[]"), priority.asInt(),
            locality(text(entry, "locality", where + " entries[]")),
            text(entry, "reason", where + " entries[]")));
      }
      entries.put(queue, list);
    }
    return new OfferPlan(entries, steered);
  }

  private static JsonNode array(JsonNode parent, String field, String where) {
    JsonNode node = parent.path(field);
    if (!node.isArray()) {
      throw refused(where, field, node, "must be an array");
    }
    return node;
  }

  private static String text(JsonNode parent, String field, String where) {
    JsonNode node = parent.path(field);
    if (!node.isTextual()) {
      throw refused(where, field, node, "must be a string");
    }
    return node.asText();
  }

  private static IllegalArgumentException refused(String where, String field, JsonNode value,
      String reason) {
    return new IllegalArgumentException("native " + where + ": " + field + " "
        + (value.isMissingNode() ? "is missing" : "'" + value + "'") + " " + reason);
  }

  /**
   * Checks that every entry names an app the scheduler knows: an entry for an unknown app could
   * never be satisfied, and would veto every steered app of its queue on every offer.
   *
   * @throws IllegalStateException naming the first unknown app and its queue
   */
  public void checkApps(Predicate<String> known) {
    for (Map.Entry<String, List<Entry>> queue : entriesByQueue.entrySet()) {
      for (Entry entry : queue.getValue()) {
        if (!known.test(entry.app)) {
          throw new IllegalStateException("the plan of queue " + queue.getKey() + " names app "
              + entry.app + ", which the scheduler does not know");
        }
      }
    }
  }

  private static NodeType locality(String wire) {
    switch (wire) {
      case "node_local":
        return NodeType.NODE_LOCAL;
      case "rack_local":
        return NodeType.RACK_LOCAL;
      case "off_switch":
        return NodeType.OFF_SWITCH;
      default:
        throw new IllegalArgumentException("native plan: locality '" + wire
            + "' is not node_local, rack_local or off_switch");
    }
  }

  public boolean isEmpty() {
    return queueOfSteeredApp.isEmpty();
  }

  public boolean steers(String appId) {
    return queueOfSteeredApp.containsKey(appId);
  }

  /**
   * The entry that may place now in the queue of {@code appId}: the first one not failed in this
   * offer that {@code satisfiable} admits (its app still has an ask at that priority and
   * locality on this node). Null when none can.
   */
  public Entry head(String appId, Predicate<Entry> satisfiable) {
    String queue = queueOfSteeredApp.get(appId);
    for (Entry entry : entriesByQueue.getOrDefault(queue, Collections.emptyList())) {
      if (!entry.failed && satisfiable.test(entry)) {
        return entry;
      }
    }
    return null;
  }

  /** The entry was tried and placed nothing; later calls in this offer move past it. */
  public void markFailed(Entry entry) {
    entry.failed = true;
  }
}
