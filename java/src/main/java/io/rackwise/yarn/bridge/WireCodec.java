package io.rackwise.yarn.bridge;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rackwise.wire.v1.Account;
import io.rackwise.wire.v1.AppAdded;
import io.rackwise.wire.v1.AppRemoved;
import io.rackwise.wire.v1.AskRow;
import io.rackwise.wire.v1.AsksChanged;
import io.rackwise.wire.v1.ContainerAllocated;
import io.rackwise.wire.v1.ContainerFinished;
import io.rackwise.wire.v1.Diagnostics;
import io.rackwise.wire.v1.EngineConfig;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.HostFigures;
import io.rackwise.wire.v1.Locality;
import io.rackwise.wire.v1.LogLevel;
import io.rackwise.wire.v1.LogRecords;
import io.rackwise.wire.v1.MarketInterval;
import io.rackwise.wire.v1.NodeScore;
import io.rackwise.wire.v1.PerformanceClass;
import io.rackwise.wire.v1.NodeAdded;
import io.rackwise.wire.v1.NodeOffer;
import io.rackwise.wire.v1.NodeRemoved;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.PlanEntry;
import io.rackwise.wire.v1.QueuePlan;
import io.rackwise.wire.v1.QueueAccount;
import io.rackwise.wire.v1.QueueSettings;
import io.rackwise.wire.v1.QueueWeight;
import io.rackwise.wire.v1.RackLoad;
import io.rackwise.wire.v1.RackwiseElement;
import io.rackwise.wire.v1.Resources;
import io.rackwise.wire.v1.Utilization;
import io.rackwise.yarn.config.AllocationFileExtensions.QueueExtension;
import io.rackwise.yarn.nativecore.NativeProtocolException;
import io.rackwise.yarn.state.LearnedRatio;
import io.rackwise.yarn.stats.JobStats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.slf4j.event.Level;

/**
 * The Java side of the typed wire ({@code proto/rackwise.proto}, docs/wire.md): builds the
 * messages the core receives from Hadoop's objects, and reads the core's answer into an
 * {@link OfferPlan} and the rest of a {@link WireResponse}.
 *
 * <p>proto3 has no required fields, so both directions check them here, as the Rust side does
 * for what it receives: a builder refuses a null or empty id with an {@link
 * IllegalArgumentException}, and {@link #decodeResponse} refuses a response that lacks a field
 * the protocol needs with a {@link NativeProtocolException}. Either names the field from the
 * message root and says why, e.g. {@code rackwise.wire.v1.OfferResponse.plan.queues[0]
 * .entries[2].locality is missing (LOCALITY_UNSPECIFIED; required)}.
 */
public final class WireCodec {
  private static final String PACKAGE = "rackwise.wire.v1.";

  /** The exit codes of a task JVM stopped by a signal: SIGTERM (128 + 15), SIGKILL (128 + 9). */
  private static final int EXIT_SIGTERM = 143;
  private static final int EXIT_SIGKILL = 137;

  private WireCodec() {}

  // ---- configuration --------------------------------------------------------------------------

  /**
   * The engine configuration: yarn-site keys, every queue, the learned history with the most
   * job names it may keep (0: no bound), and the scheduler's minimum allocation (null: none
   * sent, and a market counts containers).
   */
  public static EngineConfig engineConfig(Map<String, String> coreSettings,
      List<QueueExtension> queues, List<LearnedRatio> learned, int learnedMaxEntries,
      String source, Resource minimumAllocation) {
    EngineConfig.Builder config = EngineConfig.newBuilder().putAllSettings(coreSettings)
        .setLearnedMaxEntries(learnedMaxEntries).setSource(source == null ? "" : source);
    if (minimumAllocation != null) {
      config.setMinimumAllocation(resources(minimumAllocation));
    }
    for (QueueExtension queue : queues) {
      QueueSettings.Builder settings = QueueSettings.newBuilder()
          .setQueue(id(queue.queue(), "QueueSettings.queue"));
      if (queue.rackwise() != null) {
        settings.setRackwise(RackwiseElement.newBuilder().putAllChildren(queue.rackwise()));
      }
      config.addQueues(settings);
    }
    for (LearnedRatio ratio : learned) {
      io.rackwise.wire.v1.LearnedRatio.Builder entry = io.rackwise.wire.v1.LearnedRatio
          .newBuilder().setJobName(ratio.jobName()).setRatio(ratio.ratio())
          .setRuns(ratio.runs()).setProfileRuns(ratio.profileRuns());
      ratio.mapMs().ifPresent(entry::setMapMs);
      ratio.reduceMs().ifPresent(entry::setReduceMs);
      config.addLearned(entry);
    }
    return config.build();
  }

