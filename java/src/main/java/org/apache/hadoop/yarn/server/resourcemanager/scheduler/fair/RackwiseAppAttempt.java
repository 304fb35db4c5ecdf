package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.yarn.bridge.OfferPlan;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An app attempt that follows the offer plan of {@link RackwiseFairScheduler}.
 *
 * <p>When FairScheduler offers a node to this app during a steered offer, the app either
 * declines (another app of its queue is ranked first: a veto), or takes part with exactly the
 * plan's priority and locality cap: {@link #getSchedulerKeys()} then shows only that key and
 * {@link #getAllowedLocalityLevel} returns the cap, so FairScheduler's own key loop, fit checks,
 * reservations and accounting do the placing. Outside an offer, and for apps the plan does not
 * steer, every method behaves as FairScheduler's.
 */
public class RackwiseAppAttempt extends FSAppAttempt {
  private static final Logger LOG = LoggerFactory.getLogger(RackwiseAppAttempt.class);

  private final RackwiseFairScheduler rackwise;

  /**
   * The entry this app is placing right now. Set only on the thread serving the offer, so the
   * update thread computing demand concurrently never sees a filtered key list.
   */
  private volatile ActiveEntry active;

  private static final class ActiveEntry {
    final Thread thread;
    final SchedulerRequestKey key;
    final NodeType cap;

    ActiveEntry(SchedulerRequestKey key, NodeType cap) {
      this.thread = Thread.currentThread();
      this.key = key;
      this.cap = cap;
    }
  }

  public RackwiseAppAttempt(RackwiseFairScheduler scheduler,
      ApplicationAttemptId applicationAttemptId, String user, FSLeafQueue queue,
      ActiveUsersManager activeUsersManager, RMContext rmContext) {
    super(scheduler, applicationAttemptId, user, queue, activeUsersManager, rmContext);
    this.rackwise = scheduler;
  }

  @Override
  public Resource assignContainer(FSSchedulerNode node) {
    OfferPlan plan = rackwise.currentPlan();
    String appId = getApplicationId().toString();
    // Apps that preempted on this node get the freed space first, as FairScheduler decides.
    if (plan == null || !plan.steers(appId) || node.isPreemptedForApp(this)) {
      return super.assignContainer(node);
    }
    // An app still waiting for its AM container is FairScheduler's, unless its policy holds
    // its start back.
    if (isWaitingForAMContainer()) {
      if (!plan.holdsStart(appId)) {
        return super.assignContainer(node);
      }
      rackwise.metrics().vetoed();
      return Resources.none();
    }
    OfferPlan.Entry head;
    SchedulerRequestKey key;
    try {
      head = plan.entryFor(appId, entry -> satisfiable(entry, node));
      key = head == null ? null : keyWithPriority(head.priority());
    } catch (RuntimeException e) {
      rackwise.planFailed(appId, node, e);
      return super.assignContainer(node);
    }
    if (key == null) {
      rackwise.metrics().vetoed();
      return Resources.none();
    }
    active = new ActiveEntry(key, head.locality());
    try {
      Resource assigned = super.assignContainer(node);
      if (Resources.none().equals(assigned)) {
        plan.markFailed(head);
      }
      return assigned;
    } finally {
      active = null;
    }
  }

  /**
   * Whether the entry's app still has an ask at the entry's priority and locality here, and is
   * one FairScheduler offers this node to (FSLeafQueue.assignContainer): an entry of an app that
   * blacklists the node, or that its queue does not hold runnable ({@code maxRunningApps}; such
   * an app has task asks only where they are added without its AM, as Hadoop's own tests do),
   * would otherwise head the plan and veto the apps FairScheduler does offer the node to.
   */
  private boolean satisfiable(OfferPlan.Entry entry, FSSchedulerNode node) {
    FSAppAttempt app = rackwise.attemptOf(entry.app());
    if (app == null || !app.getQueue().isRunnableApp(app)
        || SchedulerAppUtils.isPlaceBlacklisted(app, node, LOG)) {
      return false;
    }
    SchedulerRequestKey key = app instanceof RackwiseAppAttempt
        ? ((RackwiseAppAttempt) app).keyWithPriority(entry.priority()) : null;
    if (key == null) {
      return false;
    }
    String where;
    switch (entry.locality()) {
      case NODE_LOCAL:
        where = node.getNodeName();
        break;
      case RACK_LOCAL:
        where = node.getRackName();
        break;
      default:
        where = ResourceRequest.ANY;
    }
    return app.getPendingAsk(key, where).getCount() > 0;
  }

  /** This app's scheduler key with the given priority, from the full (unfiltered) key set. */
  SchedulerRequestKey keyWithPriority(int priority) {
    for (SchedulerRequestKey key : super.getSchedulerKeys()) {
      // A key without a priority (an AM's ask the RM kept as sent) is never a plan's.
      if (key.getPriority() != null && key.getPriority().getPriority() == priority
          && key.getContainerToUpdate() == null) {
        return key;
      }
    }
    return null;
  }

  /** All keys, whatever the plan: for reporting the asks to the core. */
  Collection<SchedulerRequestKey> allSchedulerKeys() {
    return super.getSchedulerKeys();
  }

  @Override
  public Collection<SchedulerRequestKey> getSchedulerKeys() {
    ActiveEntry current = active;
    if (current != null && current.thread == Thread.currentThread()) {
      return Collections.singletonList(current.key);
    }
    return super.getSchedulerKeys();
  }

  @Override
  NodeType getAllowedLocalityLevel(SchedulerRequestKey schedulerKey, int numNodes,
      double nodeLocalityThreshold, double rackLocalityThreshold) {
    NodeType cap = capFor(schedulerKey);
    return cap != null ? cap : super.getAllowedLocalityLevel(schedulerKey, numNodes,
        nodeLocalityThreshold, rackLocalityThreshold);
  }

  @Override
  NodeType getAllowedLocalityLevelByTime(SchedulerRequestKey schedulerKey, long nodeLocalityDelayMs,
      long rackLocalityDelayMs, long currentTimeMs) {
    NodeType cap = capFor(schedulerKey);
    return cap != null ? cap : super.getAllowedLocalityLevelByTime(schedulerKey,
        nodeLocalityDelayMs, rackLocalityDelayMs, currentTimeMs);
  }

  private NodeType capFor(SchedulerRequestKey schedulerKey) {
    ActiveEntry current = active;
    if (current != null && current.thread == Thread.currentThread()
        && current.key.equals(schedulerKey)) {
      return current.cap;
    }
    return null;
  }

  @Override
  public RMContainer allocate(NodeType type, FSSchedulerNode node, SchedulerRequestKey schedulerKey,
      PendingAsk pendingAsk, Container reservedContainer) {
    RMContainer container = super.allocate(type, node, schedulerKey, pendingAsk,
        reservedContainer);
    if (container != null) {
      rackwise.containerAllocated(this, container, type, active != null);
      rackwise.asksChanged(getApplicationId());
    }
    return container;
  }

  // ---- where an attempt's asks change (Hadoop 3.4.3's SchedulerApplicationAttempt) ---------
  // Each marks the app for the next offer, which sends the rows that changed.

  /** The AM's allocate call: new, changed or cancelled resource requests. */
  @Override
  public boolean updateResourceRequests(List<ResourceRequest> requests) {
    boolean updated = super.updateResourceRequests(requests);
    rackwise.asksChanged(getApplicationId());
    return updated;
  }

  /** The AM's allocate call with placement-constrained scheduling requests. */
  @Override
  public boolean updateSchedulingRequests(List<SchedulingRequest> requests) {
    boolean updated = super.updateSchedulingRequests(requests);
    rackwise.asksChanged(getApplicationId());
    return updated;
  }

  /** A container killed or lost before it ran: its request is asked again. */
  @Override
  public void recoverResourceRequestsForContainer(ContainerRequest containerRequest) {
    super.recoverResourceRequestsForContainer(containerRequest);
    rackwise.asksChanged(getApplicationId());
  }

  /** A new attempt that keeps the previous attempt's asks (work-preserving AM restart). */
  @Override
  public void transferStateFromPreviousAttempt(SchedulerApplicationAttempt appAttempt) {
    super.transferStateFromPreviousAttempt(appAttempt);
    rackwise.asksChanged(getApplicationId());
  }
}
