package org.apache.hadoop.yarn.sls.scheduler;

import java.util.Arrays;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;

/**
 * Every NODE_UPDATE the scheduler handled: when it started (ns since the first) and how long the
 * scheduler took; and how many apps it has seen leave (SLS 3.4.3's own count of remaining apps
 * does not go down as its jobs finish). Written by the scheduler's event thread.
 */
public final class NodeUpdateTimes {
  /** One simulation per JVM (SLS keeps static state), so one recorder. */
  public static final NodeUpdateTimes RECORDED = new NodeUpdateTimes();

  private long firstNanos = -1;
  private long[] startedNanos = new long[1 << 16];
  private long[] tookNanos = new long[1 << 16];
  private int count;
  private int appsRemoved;
  private volatile FairScheduler scheduler;

  /** The scheduler of the run, for its own counters once the run is over. */
  void recordScheduler(FairScheduler scheduler) {
    this.scheduler = scheduler;
  }

  public FairScheduler scheduler() {
    return scheduler;
  }

  /** An app left the scheduler (finished, failed or killed). */
  synchronized void appRemoved() {
    appsRemoved++;
  }

  /** How many apps left the scheduler so far. */
  public synchronized int appsRemoved() {
    return appsRemoved;
  }

  synchronized void record(long started, long took) {
    if (firstNanos < 0) {
      firstNanos = started;
    }
    if (count == startedNanos.length) {
      startedNanos = Arrays.copyOf(startedNanos, count * 2);
      tookNanos = Arrays.copyOf(tookNanos, count * 2);
    }
    startedNanos[count] = started - firstNanos;
    tookNanos[count] = took;
    count++;
  }

  /**
   * The figures of the updates that started within {@code windowNanos} of the first one and
   * before {@code endNanos} ({@link System#nanoTime()}).
   */
  public synchronized Window window(long windowNanos, long endNanos) {
    long limit = firstNanos < 0 ? 0 : Math.min(windowNanos, endNanos - firstNanos);
    int n = 0;
    while (n < count && startedNanos[n] < limit) {
      n++;
    }
    long[] took = Arrays.copyOf(tookNanos, n);
    long span = n == 0 ? 0 : Math.min(limit, startedNanos[n - 1] + took[n - 1]);
    return new Window(took, span);
  }

  /** Updates handled within a window: mean, percentiles, rate. */
  public static final class Window {
    private final long[] sortedNanos;
    private final long spanNanos;
    private final double meanNanos;

    Window(long[] took, long spanNanos) {
      this.meanNanos = Arrays.stream(took).average().orElse(0);
      Arrays.sort(took);
      this.sortedNanos = took;
      this.spanNanos = spanNanos;
    }

    public int updates() {
      return sortedNanos.length;
    }

    public double seconds() {
      return spanNanos / 1e9;
    }

    public double perSecond() {
      return spanNanos == 0 ? 0 : updates() / seconds();
    }

    public double meanMicros() {
      return meanNanos / 1e3;
    }

    /** The smallest time at or above which {@code fraction} of the updates took. */
    public double percentileMicros(double fraction) {
      if (sortedNanos.length == 0) {
        return 0;
      }
      int rank = (int) Math.ceil(sortedNanos.length * fraction);
      return sortedNanos[Math.max(rank, 1) - 1] / 1e3;
    }
  }
}