  // ---- events ---------------------------------------------------------------------------------

  /** A node as the scheduler holds it: its id, host, rack and whole capacity. */
  public static Event nodeAdded(SchedulerNode node) {
    return nodeAdded(node.getNodeID().toString(), node.getNodeName(), node.getRackName(),
        node.getTotalResource());
  }

  public static Event nodeAdded(String node, String host, String rack, Resource capacity) {
    return Event.newBuilder().setNodeAdded(NodeAdded.newBuilder()
        .setNode(id(node, "NodeAdded.node")).setHost(id(host, "NodeAdded.host"))
        .setRack(id(rack, "NodeAdded.rack")).setCapacity(resources(capacity))).build();
  }

  public static Event nodeRemoved(String node) {
    return Event.newBuilder()
        .setNodeRemoved(NodeRemoved.newBuilder().setNode(id(node, "NodeRemoved.node"))).build();
  }

  /**
   * An app in the leaf queue the scheduler placed it in. {@code rmApp} may be null (an app the
   * RM no longer lists): its name, type and tags are then unknown, and it counts as submitted
   * at {@code nowMs}.
   */
  public static Event appAdded(ApplicationId app, RMApp rmApp, String user, String queue,
      long nowMs) {
    if (rmApp == null) {
      return appAdded(text(app), null, user, queue, null, null, nowMs);
    }
    return appAdded(text(app), rmApp.getName(), user, queue,
        rmApp.getApplicationType(), rmApp.getApplicationTags(), rmApp.getSubmitTime());
  }

  /** An app the RM accepted; name, user, type and tags may be unknown (null). */
  public static Event appAdded(String app, String name, String user, String queue,
      String appType, Collection<String> tags, long submitMs) {
    AppAdded.Builder added = AppAdded.newBuilder().setApp(id(app, "AppAdded.app"))
        .setName(orEmpty(name)).setUser(orEmpty(user)).setQueue(id(queue, "AppAdded.queue"))
        .setAppType(orEmpty(appType)).setSubmitMs(submitMs);
    if (tags != null) {
      added.addAllTags(tags);
    }
    return Event.newBuilder().setAppAdded(added).build();
  }

  public static Event appRemoved(String app) {
    return Event.newBuilder()
        .setAppRemoved(AppRemoved.newBuilder().setApp(id(app, "AppRemoved.app"))).build();
  }

  /**
   * What changed in an app's asks: one row per named key, each replacing that priority's row
   * in the core (a row with nothing outstanding removes it). Keys that update a running
   * container ask for no new container and are left out.
   */
  public static Event asksChanged(SchedulerApplicationAttempt attempt,
      Collection<SchedulerRequestKey> changedKeys) {
    AsksChanged.Builder changed = AsksChanged.newBuilder()
        .setApp(id(text(attempt.getApplicationId()), "AsksChanged.app"));
    for (SchedulerRequestKey key : changedKeys) {
      askRow(attempt, key).ifPresent(changed::addRows);
    }
    return Event.newBuilder().setAsksChanged(changed).build();
  }

  /**
   * The row of one scheduler key as the attempt holds it now: the {@code *} count, the
   * per-container resources and the outstanding count at each rack and host. Empty for a key
   * that updates a running container, and for one without a priority: the RM keeps an ask an
   * AM sent without one, and it asks at no priority the core steers.
   */
  public static Optional<AskRow> askRow(SchedulerApplicationAttempt attempt,
      SchedulerRequestKey key) {
    if (key.getContainerToUpdate() != null || key.getPriority() == null) {
      return Optional.empty();
    }
    int priority = key.getPriority().getPriority();
    PendingAsk any = attempt.getPendingAsk(key, ResourceRequest.ANY);
    if (any.getCount() <= 0) {
      return Optional.of(AskRow.newBuilder().setPriority(priority).setAny(0).build());
    }
    Map<String, Integer> racks = new HashMap<>();
    Map<String, Integer> hosts = new HashMap<>();
    AppPlacementAllocator<?> allocator = attempt.getAppPlacementAllocator(key);
    Map<String, ResourceRequest> requests =
        allocator == null ? Collections.emptyMap() : allocator.getResourceRequests();
    for (Map.Entry<String, ResourceRequest> request : requests.entrySet()) {
      String name = request.getKey();
      int count = request.getValue().getNumContainers();
      // The RM stores whatever resource name an AM sends; an empty one names no host or rack
      // of the cluster (no node can ever satisfy it), so it is no location for the core.
      if (name.isEmpty() || name.equals(ResourceRequest.ANY) || count <= 0) {
        continue;
      }
      // Network topology paths (racks) start with '/', host names never do.
      (name.startsWith("/") ? racks : hosts).put(name, count);
    }
    return Optional.of(askRow(priority, any.getCount(), any.getPerAllocationResource(), racks,
        hosts));
  }

