package io.rackwise.yarn.dp;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.dp.DpLedger.Balance;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Dynamic Priority's markets as the scheduler holds them, for the HTTP endpoint: what a user or
 * an admin may read, and the one way an account changes.
 */
public interface DpMarkets {
  /**
   * A budget queue now.
   *
   * @param owner the user the queue belongs to (see {@link #owner})
   * @param share the share in force since the market's last close (0 before one)
   * @param usedUnits resource units held at the market's last close
   * @param usedMb memory the queue holds now, in MB
   * @param pendingMb memory its apps ask for beyond what they hold, in MB
   */
  record QueueState(String queue, String market, String owner, Balance balance, double share,
      double usedUnits, long usedMb, int usedVcores, long pendingMb, int pendingVcores) {}

  /** Each market's latest closed interval, by market queue. */
  Map<String, MarketInterval> latestIntervals();

  /** The market queues (the parents marked {@code dp}). */
  List<String> markets();

  /** Every budget queue: each child of a market that exists or has an account. */
  List<String> budgetQueues();

  /**
   * The budget queue named {@code queue} (with or without the {@code root.} prefix).
   *
   * @throws IllegalArgumentException it is no budget queue (the message says why)
   */
  QueueState queue(String queue);

  /**
   * Changes a budget queue's account, exactly even when an interval closes meanwhile: the
   * change is made on the balance in force. Durable in the ledger before it takes effect.
   *
   * @param change the new balance from the one in force
   * @param by who made the change
   * @param what the change in words, for the ledger
   * @return the balance in force after the change
   * @throws IllegalArgumentException the result is refused (negative, not finite); nothing is set
   * @throws IOException the ledger could not record it; nothing is set
   */
  Balance change(String queue, UnaryOperator<Balance> change, String by, String what)
      throws IOException;

  /**
   * The user a budget queue belongs to: its last name component, as FairScheduler's user
   * placement rules make it (a dot in a user name becomes {@code _dot_}).
   */
  static String owner(String queue) {
    return queue.substring(queue.lastIndexOf('.') + 1).replace("_dot_", ".");
  }

  /** The full name of a queue given with or without {@code root.}. */
  static Optional<String> fullName(String queue) {
    if (queue == null || queue.isBlank()) {
      return Optional.empty();
    }
    return Optional.of(queue.equals("root") || queue.startsWith("root.") ? queue
        : "root." + queue);
  }
}
