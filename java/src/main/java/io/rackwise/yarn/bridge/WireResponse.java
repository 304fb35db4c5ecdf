package io.rackwise.yarn.bridge;

import io.rackwise.yarn.state.LearnedRatio;
import java.util.List;
import java.util.OptionalDouble;
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
 * @param intervals Dynamic Priority market intervals that closed at this offer, for the ledger
 * @param nodeScores DRMJS boards logged at this offer (each queue's nodes together), for metrics
 */
public record WireResponse(OfferPlan plan, List<LearnedRatio> learned, Diagnostics diagnostics,
    List<LogLine> logs, List<QueueWeight> queueWeights, List<MarketInterval> intervals,
    List<NodeScore> nodeScores) {

  /**
   * @param rack the offered node's rack; null when the core does not know the node
   * @param rackUtilization estimated cross-rack link utilization of that rack (0..1); empty
   *     when no queue's policy reads NetSat, which then takes no sample
   * @param rackSaturated whether the rack counted as saturated for this offer
   * @param starved apps whose vetoes the starvation guard lifted in this offer
   */
  public record Diagnostics(String rack, OptionalDouble rackUtilization, boolean rackSaturated,
      List<String> starved) {}

  /** One native log record. */
  public record LogLine(Level level, String target, String message) {}

  /** The weight a policy wants for a FairScheduler queue (full path). */
  public record QueueWeight(String queue, double weight) {}

  /**
   * One closed allocation interval of a Dynamic Priority market.
   *
   * @param market the {@code dp} parent queue
   * @param sequence the interval's number in its market, from 1
   * @param endMs when it closed (the RM's clock)
   * @param price the sum of the spending rates of the children that are active and can pay
   * @param queues every budget queue of the market
   */
  public record MarketInterval(String market, long sequence, long endMs, double price,
      List<QueueAccount> queues) {}

  /**
   * A budget queue at an interval's close.
   *
   * @param budget the balance after this interval's charge
   * @param used resource units held at the close
   * @param chargedUnits those of them within the queue's share
   * @param charge {@code spending × chargedUnits}, at most what the budget held
   * @param share the share for the next interval (its FairScheduler weight)
   */
  public record QueueAccount(String queue, double budget, double spending, double used,
      double chargedUnits, double charge, double share) {}

  /**
   * One node's DRMJS scores in one queue and the inputs behind them (docs/drmjs.md).
   *
   * @param cpuSpeed CPU speed relative to the fastest node's
   * @param cpuFree free share of the node's CPU by its NodeManager's latest report
   * @param diskFromFeed whether the disk term is the feed's (else the observed map slowdown)
   * @param netFromFeed whether the network term is the feed's (else the observed reduce slowdown)
   * @param mapClass {@code High}, {@code Medium} or {@code Low}
   */
  public record NodeScore(String queue, String node, double cpuSpeed, double cpuFree,
      double disk, boolean diskFromFeed, double net, boolean netFromFeed, double mapInfluence,
      double reduceInfluence, double mapScore, String mapClass, double reduceScore,
      String reduceClass) {}
}