  /** One priority's row; {@code any == 0} removes the row, and then nothing else is sent. */
  public static AskRow askRow(int priority, int any, Resource perContainer,
      Map<String, Integer> racks, Map<String, Integer> hosts) {
    if (any < 0) {
      throw new IllegalArgumentException(PACKAGE + "AskRow.any is " + any
          + " (required: a count >= 0)");
    }
    AskRow.Builder row = AskRow.newBuilder().setPriority(priority).setAny(any);
    if (any > 0) {
      row.setResources(resources(perContainer));
      racks.forEach((rack, count) -> row.addRacks(rack).addRackCounts(count));
      hosts.forEach((host, count) -> row.addHosts(host).addHostCounts(count));
    }
    return row.build();
  }

  /** A container just allocated, at the locality it was allocated with. */
  public static Event containerAllocated(RMContainer container, NodeType locality) {
    return containerAllocated(text(container.getApplicationAttemptId().getApplicationId()),
        text(container.getContainerId()), text(container.getAllocatedNode()),
        container.getAllocatedSchedulerKey().getPriority().getPriority(), locality,
        container.getAllocatedResource(), container.getCreationTime());
  }

  public static Event containerAllocated(String app, String container, String node,
      int priority, NodeType locality, Resource resources, long timeMs) {
    return Event.newBuilder().setContainerAllocated(ContainerAllocated.newBuilder()
        .setApp(id(app, "ContainerAllocated.app"))
        .setContainer(id(container, "ContainerAllocated.container"))
        .setNode(id(node, "ContainerAllocated.node")).setPriority(priority)
        .setLocality(locality(locality)).setResources(resources(resources)).setTimeMs(timeMs))
        .build();
  }

  public static Event containerFinished(RMContainer container, int exitStatus, long timeMs) {
    return containerFinished(text(container.getApplicationAttemptId().getApplicationId()),
        text(container.getContainerId()), exitStatus, timeMs);
  }

  public static Event containerFinished(String app, String container, int exitStatus,
      long timeMs) {
    return Event.newBuilder().setContainerFinished(ContainerFinished.newBuilder()
        .setApp(id(app, "ContainerFinished.app"))
        .setContainer(id(container, "ContainerFinished.container")).setTimeMs(timeMs)
        .setTaskCompleted(taskCompleted(exitStatus))).build();
  }

  /**
   * Whether a container's exit status lets its task count as finished. Preempted, aborted
   * (released unused, or lost with its node), disk-failed, over-memory and RM-killed containers
   * (every other negative status) and failed task processes (other positive codes) did not
   * finish their task: it runs again elsewhere, so it must not teach a task time or place map
   * output. The AM stopping a container (KILLED_BY_APPMASTER, or the JVM's signal codes)
   * counts as finished: MapReduce's AM stops the containers of tasks that succeeded too, so
   * the RM cannot tell them from a killed speculative attempt. INVALID means no status was
   * reported, and is taken as finished, as before statuses were read.
   */
  static boolean taskCompleted(int exitStatus) {
    switch (exitStatus) {
      case ContainerExitStatus.SUCCESS:
      case ContainerExitStatus.KILLED_BY_APPMASTER:
      case ContainerExitStatus.INVALID:
      case EXIT_SIGTERM:
      case EXIT_SIGKILL:
        return true;
      default:
        return false;
    }
  }

