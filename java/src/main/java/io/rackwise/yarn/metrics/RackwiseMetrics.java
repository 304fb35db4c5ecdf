package io.rackwise.yarn.metrics;

import org.apache.hadoop.metrics2.MetricsException;
import org.apache.hadoop.metrics2.annotation.Metric;
import org.apache.hadoop.metrics2.annotation.Metrics;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.apache.hadoop.metrics2.lib.MutableGaugeInt;
import org.apache.hadoop.metrics2.lib.MutableRate;

/**
 * What Rackwise did, published through Hadoop metrics2 (JMX bean
 * {@code Hadoop:service=ResourceManager,name=RackwiseMetrics}) next to FairScheduler's own.
 */
@Metrics(name = "RackwiseMetrics", about = "Rackwise decision core", context = "yarn")
public class RackwiseMetrics {
  public static final String SOURCE_NAME = "RackwiseMetrics";

  @Metric("Node offers the native core decided")
  MutableCounterLong offers;
  @Metric("Offers whose plan steered at least one queue")
  MutableCounterLong steeredOffers;
  @Metric("Times an app was refused a node because the plan ranked another first")
  MutableCounterLong vetoes;
  @Metric("Containers placed on a plan entry")
  MutableCounterLong steeredContainers;
  @Metric("Apps whose wait tripped the starvation guard, summed over offers")
  MutableCounterLong starvationLifts;
  @Metric("Native path failures (load, encode, call, decode, plan, logs, learned ratios)")
  MutableCounterLong nativeFailures;
  @Metric("Offers scheduled as stock FairScheduler because the native core is unavailable")
  MutableCounterLong fallbackOffers;
  @Metric("Native offer calls slower than DecisionCore.SLOW_OFFER_MS (each logged at WARN)")
  MutableCounterLong slowOffers;
  @Metric("Time of the native offer call")
  MutableRate offerCall;
  @Metric("1 while the native core steers scheduling, 0 in fallback")
  MutableGaugeInt nativeActive;

  /** DRMJS's per-node scores, a source of their own (one record per queue and node). */
  private final DrmjsNodeScores drmjsNodeScores = new DrmjsNodeScores();

  /**
   * Registers a fresh source. A ResourceManager restarted inside one JVM (tests, MockRM) finds
   * the previous instance's source still registered; the new one replaces it.
   */
  public static RackwiseMetrics register() {
    RackwiseMetrics metrics = registerFresh(SOURCE_NAME, null, new RackwiseMetrics());
    registerFresh(DrmjsNodeScores.SOURCE_NAME, DrmjsNodeScores.DESCRIPTION,
        metrics.drmjsNodeScores);
    return metrics;
  }

  /** @param description null for a source whose {@code @Metrics} annotation describes it */
  private static <T> T registerFresh(String name, String description, T source) {
    try {
      return DefaultMetricsSystem.instance().register(name, description, source);
    } catch (MetricsException alreadyRegistered) {
      DefaultMetricsSystem.instance().unregisterSource(name);
      return DefaultMetricsSystem.instance().register(name, description, source);
    }
  }

  public void unregister() {
    DefaultMetricsSystem.instance().unregisterSource(SOURCE_NAME);
    DefaultMetricsSystem.instance().unregisterSource(DrmjsNodeScores.SOURCE_NAME);
  }

  public DrmjsNodeScores drmjsNodeScores() {
    return drmjsNodeScores;
  }

  public void offerDecided(long nanos, boolean steered, int starved) {
    offers.incr();
    offerCall.add(nanos / 1000);
    if (steered) {
      steeredOffers.incr();
    }
    starvationLifts.incr(starved);
  }

  public void vetoed() {
    vetoes.incr();
  }

  public void steeredContainer() {
    steeredContainers.incr();
  }

  public void nativeFailed() {
    nativeFailures.incr();
  }

  public void slowOffer() {
    slowOffers.incr();
  }

  public void fellBack() {
    fallbackOffers.incr();
  }

  public void setNativeActive(boolean active) {
    nativeActive.set(active ? 1 : 0);
  }

  public long getOffers() {
    return offers.value();
  }

  public long getSteeredOffers() {
    return steeredOffers.value();
  }

  public long getVetoes() {
    return vetoes.value();
  }

  public long getSteeredContainers() {
    return steeredContainers.value();
  }

  public long getStarvationLifts() {
    return starvationLifts.value();
  }

  public long getNativeFailures() {
    return nativeFailures.value();
  }

  public long getSlowOffers() {
    return slowOffers.value();
  }

  public long getFallbackOffers() {
    return fallbackOffers.value();
  }

  public boolean isNativeActive() {
    return nativeActive.value() == 1;
  }
}
