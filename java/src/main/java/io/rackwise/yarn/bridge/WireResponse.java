package io.rackwise.yarn.bridge;

import io.rackwise.yarn.state.LearnedRatio;
import java.util.List;
import org.slf4j.event.Level;

/**
 * The core's answer to one offer as read from the wire by {@link WireCodec#decodeResponse},
 * every required field checked.
 *
 * @param plan what may be placed on the offered node
 * @param learned ratios learned since the previous response, for the shim to persist
 * @param diagnostics facts about this decision for operators and tests
 * @param logs records the native side logged, for the RM's own log
 * @param queueWeights FairScheduler queue weights the policies want set
 */
public record WireResponse(OfferPlan plan, List<LearnedRatio> learned, Diagnostics diagnostics,
    List<LogLine> logs, List<QueueWeight> queueWeights) {

  /**
   * @param rack the offered node's rack; null when the core does not know the node
   * @param rackUtilization estimated cross-rack link utilization of that rack (0..1)
   * @param rackSaturated whether the rack counted as saturated for this offer
   * @param starved apps whose vetoes the starvation guard lifted in this offer
   */
  public record Diagnostics(String rack, double rackUtilization, boolean rackSaturated,
      List<String> starved) {}

  /** One native log record. */
  public record LogLine(Level level, String target, String message) {}

  /** The weight a policy wants for a FairScheduler queue (full path). */
  public record QueueWeight(String queue, double weight) {}
}