  public static Event jobStats(JobStats stats) {
    return Event.newBuilder().setJobStats(io.rackwise.wire.v1.JobStats.newBuilder()
        .setApp(id(stats.appId(), "JobStats.app")).setMapsTotal(stats.mapsTotal())
        .setMapsCompleted(stats.mapsCompleted()).setReducesTotal(stats.reducesTotal())
        .setMapInputBytes(stats.mapInputBytes()).setMapOutputBytes(stats.mapOutputBytes()))
        .build();
  }

  /** Sets a Dynamic Priority budget queue's balance and spending rate. */
  public static Event account(String queue, double budget, double spending) {
    return Event.newBuilder().setAccount(Account.newBuilder()
        .setQueue(id(queue, "Account.queue")).setBudget(budget).setSpending(spending))
        .build();
  }

  public static Event rackLoad(String rack, double utilization, long timeMs) {
    return Event.newBuilder().setRackLoad(RackLoad.newBuilder()
        .setRack(id(rack, "RackLoad.rack")).setUtilization(utilization).setTimeMs(timeMs))
        .build();
  }

  /**
   * Operator figures of one host; each figure may be null (not measured), but not all of them.
   */
  public static Event hostFigures(String host, long timeMs, Double crossRackMbps,
      Double diskUtilization, Double networkUtilization, Double cpuSpeed) {
    HostFigures.Builder figures = HostFigures.newBuilder()
        .setHost(id(host, "HostFigures.host")).setTimeMs(timeMs);
    if (crossRackMbps != null) {
      figures.setCrossRackMbps(crossRackMbps);
    }
    if (diskUtilization != null) {
      figures.setDiskUtilization(diskUtilization);
    }
    if (networkUtilization != null) {
      figures.setNetworkUtilization(networkUtilization);
    }
    if (cpuSpeed != null) {
      figures.setCpuSpeed(cpuSpeed);
    }
    if (!figures.hasCrossRackMbps() && !figures.hasDiskUtilization()
        && !figures.hasNetworkUtilization() && !figures.hasCpuSpeed()) {
      throw new IllegalArgumentException(PACKAGE + "HostFigures of " + host
          + " carries no figure (at least one is required)");
    }
    return Event.newBuilder().setHostFigures(figures).build();
  }

  // ---- the offer ------------------------------------------------------------------------------

  /** The offer of {@code node}: what it has unallocated and its latest utilization report. */
  public static OfferRequest offerRequest(long nowMs, List<Event> events, SchedulerNode node) {
    return offerRequest(nowMs, events, node.getNodeID().toString(),
        node.getUnallocatedResource(), node.getNodeUtilization());
  }

  /** One node offer: the events since the previous one, then the node offered. */
  public static OfferRequest offerRequest(long nowMs, List<Event> events, String node,
      Resource unallocated, ResourceUtilization utilization) {
    NodeOffer.Builder offered = NodeOffer.newBuilder().setNode(id(node, "NodeOffer.node"))
        .setUnallocated(resources(unallocated));
    if (utilization != null) {
      offered.setUtilization(Utilization.newBuilder()
          .setPmemMb(Math.max(0, utilization.getPhysicalMemory()))
          .setCpu(Math.max(0f, utilization.getCPU())));
    }
    return OfferRequest.newBuilder().setNowMs(nowMs).addAllEvents(events).setNode(offered)
        .build();
  }

  /**
   * Reads an {@code OfferResponse}, refusing one that lacks a field the protocol requires.
   *
   * @throws NativeProtocolException the bytes are no {@code OfferResponse}, or a required field
   *     is missing or unusable (the message names it)
   */
  public static WireResponse decodeResponse(byte[] bytes) {
    OfferResponse response;
    try {
      response = OfferResponse.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new NativeProtocolException(PACKAGE + "OfferResponse cannot be decoded: "
          + e.getMessage());
    }
    String at = "OfferResponse";
    if (!response.hasPlan()) {
      throw missing(at + ".plan");
    }
    if (!response.hasDiagnostics()) {
      throw missing(at + ".diagnostics");
    }
    return new WireResponse(plan(response.getPlan(), at + ".plan"),
        learned(response.getLearnedList(), at + ".learned"),
        diagnostics(response.getDiagnostics(), at + ".diagnostics"),
        logs(response.getLogsList(), at + ".logs"),
        weights(response.getQueueWeightsList(), at + ".queue_weights"),
        intervals(response.getIntervalsList(), at + ".intervals"),
        nodeScores(response.getNodeScoresList(), at + ".node_scores"));
  }

