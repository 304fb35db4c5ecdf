package io.rackwise.yarn.dp;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Dynamic Priority's accounts as the ResourceManager holds them: each budget queue's balance and
 * spending rate, set by an admin and moved by the charges of every interval the core closes.
 * The core computes the charges; this book follows them, so that what it holds is what the core
 * holds. Written from the scheduler's offer and from an admin's call, read from anywhere.
 */
public final class DpLedger {

  /** A budget queue's balance (credits) and spending rate (credits per unit per interval). */
  public record Balance(double budget, double spending) {}

  private final Map<String, Balance> balances = new TreeMap<>();
  /** Each market's latest closed interval. */
  private final Map<String, MarketInterval> latest = new TreeMap<>();

  /**
   * Checks an admin's account values.
   *
   * @throws IllegalArgumentException a value is negative, not a number or infinite (the message
   *     names the queue, the value and why); nothing is set
   */
  public static void check(String queue, double budget, double spending) {
    checkAmount(queue, "budget", budget);
    checkAmount(queue, "spending", spending);
  }

  private static void checkAmount(String queue, String what, double value) {
    if (!Double.isFinite(value) || value < 0) {
      throw new IllegalArgumentException("Dynamic Priority account of queue " + queue + ": "
          + what + " " + value + " refused (required: a finite number >= 0)");
    }
  }

  /** Sets a queue's balance and spending rate, as checked by {@link #check}. */
  public synchronized void set(String queue, double budget, double spending) {
    check(queue, budget, spending);
    balances.put(queue, new Balance(budget, spending));
  }

  /** Follows the intervals the core closed: each queue's balance after its charge. */
  public synchronized void record(List<MarketInterval> intervals) {
    for (MarketInterval interval : intervals) {
      for (QueueAccount line : interval.queues()) {
        balances.put(line.queue(), new Balance(line.budget(), line.spending()));
      }
      latest.put(interval.market(), interval);
    }
  }

  public synchronized Optional<Balance> balance(String queue) {
    return Optional.ofNullable(balances.get(queue));
  }

  /** The market's latest closed interval, if any closed yet. */
  public synchronized Optional<MarketInterval> latestInterval(String market) {
    return Optional.ofNullable(latest.get(market));
  }
}
