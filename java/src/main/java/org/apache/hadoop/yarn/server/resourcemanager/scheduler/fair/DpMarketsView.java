package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.bridge.WireResponse.QueueAccount;
import io.rackwise.yarn.dp.DpLedger.Balance;
import io.rackwise.yarn.dp.DpMarkets;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The scheduler's Dynamic Priority markets for the HTTP endpoint: accounts from the ledger,
 * shares from the last closes, and what each queue holds and asks for from FairScheduler's own
 * queues.
 */
final class DpMarketsView implements DpMarkets {
  private final RackwiseFairScheduler scheduler;

  DpMarketsView(RackwiseFairScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public Map<String, MarketInterval> latestIntervals() {
    return scheduler.dpLedger().latestIntervals();
  }

  @Override
  public List<String> markets() {
    return List.copyOf(scheduler.dpMarkets().keySet());
  }

  @Override
  public List<String> budgetQueues() {
    TreeSet<String> queues = new TreeSet<>();
    for (String queue : scheduler.dpLedger().balances().keySet()) {
      if (scheduler.dpMarkets().containsKey(marketOf(queue))) {
        queues.add(queue);
      }
    }
    for (String market : scheduler.dpMarkets().keySet()) {
      FSQueue parent = scheduler.getQueueManager().getQueue(market);
      if (parent != null) {
        parent.getChildQueues().forEach(child -> queues.add(child.getName()));
      }
    }
    return List.copyOf(queues);
  }

  @Override
  public QueueState queue(String name) {
    String queue = DpMarkets.fullName(name).orElseThrow(
        () -> new IllegalArgumentException("no queue named"));
    String market = marketOf(queue);
    if (!scheduler.dpMarkets().containsKey(market)) {
      throw new IllegalArgumentException("queue " + queue + " is not a child of a Dynamic "
          + "Priority market (markets: " + String.join(", ", markets()) + ")");
    }
    FSQueue fsQueue = scheduler.getQueueManager().getQueue(queue);
    if (fsQueue == null && scheduler.dpLedger().balance(queue).isEmpty()) {
      throw new IllegalArgumentException("market " + market + " has no queue " + queue
          + " (a user's queue exists once the allocation file lists it or placement creates "
          + "it for the user's first app)");
    }
    Optional<QueueAccount> closed = Optional.ofNullable(latestIntervals().get(market))
        .flatMap(interval -> interval.queues().stream()
            .filter(line -> line.queue().equals(queue)).findFirst());
    Resource used = fsQueue == null ? Resources.none() : fsQueue.getResourceUsage();
    Resource pending = fsQueue == null ? Resources.none()
        : Resources.componentwiseMax(Resources.subtract(fsQueue.getDemand(), used),
            Resources.none());
    return new QueueState(queue, market, DpMarkets.owner(queue), scheduler.dpAccount(queue),
        closed.map(QueueAccount::share).orElse(0.0), closed.map(QueueAccount::used).orElse(0.0),
        used.getMemorySize(), used.getVirtualCores(), pending.getMemorySize(),
        pending.getVirtualCores());
  }

  @Override
  public Balance change(String queue, UnaryOperator<Balance> change, String by, String what)
      throws IOException {
    return scheduler.changeDpAccount(queue(queue).queue(), change, by, what);
  }

  private static String marketOf(String queue) {
    int dot = queue.lastIndexOf('.');
    return dot < 0 ? "" : queue.substring(0, dot);
  }
}