  private static List<WireResponse.NodeScore> nodeScores(List<NodeScore> scores, String at) {
    List<WireResponse.NodeScore> list = new ArrayList<>(scores.size());
    for (int i = 0; i < scores.size(); i++) {
      NodeScore score = scores.get(i);
      String scoreAt = at + "[" + i + "]";
      if (!score.hasDiskFromFeed()) {
        throw missing(scoreAt + ".disk_from_feed");
      }
      if (!score.hasNetFromFeed()) {
        throw missing(scoreAt + ".net_from_feed");
      }
      list.add(new WireResponse.NodeScore(received(score.getQueue(), scoreAt + ".queue"),
          received(score.getNode(), scoreAt + ".node"),
          credits(score.hasCpuSpeed(), score.getCpuSpeed(), scoreAt + ".cpu_speed"),
          credits(score.hasCpuFree(), score.getCpuFree(), scoreAt + ".cpu_free"),
          credits(score.hasDisk(), score.getDisk(), scoreAt + ".disk"), score.getDiskFromFeed(),
          credits(score.hasNet(), score.getNet(), scoreAt + ".net"), score.getNetFromFeed(),
          credits(score.hasMapInfluence(), score.getMapInfluence(), scoreAt + ".map_influence"),
          credits(score.hasReduceInfluence(), score.getReduceInfluence(),
              scoreAt + ".reduce_influence"),
          credits(score.hasMapScore(), score.getMapScore(), scoreAt + ".map_score"),
          performanceClass(score.getMapClass(), scoreAt + ".map_class"),
          credits(score.hasReduceScore(), score.getReduceScore(), scoreAt + ".reduce_score"),
          performanceClass(score.getReduceClass(), scoreAt + ".reduce_class")));
    }
    return list;
  }

  /** A class's name as operators read it: High, Medium or Low. */
  private static String performanceClass(PerformanceClass performanceClass, String at) {
    switch (performanceClass) {
      case PERFORMANCE_CLASS_HIGH:
        return "High";
      case PERFORMANCE_CLASS_MEDIUM:
        return "Medium";
      case PERFORMANCE_CLASS_LOW:
        return "Low";
      default:
        throw missing(at);
    }
  }

  private static OfferPlan plan(io.rackwise.wire.v1.Plan plan, String at) {
    Map<String, List<OfferPlan.Entry>> entries = new HashMap<>();
    Map<String, String> steered = new HashMap<>();
    Set<String> orderedByScheduler = new HashSet<>();
    for (int q = 0; q < plan.getQueuesCount(); q++) {
      QueuePlan queuePlan = plan.getQueues(q);
      String queueAt = at + ".queues[" + q + "]";
      String queue = received(queuePlan.getQueue(), queueAt + ".queue");
      if (queuePlan.getSchedulerOrdersApps()) {
        orderedByScheduler.add(queue);
      }
      for (int s = 0; s < queuePlan.getSteeredCount(); s++) {
        steered.put(received(queuePlan.getSteered(s), queueAt + ".steered[" + s + "]"), queue);
      }
      List<OfferPlan.Entry> list = new ArrayList<>(queuePlan.getEntriesCount());
      for (int e = 0; e < queuePlan.getEntriesCount(); e++) {
        PlanEntry entry = queuePlan.getEntries(e);
        String entryAt = queueAt + ".entries[" + e + "]";
        if (!entry.hasPriority()) {
          throw missing(entryAt + ".priority");
        }
        // The plan steers map and reduce tasks only; the AM and other asks stay FairScheduler's.
        if (!MapReducePriority.isTask(entry.getPriority())) {
          throw new NativeProtocolException(PACKAGE + entryAt + ".priority is "
              + entry.getPriority() + " (required: a MapReduce map or reduce priority)");
        }
        list.add(new OfferPlan.Entry(received(entry.getApp(), entryAt + ".app"),
            entry.getPriority(), nodeType(entry.getLocality(), entryAt + ".locality"),
            entry.getReason()));
      }
      entries.put(queue, list);
    }
    return new OfferPlan(entries, steered, orderedByScheduler);
  }

