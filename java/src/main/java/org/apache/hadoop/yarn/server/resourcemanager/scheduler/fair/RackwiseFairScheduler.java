package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.bridge.DecisionCore;
import io.rackwise.yarn.bridge.OfferPlan;
import io.rackwise.yarn.bridge.WireCodec;
import io.rackwise.yarn.bridge.WireResponse;
import io.rackwise.yarn.compat.HadoopVersions;
import io.rackwise.yarn.config.AllocationFileExtensions;
import io.rackwise.yarn.config.AllocationFileExtensions.QueueExtension;
import io.rackwise.yarn.config.RackwiseConfigException;
import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.dp.DpHttpServer;
import io.rackwise.yarn.dp.DpLedger;
import io.rackwise.yarn.dp.DpMarkets;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.netsat.HostClassFile;
import io.rackwise.yarn.netsat.HostFigure;
import io.rackwise.yarn.netsat.NetworkLoadFeed;
import io.rackwise.yarn.state.LearnedHistoryStore;
import io.rackwise.yarn.state.LearnedRatio;
import io.rackwise.yarn.stats.JobStats;
import io.rackwise.yarn.stats.JobStatsPoller;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * FairScheduler whose per-node decisions are steered by the Rackwise native core.
 *
 * <p>FairScheduler keeps everything it does (queue fair shares, maxShare, AM share, preemption,
 * reservations, metrics, web UI). On every node offer this class makes one native call carrying
 * what changed since the previous one and receives a plan; {@link RackwiseAppAttempt} then vetoes
 * apps and narrows their keys and locality according to it (Design A of
 * docs/architecture.md). It lives in FairScheduler's package because the hooks
 * ({@code attemptScheduling}, {@code getAllowedLocalityLevel}) are package-private.
 *
 * <p>Install: put the Rackwise jar on the ResourceManager classpath and set
 * {@code yarn.resourcemanager.scheduler.class} to this class.
 */
