package io.rackwise.yarn.bridge;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;

/**
 * The core's plan for one node offer (protocol {@code Plan}), with the rule that applies it:
 * within a steered queue, only the first entry that its app can still satisfy on this node is
 * allowed; every other steered app of that queue is vetoed. Where the queue's plan leaves the
 * order between its apps to FairScheduler, the first entry is sought among the offered app's own
 * entries, so the app FairScheduler's leaf-queue policy offers the node to first places if it
 * can, and the next app is offered the node if it cannot. Apps the plan does not steer are left
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
  /** Queues whose plan leaves the order between their apps to FairScheduler. */
  private final Set<String> queuesOrderedByScheduler;

  OfferPlan(Map<String, List<Entry>> entriesByQueue, Map<String, String> queueOfSteeredApp,
      Set<String> queuesOrderedByScheduler) {
    this.entriesByQueue = entriesByQueue;
    this.queueOfSteeredApp = queueOfSteeredApp;
    this.queuesOrderedByScheduler = queuesOrderedByScheduler;
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

  public boolean isEmpty() {
    return queueOfSteeredApp.isEmpty();
  }

  public boolean steers(String appId) {
    return queueOfSteeredApp.containsKey(appId);
  }

  /**
   * Whether the plan holds back the start of {@code appId}, an app still waiting for its AM
   * container: it steers the app and no entry of its queue names it (the core's
   * {@code Policy::held_starts}). Any other app waiting for its AM is FairScheduler's.
   */
  public boolean holdsStart(String appId) {
    String queue = queueOfSteeredApp.get(appId);
    return queue != null && entriesByQueue.getOrDefault(queue, Collections.emptyList()).stream()
        .noneMatch(entry -> entry.app.equals(appId));
  }

  /**
   * The entry that may place now when FairScheduler offers the node to {@code appId}: the first
   * one of its queue (of the app's own where FairScheduler orders the queue's apps) not failed in
   * this offer that {@code satisfiable} admits (its app still has an ask at that priority and
   * locality on this node). Null when none can.
   */
  public Entry head(String appId, Predicate<Entry> satisfiable) {
    String queue = queueOfSteeredApp.get(appId);
    boolean ownOnly = queuesOrderedByScheduler.contains(queue);
    for (Entry entry : entriesByQueue.getOrDefault(queue, Collections.emptyList())) {
      if ((!ownOnly || entry.app.equals(appId)) && !entry.failed && satisfiable.test(entry)) {
        return entry;
      }
    }
    return null;
  }

  /**
   * The entry {@code appId} places under now: the head when it is the app's own, else null and
   * the app is vetoed for this offer. Only for an app the plan {@link #steers}; the rest is
   * FairScheduler's. The core's simulator applies the same rule
   * ({@code rackwise_core::mapreduce::apply_plan}); shared test vectors keep the two equal.
   */
  public Entry entryFor(String appId, Predicate<Entry> satisfiable) {
    Entry head = head(appId, satisfiable);
    return head != null && head.app.equals(appId) ? head : null;
  }

  /** The entry was tried and placed nothing; later calls in this offer move past it. */
  public void markFailed(Entry entry) {
    entry.failed = true;
  }
}