  private static List<LearnedRatio> learned(List<io.rackwise.wire.v1.LearnedRatio> ratios,
      String at) {
    List<LearnedRatio> learned = new ArrayList<>(ratios.size());
    for (int i = 0; i < ratios.size(); i++) {
      io.rackwise.wire.v1.LearnedRatio ratio = ratios.get(i);
      String ratioAt = at + "[" + i + "]";
      if (!ratio.hasRatio()) {
        throw missing(ratioAt + ".ratio");
      }
      if (!ratio.hasRuns()) {
        throw missing(ratioAt + ".runs");
      }
      learned.add(new LearnedRatio(received(ratio.getJobName(), ratioAt + ".job_name"),
          ratio.getRatio(), ratio.getRuns(),
          ratio.hasMapMs() ? OptionalDouble.of(ratio.getMapMs()) : OptionalDouble.empty(),
          ratio.hasReduceMs() ? OptionalDouble.of(ratio.getReduceMs()) : OptionalDouble.empty(),
          ratio.getProfileRuns()));
    }
    return learned;
  }

  /**
   * Reads the log records the library took outside an offer (a {@code LogRecords} message).
   *
   * @throws NativeProtocolException the bytes are no {@code LogRecords}, or a record has no level
   */
  public static List<WireResponse.LogLine> decodeLogs(byte[] bytes) {
    try {
      return logs(LogRecords.parseFrom(bytes).getRecordsList(), "LogRecords.records");
    } catch (InvalidProtocolBufferException e) {
      throw new NativeProtocolException(PACKAGE + "LogRecords cannot be decoded: "
          + e.getMessage());
    }
  }

  private static WireResponse.Diagnostics diagnostics(Diagnostics diagnostics, String at) {
    if (!diagnostics.hasRackSaturated()) {
      throw missing(at + ".rack_saturated");
    }
    List<String> starved = new ArrayList<>(diagnostics.getStarvedCount());
    for (int i = 0; i < diagnostics.getStarvedCount(); i++) {
      starved.add(received(diagnostics.getStarved(i), at + ".starved[" + i + "]"));
    }
    return new WireResponse.Diagnostics(diagnostics.hasRack() ? diagnostics.getRack() : null,
        diagnostics.hasRackUtilization() ? OptionalDouble.of(diagnostics.getRackUtilization())
            : OptionalDouble.empty(),
        diagnostics.getRackSaturated(), starved);
  }