public class RackwiseFairScheduler extends FairScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(RackwiseFairScheduler.class);

  /**
   * What a child starts with when its market's allocation file sets neither {@code <budget>}
   * nor {@code <spending>}: the core's declared defaults (native/rackwise-core/src/policy/dp/
   * mod.rs), which a change to an account-less queue must start from as the core would.
   */
  private static final DpLedger.Balance DP_CHILD_START = new DpLedger.Balance(0, 1);

  private ShimSettings shimSettings;
  private Configuration rackwiseConf;
  private RackwiseMetrics metrics;
  private LearnedHistoryStore history;
  private JobStatsPoller poller;
  private NetworkLoadFeed feed;
  private HostClassFile hostClasses;
  /** Started on first use ({@link #core()}); read without a lock once set. */
  private volatile DecisionCore core;
  /** The allocation configuration our last (re)load followed; a new object means FS reloaded. */
  private AllocationConfiguration followedAllocations;
  /** Queue weights the policies set, by queue name; read and written under the write lock. */
  private final Map<String, Float> policyWeights = new HashMap<>();
  /** Queues named by a policy weight that did not exist when it was applied (warned once). */
  private final Set<String> policyWeightQueuesMissing = new HashSet<>();
  /** Whether some policy weight waits for its queue to exist. */
  private boolean policyWeightsPending;
  /**
   * Dynamic Priority's accounts, following the charges of every interval the core closes; opened
   * with the core (in the state directory when one is set).
   */
  private volatile DpLedger dpLedger;
  /**
   * Each Dynamic Priority market (a parent marked {@code dp}) with the account a child of it
   * starts with, as the allocation file the core last accepted says.
   */
  private volatile Map<String, DpLedger.Balance> dpMarkets = Map.of();
  /** The allocation file's queues as last parsed, kept in {@link #dpMarkets} once accepted. */
  private List<QueueExtension> parsedQueues = Collections.emptyList();
  /** Dynamic Priority's HTTP endpoint while this RM is active, or null when it has none. */
  private DpHttpServer dpHttp;
  /** The plan of the offer being served; read and written only under the scheduler write lock. */
  private OfferPlan currentPlan;
  /** The MapReduce apps: the only ones whose asks the core is told (it steers no other). */
  private final Set<ApplicationId> mapReduceApps = ConcurrentHashMap.newKeySet();
  /**
   * MapReduce apps whose asks may have changed since the last offer, marked from whichever
   * thread changed them (the AM's allocate call, an allocation, a recovered container).
   */
  private final Set<ApplicationId> asksDirty = ConcurrentHashMap.newKeySet();
  /**
   * Per app, the fingerprint of each priority's row as last sent; only rows whose fingerprint
   * changed are encoded. Read and written at offer time, under the scheduler's write lock.
   */
  private final Map<ApplicationId, Map<SchedulerRequestKey, Long>> reportedRows =
      new HashMap<>();

  public RackwiseFairScheduler() {
    super();
  }

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    HadoopVersions.check(VersionInfo.getVersion());
    shimSettings = ShimSettings.from(conf);
    warnUnknownShimKeys(conf);
    rackwiseConf = conf;
    metrics = RackwiseMetrics.register();
    super.serviceInit(conf);
    followedAllocations = getAllocationConfiguration();
  }

  /**
   * The core, started on first use. Not in {@link #serviceInit}: the standby RM of an HA pair
   * initialises its scheduler when it boots and uses it only once it becomes active, and the
   * learned history the core must begin with is the one the previous active wrote up to then,
   * not the one on disk at the standby's boot. Not in {@link #serviceStart} alone either: a
   * work-preserving recovery hands the scheduler its recovered applications before the
   * scheduler service starts. Either way, the first use comes when this RM acts as the active
   * one, and that is when the history is read.
   */
  private DecisionCore core() {
    DecisionCore started = core;
    return started != null ? started : startCore();
  }

  private synchronized DecisionCore startCore() {
    if (core != null) {
      return core;
    }
    history = LearnedHistoryStore.fromSettings(shimSettings, rackwiseConf);
    List<LearnedRatio> learned = history.load();
    DecisionCore started;
    try {
      DpLedger ledger = shimSettings.stateDir() == null ? DpLedger.inMemory()
          : DpLedger.open(shimSettings.stateDir(), rackwiseConf);
      started = DecisionCore.start(shimSettings.nativeRequired(),
          engineConfig(rackwiseConf, learned), metrics, this::learned, this::setPolicyWeights,
          ledger::record, engineFactory());
      // The core resumes every account where the ledger left it.
      ledger.balances().forEach((queue, balance) ->
          started.account(queue, balance.budget(), balance.spending()));
      dpLedger = ledger;
      followDpMarkets();
    } catch (RackwiseConfigException | IOException e) {
      throw new YarnRuntimeException("Rackwise cannot start: " + e.getMessage(), e);
    }
    if (shimSettings.statsEnabled() && started.isActive()) {
      try {
        poller = JobStatsPoller.fromSettings(shimSettings, rackwiseConf);
      } catch (IOException e) {
        // Job counters refine the shuffle predictions; the RM schedules without them.
        LOG.error("MapReduce job statistics are not collected ({} is true): {}. The core "
            + "predicts shuffle from its prior and learned history only.",
            ShimSettings.STATS_ENABLED, e.getMessage());
      }
    }
    if (shimSettings.feedFile() != null && started.isActive()) {
      feed = new NetworkLoadFeed(shimSettings.feedFile(), shimSettings.feedPollIntervalMs(),
          started);
    }
    if (shimSettings.hostClassFile() != null && started.isActive()) {
      hostClasses = new HostClassFile(shimSettings.hostClassFile(),
          shimSettings.feedPollIntervalMs(), started, this::nodeHosts);
    }
    core = started;
    return started;
  }

  /**
   * The scheduler service runs only while this RM is the active one (an HA standby stops it on
   * the transition), and so does the endpoint: a standby never answers with budgets the active
   * RM is changing.
   */
  @Override
  public void serviceStart() throws Exception {
    core();
    super.serviceStart();
    if (shimSettings.dpHttp().enabled()) {
      dpHttp = DpHttpServer.start(shimSettings.dpHttp(), rackwiseConf,
          new DpMarketsView(this));
    }
    history.start();
    if (poller != null) {
      poller.start();
    }
    if (feed != null) {
      feed.start();
    }
    if (hostClasses != null) {
      hostClasses.start();
    }
  }

  @Override
  public void serviceStop() throws Exception {
    if (dpHttp != null) {
      // First: no change is accepted once the core and the ledger stop.
      dpHttp.stop();
      dpHttp = null;
    }
    if (poller != null) {
      poller.stop();
    }
    if (feed != null) {
      feed.close();
    }
    if (hostClasses != null) {
      hostClasses.close();
    }
    if (core != null) {
      core.close();
    }
    if (dpLedger != null) {
      // After the core: no interval closes any more, so every one closed is written.
      dpLedger.close();
    }
    if (history != null) {
      history.close();
    }
    if (metrics != null) {
      metrics.unregister();
    }
    super.serviceStop();
  }

  /** What Rackwise did so far: offers decided, vetoes, fallbacks, failures. */
  public RackwiseMetrics getRackwiseMetrics() {
    return metrics;
  }

  /** Whether the native core is steering (false after a fallback). */
  public boolean isNativeActive() {
    return core != null && core.isActive();
  }

  /** The engine behind the core: the JNI one; tests substitute engines that fail on purpose. */
  NativeEngine.Factory engineFactory() {
    return NativeEngine.JNI;
  }

  /** Ratios the core learned in an offer, kept across restarts. */
  void learned(List<LearnedRatio> ratios) {
    history.record(ratios);
  }

  /** The learned history as this scheduler holds it now, most recently updated first. */
  List<LearnedRatio> learnedHistory() {
    return history.snapshot();
  }

  // ---- the offer -----------------------------------------------------------------------------

  /**
   * One node offer: ask the core for a plan, then let FairScheduler schedule with it. Held under
   * the scheduler's write lock (FairScheduler takes the same lock inside; it is reentrant) so
   * that the plan, made for the apps the scheduler holds now, is applied to those same apps,
   * also when continuous scheduling offers from a thread of its own.
   */
  @Override
  void attemptScheduling(FSSchedulerNode node) {
    writeLock.lock();
    try {
      if (!offerable(node)) {
        // FairScheduler's own checks skip this offer (and log why).
        super.attemptScheduling(node);
        return;
      }
      if (!core().isActive()) {
        metrics.fellBack();
        super.attemptScheduling(node);
        return;
      }
      currentPlan = planFor(node);
      try {
        super.attemptScheduling(node);
      } finally {
        currentPlan = null;
      }
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Whether FairScheduler would schedule on this node now: it is still tracked (a NODE_UPDATE may
   * have waited while the node was removed) and recovery lets containers be allocated. Only then
   * is the core asked; otherwise FairScheduler's own checks return without scheduling.
   */
  private boolean offerable(FSSchedulerNode node) {
    return node != null && nodeTracker.exists(node.getNodeID())
        && !(rmContext.isWorkPreservingRecoveryEnabled()
            && !rmContext.isSchedulerReadyForAllocatingContainers());
  }

  /**
   * Reports what changed, makes the native offer and checks its plan; null (stock FairScheduler
   * for this offer, and every later one after a failure) when any of it fails.
   */
  private OfferPlan planFor(FSSchedulerNode node) {
    String nodeId = node.getNodeID().toString();
    try {
      if (poller != null) {
        for (JobStats stats : poller.drain()) {
          core().jobStats(stats);
        }
      }
      reportChangedAsks();
    } catch (RuntimeException e) {
      core().failed("encoding the asks and job statistics for the offer of node " + nodeId, e);
      return null;
    }
    OfferPlan plan = core().offer(getClock().getTime(), nodeId, node.getUnallocatedResource(),
        node.getNodeUtilization());
    if (plan == null) {
      return null;
    }
    try {
      plan.checkApps(this::holdsSteerableApp);
      return plan;
    } catch (RuntimeException e) {
      core().failed("checking the plan for node " + nodeId, e);
      return null;
    }
  }

  OfferPlan currentPlan() {
    return currentPlan;
  }

  /**
   * Applying the plan to an app failed: the failure is the core's like any other, and the rest
   * of this offer is FairScheduler's.
   */
  void planFailed(String appId, FSSchedulerNode node, RuntimeException e) {
    currentPlan = null;
    core().failed("applying the plan for node " + node.getNodeID() + " to app " + appId, e);
  }

  RackwiseMetrics metrics() {
    return metrics;
  }

  DecisionCore decisionCore() {
    return core();
  }

  /** The operator's host-class file, or null when none is configured. */
  HostClassFile hostClasses() {
    return hostClasses;
  }

  /** The operator's load feed, or null when none is configured. */
  NetworkLoadFeed feed() {
    return feed;
  }

  /** The current attempt of an app the plan names, for applying the plan; null if gone. */
  FSAppAttempt attemptOf(String appId) {
    return currentAttempt(appId);
  }

  private boolean holdsSteerableApp(String appId) {
    return currentAttempt(appId) instanceof RackwiseAppAttempt;
  }

  private FSAppAttempt currentAttempt(String appId) {
    SchedulerApplication<FSAppAttempt> app = applications.get(ApplicationId.fromString(appId));
    return app == null ? null : app.getCurrentAppAttempt();
  }

  void containerAllocated(RackwiseAppAttempt app, RMContainer container, NodeType locality,
      boolean steered) {
    if (steered) {
      metrics.steeredContainer();
    }
    Priority priority = container.getAllocatedSchedulerKey().getPriority();
    if (priority == null) {
      // Placed for an ask without a priority: the core was never told of that ask (see
      // WireCodec.askRow), nor is it of the container; its finishing is then ignored there.
      return;
    }
    // The scheduler's clock, as every offer's: RMContainerImpl stamps its creation time from
    // the wall clock, and the core measures waits between the two.
    report("a container allocation", () -> core().containerAllocated(
        app.getApplicationId().toString(), container.getContainerId().toString(),
        container.getAllocatedNode().toString(), priority.getPriority(), locality,
        container.getAllocatedResource(), getClock().getTime()));
  }

  /**
   * Tells the core about a change, only while it is active (nothing is built in fallback); a
   * failure while doing so is a native-path failure, never the dispatcher's problem.
   */
  private void report(String what, Runnable toCore) {
    if (!core().isActive()) {
      return;
    }
    try {
      toCore.run();
    } catch (RuntimeException e) {
      core().failed("reporting " + what, e);
    }
  }

  /**
   * The app's asks may have changed: marks it for the next offer. Cheap and thread-safe (it
   * runs on the AM's RPC threads); nothing is built here, and nothing at all in fallback or
   * for an app that is not MapReduce.
   */
  void asksChanged(ApplicationId appId) {
    if (core().isActive() && mapReduceApps.contains(appId)) {
      asksDirty.add(appId);
    }
  }

  /**
   * Sends, for each app marked by {@link #asksChanged}, the rows whose fingerprint changed since
   * they were last sent, and a removing row for each priority that no longer has a row.
   */
  private void reportChangedAsks() {
    for (Iterator<ApplicationId> dirty = asksDirty.iterator(); dirty.hasNext(); ) {
      ApplicationId appId = dirty.next();
      dirty.remove();
      FSAppAttempt current = currentAttempt(appId.toString());
      if (!(current instanceof RackwiseAppAttempt) || !mapReduceApps.contains(appId)) {
        continue;
      }
      RackwiseAppAttempt attempt = (RackwiseAppAttempt) current;
      Map<SchedulerRequestKey, Long> reported =
          reportedRows.computeIfAbsent(appId, id -> new HashMap<>());
      Map<SchedulerRequestKey, Long> now = new HashMap<>();
      for (SchedulerRequestKey key : attempt.allSchedulerKeys()) {
        if (key.getContainerToUpdate() == null) {
          now.put(key, rowFingerprint(attempt, key));
        }
      }
      List<SchedulerRequestKey> changed = new ArrayList<>();
      now.forEach((key, fingerprint) -> {
        if (!fingerprint.equals(reported.get(key))) {
          changed.add(key);
        }
      });
      for (SchedulerRequestKey gone : reported.keySet()) {
        if (!now.containsKey(gone)) {
          changed.add(gone);
        }
      }
      if (changed.isEmpty()) {
        continue;
      }
      reported.keySet().retainAll(now.keySet());
      reported.putAll(now);
      core().asksChanged(() -> asksChangedEvent(attempt, changed));
    }
  }

  /** The event carrying {@code keys}' rows as the attempt holds them now. */
  Event asksChangedEvent(RackwiseAppAttempt attempt, List<SchedulerRequestKey> keys) {
    return WireCodec.asksChanged(attempt, keys);
  }

  /**
   * A fingerprint of one priority's row: its outstanding count and every location's count, so
   * that a change of either sends the row again.
   */
  private static long rowFingerprint(FSAppAttempt attempt, SchedulerRequestKey key) {
    long fingerprint = attempt.getPendingAsk(key, ResourceRequest.ANY).getCount();
    if (fingerprint <= 0) {
      return 0;
    }
    Map<String, ResourceRequest> requests =
        attempt.getAppPlacementAllocator(key).getResourceRequests();
    for (Map.Entry<String, ResourceRequest> request : requests.entrySet()) {
      // Order-independent: the sum of each location's hash with its count.
      fingerprint += Objects.hash(request.getKey(), request.getValue().getNumContainers());
    }
    return fingerprint;
  }

  // ---- lifecycle events the core follows ----------------------------------------------------

  @Override
  public void handle(SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.APP_REMOVED) {
      removeApp((AppRemovedSchedulerEvent) event);
      return;
    }
    super.handle(event);
    switch (event.getType()) {
      case NODE_ADDED:
        reportNode(((NodeAddedSchedulerEvent) event).getAddedRMNode());
        break;
      case NODE_RESOURCE_UPDATE:
        reportNode(((NodeResourceUpdateSchedulerEvent) event).getRMNode());
        break;
      case NODE_REMOVED:
        NodeRemovedSchedulerEvent removed = (NodeRemovedSchedulerEvent) event;
        report("a node removal",
            () -> core().nodeRemoved(removed.getRemovedRMNode().getNodeID().toString()));
        break;
      default:
        break;
    }
  }

  /**
   * The core forgets the app before the scheduler does, under the write lock that offers hold:
   * a plan can then never name an app the scheduler no longer has, which the plan check would
   * take for a core failure. (The app's containers were completed with its attempt, earlier.)
   */
  private void removeApp(AppRemovedSchedulerEvent event) {
    ApplicationId appId = event.getApplicationID();
    writeLock.lock();
    try {
      mapReduceApps.remove(appId);
      asksDirty.remove(appId);
      reportedRows.remove(appId);
      if (poller != null) {
        poller.untrack(appId);
      }
      report("an app removal", () -> core().appRemoved(appId.toString()));
      super.handle(event);
    } finally {
      writeLock.unlock();
    }
  }

  private void reportNode(RMNode rmNode) {
    report("a node", () -> {
      FSSchedulerNode node = getSchedulerNode(rmNode.getNodeID());
      if (node != null) {
        core().nodeAdded(node.getNodeID().toString(), node.getNodeName(), node.getRackName(),
            node.getTotalResource());
        if (hostClasses != null) {
          core().hostFigures(node.getNodeName(), Map.of(HostFigure.CPU_SPEED,
              hostClasses.speedOf(node.getNodeName())), getClock().getTime());
        }
      }
    });
  }

  /** The hosts of the cluster's nodes, for the host-class file's speeds. */
  private Collection<String> nodeHosts() {
    return nodeTracker.getAllNodes().stream().map(FSSchedulerNode::getNodeName).toList();
  }

  /**
   * FairScheduler adds the attempt (there is no factory method for it), then the stock attempt
   * is swapped for a {@link RackwiseAppAttempt} in the same places: the app, its queue and the
   * max-running-apps enforcer. FairScheduler's body is not copied, so the Hadoop lines whose
   * bodies differ (3.3's counts the attempt without the unmanaged-AM flag 3.4's passes) both
   * run their own; see docs/compatibility.md. The ATTEMPT_ADDED event FairScheduler queued
   * names the attempt by id, and is handled after this returns.
   */
  @Override
  protected void addApplicationAttempt(ApplicationAttemptId applicationAttemptId,
      boolean transferStateFromPreviousAttempt, boolean isAttemptRecovering) {
    writeLock.lock();
    try {
      SchedulerApplication<FSAppAttempt> application =
          applications.get(applicationAttemptId.getApplicationId());
      FSAppAttempt previous = application.getCurrentAppAttempt();
      super.addApplicationAttempt(applicationAttemptId, transferStateFromPreviousAttempt,
          isAttemptRecovering);
      FSAppAttempt stock = application.getCurrentAppAttempt();
      FSLeafQueue queue = stock.getQueue();
      String user = stock.getUser();
      FSAppAttempt attempt = new RackwiseAppAttempt(this, applicationAttemptId, user, queue,
          new ActiveUsersManager(getRootQueueMetrics()), rmContext);
      if (transferStateFromPreviousAttempt) {
        attempt.transferStateFromPreviousAttempt(previous);
      }
      boolean runnable = queue.removeApp(stock);
      if (runnable) {
        maxRunningEnforcer.untrackRunnableApp(stock);
      } else {
        maxRunningEnforcer.untrackNonRunnableApp(stock);
      }
      application.setCurrentAppAttempt(attempt);
      queue.addApp(attempt, runnable);
      if (runnable) {
        maxRunningEnforcer.trackRunnableApp(attempt);
      } else {
        maxRunningEnforcer.trackNonRunnableApp(attempt);
      }
      reportApp(applicationAttemptId.getApplicationId(), user, queue);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * The AM's allocate call waits for an attempt being added to be complete.
   * {@link #addApplicationAttempt} swaps FairScheduler's attempt for a {@link RackwiseAppAttempt}
   * after FairScheduler has told the RM that the attempt was added, and the RM answers that at
   * once, on its own dispatcher thread, with the first allocate (the AM container's ask). Landing
   * in the attempt being discarded, that ask would be lost and the AM never start; it happened
   * with real daemons. The swap holds the scheduler's write lock, so taking the read lock
   * orders the call after it; FairScheduler's own allocate does not take the scheduler lock.
   */
  @Override
  public Allocation allocate(ApplicationAttemptId appAttemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    readLock.lock();
    readLock.unlock();
    return super.allocate(appAttemptId, ask, schedulingRequests, release, blacklistAdditions,
        blacklistRemovals, updateRequests);
  }

  /** An app as the RM holds it; its name, type and tags may be null (DecisionCore copes). */
  private void reportApp(ApplicationId appId, String user, FSLeafQueue queue) {
    report("an added app", () -> {
      RMApp rmApp = rmContext.getRMApps().get(appId);
      String type = rmApp == null ? null : rmApp.getApplicationType();
      core().appAdded(appId.toString(), rmApp == null ? null : rmApp.getName(), user,
          queue.getName(), type, rmApp == null ? null : rmApp.getApplicationTags(),
          rmApp == null ? getClock().getTime() : rmApp.getSubmitTime());
      if (JobStatsPoller.MAPREDUCE_APPLICATION_TYPE.equalsIgnoreCase(type)) {
        mapReduceApps.add(appId);
        // A new attempt may start with the asks of the previous one.
        reportedRows.remove(appId);
        asksDirty.add(appId);
        if (poller != null) {
          poller.track(appId);
        }
      }
    });
  }

  /**
   * After a work-preserving restart each NodeManager re-registers with the containers it runs
   * and those it saw finish; FairScheduler rebuilds its containers from them. The core starts
   * from the recovered apps' remaining asks only, so each recovered container is reported to it
   * as the allocation it was (and a finished one as finished too): its per-rack counts (running
   * maps and reduces, where maps finished) are rebuilt from what the RM knows. The node is
   * reported first, as the core places a container by its node's rack. The RM does not recover
   * the locality a container was allocated with: recovered containers count as off-switch.
   */
  @Override
  public void recoverContainersOnNode(List<NMContainerStatus> containerReports, RMNode nm) {
    writeLock.lock();
    try {
      super.recoverContainersOnNode(containerReports, nm);
      if (containerReports == null || containerReports.isEmpty()
          || !rmContext.isWorkPreservingRecoveryEnabled()) {
        return;
      }
      reportNode(nm);
      for (NMContainerStatus recovered : containerReports) {
        reportRecovered(recovered, nm.getNodeID().toString());
      }
    } finally {
      writeLock.unlock();
    }
  }

  /** One recovered container of an app the scheduler holds, unless FairScheduler dropped it. */
  private void reportRecovered(NMContainerStatus recovered, String node) {
    ApplicationId appId =
        recovered.getContainerId().getApplicationAttemptId().getApplicationId();
    boolean finished = recovered.getContainerState() == ContainerState.COMPLETE;
    // A container without a priority is one the core is not told of when allocated either.
    if (recovered.getPriority() == null || applications.get(appId) == null
        || !finished && getRMContainer(recovered.getContainerId()) == null) {
      return;
    }
    String app = appId.toString();
    String container = recovered.getContainerId().toString();
    report("a recovered container", () -> {
      core().containerAllocated(app, container, node, recovered.getPriority().getPriority(),
          NodeType.OFF_SWITCH, recovered.getAllocatedResource(), recovered.getCreationTime());
      if (finished) {
        core().containerFinished(app, container, recovered.getContainerExitStatus(),
            getClock().getTime());
      }
    });
  }

  @Override
  protected void completedContainerInternal(RMContainer rmContainer,
      ContainerStatus containerStatus, RMContainerEventType event) {
    super.completedContainerInternal(rmContainer, containerStatus, event);
    report("a finished container", () -> core().containerFinished(
        rmContainer.getApplicationAttemptId().getApplicationId().toString(),
        rmContainer.getContainerId().toString(), containerStatus.getExitStatus(),
        getClock().getTime()));
  }

  // ---- configuration reloads ------------------------------------------------------------------

  @Override
  public void update() {
    // First, so that FairScheduler computes fair shares from the policies' weights.
    followAllocationReload();
    super.update();
  }

  /**
   * The weights the core's policies set on FairScheduler queues (a market policy sets each
   * child's share this way, and FairScheduler's fair shares, work conservation and fair-share
   * preemption enforce it). Called from the offer, under the write lock.
   */
  private void setPolicyWeights(List<WireResponse.QueueWeight> weights) {
    for (WireResponse.QueueWeight weight : weights) {
      policyWeights.put(weight.queue(), (float) weight.weight());
    }
    installPolicyWeights();
  }

  /**
   * Sets every remembered policy weight on its queue. A queue that does not exist (yet) keeps its
   * weight remembered, is warned about once, and gets it at a later update once it exists.
   */
  private void installPolicyWeights() {
    boolean pending = false;
    for (Map.Entry<String, Float> weight : policyWeights.entrySet()) {
      FSQueue queue = getQueueManager().getQueue(weight.getKey());
      if (queue == null) {
        pending = true;
        if (policyWeightQueuesMissing.add(weight.getKey())) {
          LOG.warn("a Rackwise policy set weight {} on queue {}, which does not exist; it is "
              + "applied once the queue exists", weight.getValue(), weight.getKey());
        }
      } else if (queue.getWeight() != weight.getValue()) {
        queue.setWeights(weight.getValue());
      }
    }
    policyWeightsPending = pending;
  }

  // ---- Dynamic Priority ------------------------------------------------------------------------

  /**
   * Sets a Dynamic Priority budget queue's balance and spending rate; durable in the ledger
   * before the core takes them, at the next offer.
   *
   * @param by who made the change, kept in the ledger
   * @throws IllegalArgumentException a value is negative, not a number or infinite; nothing is
   *     set
   * @throws IOException the ledger could not record it; nothing is set
   */
  public void setDpAccount(String queue, double budget, double spending, String by)
      throws IOException {
    changeDpAccount(queue, current -> new DpLedger.Balance(budget, spending), by, null);
  }

  /**
   * Changes a Dynamic Priority budget queue's account from the balance in force. The change is
   * made durable first, outside the scheduler's lock (the file system may be slow); then, under
   * the lock, so that no interval closes meanwhile, it is made again on the balance in force if
   * an interval moved it since, and handed to the core, which takes it before its next close.
   *
   * @param change the new balance from the one in force
   * @param what the change in words, for the ledger; null when it is a plain set
   * @return the balance in force after the change
   * @throws IllegalArgumentException the new balance is refused; nothing is set
   * @throws IOException the ledger could not record it; nothing is set
   */
  DpLedger.Balance changeDpAccount(String queue, UnaryOperator<DpLedger.Balance> change,
      String by, String what) throws IOException {
    DecisionCore started = core();
    DpLedger.Balance before = dpAccount(queue);
    DpLedger.Balance written = change.apply(before);
    dpLedger.writeChange(queue, written, by, what);
    writeLock.lock();
    try {
      DpLedger.Balance now = dpAccount(queue);
      DpLedger.Balance inForce = now.equals(before) ? written : change.apply(now);
      dpLedger.apply(queue, written, inForce, by, what);
      started.account(queue, inForce.budget(), inForce.spending());
      return inForce;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * A budget queue's account in force: the ledger's, or for a queue without one yet, what its
   * market starts a child with.
   */
  DpLedger.Balance dpAccount(String queue) {
    return dpLedger.balance(queue).orElseGet(() -> {
      String market = queue.contains(".") ? queue.substring(0, queue.lastIndexOf('.')) : "";
      return dpMarkets.getOrDefault(market, DP_CHILD_START);
    });
  }

  /** The port Dynamic Priority's endpoint listens on while this RM is active. */
  int dpHttpPort() {
    return dpHttp.port();
  }

  /** The markets of the allocation file the core last accepted. */
  Map<String, DpLedger.Balance> dpMarkets() {
    return dpMarkets;
  }

  private void followDpMarkets() {
    Map<String, DpLedger.Balance> markets = new TreeMap<>();
    for (QueueExtension queue : parsedQueues) {
      Map<String, String> elements = queue.rackwise();
      if (elements != null && "dp".equals(elements.get("policy"))) {
        markets.put(queue.queue(), new DpLedger.Balance(
            number(elements.get("budget"), DP_CHILD_START.budget()),
            number(elements.get("spending"), DP_CHILD_START.spending())));
      }
    }
    dpMarkets = Map.copyOf(markets);
  }

  /** An element the core has accepted (so it parses), or the default when it is absent. */
  private static double number(String element, double absent) {
    return element == null ? absent : Double.parseDouble(element.trim());
  }

  /** Dynamic Priority's accounts as of the last closed interval or admin change. */
  public DpLedger dpLedger() {
    core();
    return dpLedger;
  }

  @Override
  public void reinitialize(Configuration conf, RMContext rmContext) throws IOException {
    warnUnknownShimKeys(conf);
    super.reinitialize(conf, rmContext);
    followAllocationReload();
  }

  /** At start and reload: the core warns about its own keys when it builds its settings. */
  private static void warnUnknownShimKeys(Configuration conf) {
    ShimSettings.unknownKeyWarnings(conf).forEach(LOG::warn);
  }

  /**
   * FairScheduler reloads fair-scheduler.xml on its own (file watcher, or
   * {@code rmadmin -refreshQueues}); each successful reload installs a new
   * AllocationConfiguration object. When that happens we re-read our elements from the same file
   * and hand them to the core; a refused configuration is logged and the last good one stays.
   * The policies' queue weights are set again, over the configured ones the reload installed.
   */
  private synchronized void followAllocationReload() {
    AllocationConfiguration current = getAllocationConfiguration();
    boolean reloaded = current != followedAllocations;
    // A reload re-reads the configured weights, and a queue a policy weighted may exist by now.
    writeLock.lock();
    try {
      if (reloaded || policyWeightsPending) {
        installPolicyWeights();
      }
    } finally {
      writeLock.unlock();
    }
    if (!reloaded || core == null) {
      return;
    }
    followedAllocations = current;
    try {
      core().reconfigure(engineConfig(rackwiseConf, Collections.emptyList()));
      followDpMarkets();
      LOG.info("Rackwise configuration reloaded");
    } catch (RackwiseConfigException | IOException e) {
      LOG.error("Rackwise configuration reload refused; the previous configuration stays in "
          + "force: {}", e.getMessage());
    }
  }

  /**
   * The core's configuration: the core's yarn-site keys and the {@code <rackwise>} elements of the
   * allocation file FairScheduler uses.
   */
  private io.rackwise.wire.v1.EngineConfig engineConfig(Configuration conf,
      List<LearnedRatio> learned)
      throws RackwiseConfigException, IOException {
    Path file = new AllocationFileLoaderService(this).getAllocationFile(conf);
    List<QueueExtension> queues = Collections.emptyList();
    String source = "(no allocation file)";
    if (file != null) {
      source = file.toString();
      try (InputStream in = file.getFileSystem(conf).open(file)) {
        queues = AllocationFileExtensions.parse(in, source);
      }
    }
    parsedQueues = queues;
    return WireCodec.engineConfig(ShimSettings.coreSettings(conf), queues, learned,
        shimSettings.learnedMaxEntries(), source, getMinimumResourceCapability());
  }
}