  private static List<WireResponse.LogLine> logs(List<io.rackwise.wire.v1.LogRecord> records,
      String at) {
    List<WireResponse.LogLine> lines = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      io.rackwise.wire.v1.LogRecord record = records.get(i);
      lines.add(new WireResponse.LogLine(level(record.getLevel(), at + "[" + i + "].level"),
          record.getTarget(), record.getMessage()));
    }
    return lines;
  }

  private static List<WireResponse.QueueWeight> weights(List<QueueWeight> weights, String at) {
    List<WireResponse.QueueWeight> list = new ArrayList<>(weights.size());
    for (int i = 0; i < weights.size(); i++) {
      QueueWeight weight = weights.get(i);
      String weightAt = at + "[" + i + "]";
      if (!weight.hasWeight()) {
        throw missing(weightAt + ".weight");
      }
      if (!Double.isFinite(weight.getWeight()) || weight.getWeight() < 0) {
        throw new NativeProtocolException(PACKAGE + weightAt + ".weight is "
            + weight.getWeight() + " (required: a finite weight >= 0)");
      }
      list.add(new WireResponse.QueueWeight(received(weight.getQueue(), weightAt + ".queue"),
          weight.getWeight()));
    }
    return list;
  }

  private static List<WireResponse.MarketInterval> intervals(List<MarketInterval> intervals,
      String at) {
    List<WireResponse.MarketInterval> list = new ArrayList<>(intervals.size());
    for (int i = 0; i < intervals.size(); i++) {
      MarketInterval interval = intervals.get(i);
      String intervalAt = at + "[" + i + "]";
      if (!interval.hasSequence()) {
        throw missing(intervalAt + ".sequence");
      }
      if (!interval.hasEndMs()) {
        throw missing(intervalAt + ".end_ms");
      }
      List<WireResponse.QueueAccount> queues = new ArrayList<>(interval.getQueuesCount());
      for (int q = 0; q < interval.getQueuesCount(); q++) {
        QueueAccount line = interval.getQueues(q);
        String lineAt = intervalAt + ".queues[" + q + "]";
        queues.add(new WireResponse.QueueAccount(received(line.getQueue(), lineAt + ".queue"),
            credits(line.hasBudget(), line.getBudget(), lineAt + ".budget"),
            credits(line.hasSpending(), line.getSpending(), lineAt + ".spending"),
            credits(line.hasUsed(), line.getUsed(), lineAt + ".used"),
            credits(line.hasChargedUnits(), line.getChargedUnits(), lineAt + ".charged_units"),
            credits(line.hasCharge(), line.getCharge(), lineAt + ".charge"),
            credits(line.hasShare(), line.getShare(), lineAt + ".share")));
      }
      list.add(new WireResponse.MarketInterval(
          received(interval.getMarket(), intervalAt + ".market"), interval.getSequence(),
          interval.getEndMs(),
          credits(interval.hasPrice(), interval.getPrice(), intervalAt + ".price"), queues));
    }
    return list;
  }

  /** A required amount of a market (credits, units or a share): finite and not negative. */
  private static double credits(boolean present, double value, String at) {
    if (!present) {
      throw missing(at);
    }
    if (!Double.isFinite(value) || value < 0) {
      throw new NativeProtocolException(PACKAGE + at + " is " + value
          + " (required: finite and >= 0)");
    }
    return value;
  }

  // ---- the small conversions both directions share ----------------------------------------

  private static Resources resources(Resource resource) {
    return Resources.newBuilder().setMemoryMb(Math.max(0, resource.getMemorySize()))
        .setVcores(Math.max(0, resource.getVirtualCores())).build();
  }

  private static Locality locality(NodeType type) {
    switch (type) {
      case NODE_LOCAL:
        return Locality.LOCALITY_NODE_LOCAL;
      case RACK_LOCAL:
        return Locality.LOCALITY_RACK_LOCAL;
      default:
        return Locality.LOCALITY_OFF_SWITCH;
    }
  }

  private static NodeType nodeType(Locality locality, String at) {
    switch (locality) {
      case LOCALITY_NODE_LOCAL:
        return NodeType.NODE_LOCAL;
      case LOCALITY_RACK_LOCAL:
        return NodeType.RACK_LOCAL;
      case LOCALITY_OFF_SWITCH:
        return NodeType.OFF_SWITCH;
      case LOCALITY_UNSPECIFIED:
        throw new NativeProtocolException(PACKAGE + at
            + " is missing (LOCALITY_UNSPECIFIED; required)");
      default:
        throw unknownEnum(at, "Locality");
    }
  }

  private static Level level(LogLevel level, String at) {
    switch (level) {
      case LOG_LEVEL_ERROR:
        return Level.ERROR;
      case LOG_LEVEL_WARN:
        return Level.WARN;
      case LOG_LEVEL_INFO:
        return Level.INFO;
      case LOG_LEVEL_DEBUG:
        return Level.DEBUG;
      case LOG_LEVEL_TRACE:
        return Level.TRACE;
      case LOG_LEVEL_UNSPECIFIED:
        throw new NativeProtocolException(PACKAGE + at
            + " is missing (LOG_LEVEL_UNSPECIFIED; required)");
      default:
        throw unknownEnum(at, "LogLevel");
    }
  }

  /** A value protobuf does not know reads as UNRECOGNIZED; its number is not kept in view. */
  private static NativeProtocolException unknownEnum(String at, String enumName) {
    return new NativeProtocolException(PACKAGE + at + " has an unknown value (not a " + enumName
        + "; a core newer than this shim?)");
  }

  private static NativeProtocolException missing(String at) {
    return new NativeProtocolException(PACKAGE + at + " is missing (required)");
  }

  /** A required id in a received message. */
  private static String received(String value, String at) {
    if (value.isEmpty()) {
      throw new NativeProtocolException(PACKAGE + at
          + " is empty (required: a non-empty name or id)");
    }
    return value;
  }

  /** A required id in a message being built. */
  private static String id(String value, String field) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(PACKAGE + field + " is "
          + (value == null ? "null" : "empty") + " (required: a non-empty name or id)");
    }
    return value;
  }

  /** An id object's text; null stays null, so that {@link #id} refuses it by name. */
  private static String text(Object id) {
    return id == null ? null : id.toString();
  }

  private static String orEmpty(String value) {
    return value == null ? "" : value;
  }
}
