package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.wire.v1.Diagnostics;
import io.rackwise.wire.v1.Event;
import io.rackwise.wire.v1.Locality;
import io.rackwise.wire.v1.LogLevel;
import io.rackwise.wire.v1.LogRecord;
import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.Plan;
import io.rackwise.wire.v1.PlanEntry;
import io.rackwise.wire.v1.QueuePlan;
import io.rackwise.yarn.nativecore.ForwardingEngine;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.state.LearnedRatio;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * RackwiseFairScheduler over the real native engine, with one fault armed by a test: from the
 * chosen offer on, the engine (or one of the scheduler's own steps on the native path) fails in
 * the chosen way, once. Everything else is the production scheduler.
 */
public class FaultInjectingScheduler extends RackwiseFairScheduler {
  /** Text every injected failure carries, so tests can tell it from anything else. */
  static final String MARKER = "INJECTED-FAULT";

  enum Fault {
    /** The library really panics (its own guard turns that into NativePanicException). */
    PANIC("the native offer call"),
    /** The call throws something that is not a NativeCoreException. */
    CALL_THROWS("the native offer call"),
    /** The response is no OfferResponse at all. */
    GARBAGE("decoding the response"),
    /** A well-formed plan for an app the scheduler never had. */
    UNKNOWN_APP("checking the plan"),
    /** A well-formed plan for a real app at a priority no MapReduce task has. */
    UNKNOWN_PRIORITY("decoding the response"),
    /** A plan whose locality is not one of YARN's. */
    BAD_LOCALITY("decoding the response"),
    /** Building an app's changed ask rows for the offer throws. */
    ENCODE("encoding a asks_changed event"),
    /** The appender behind the native logger throws on the record the engine returns. */
    LOG_RECORDS("writing the native log records"),
    /** Handing the learned ratios of the response to the store throws. */
    LEARNED("handing learned ratios"),
    /** Looking up a planned app while applying the plan throws. */
    PLAN_APPLICATION("applying the plan"),
    /** The call takes 2 s, then answers normally. */
    BLOCK(null);

    /** How DecisionCore names the stage in its ERROR; null where nothing fails. */
    final String stage;

    Fault(String stage) {
      this.stage = stage;
    }
  }

  private volatile Fault fault;
  /** Offers answered before the armed fault; the engine counts them. */
  private final AtomicInteger offersUntilFault = new AtomicInteger(Integer.MAX_VALUE);
  private final AtomicInteger askRowsInFallback = new AtomicInteger();
  private volatile boolean fired;
  private volatile String knownApp;

  /** The fault strikes at the {@code offers}-th native offer from now (1 = the next). */
  void arm(Fault chosen, int offers) {
    fault = chosen;
    offersUntilFault.set(offers);
  }

  /** Ask changes built after the core fell back: must stay 0. */
  int askChangesBuiltInFallback() {
    return askRowsInFallback.get();
  }

  /** Whether the armed fault has struck (scheduler-side faults strike once the offer is due). */
  private boolean strikes(Fault stage) {
    if (fault != stage || fired || offersUntilFault.get() > 0) {
      return false;
    }
    fired = true;
    return true;
  }

  @Override
  NativeEngine.Factory engineFactory() {
    return config -> new FaultyEngine(NativeCore.open(config));
  }

  @Override
  Event asksChangedEvent(RackwiseAppAttempt attempt, List<SchedulerRequestKey> keys) {
    if (!isNativeActive()) {
      askRowsInFallback.incrementAndGet();
    }
    // The count reaches 0 as the due offer's call returns; the offer after it encodes asks.
    if (strikes(Fault.ENCODE)) {
      throw new IllegalStateException(MARKER + ": ask rows");
    }
    return super.asksChangedEvent(attempt, keys);
  }

  @Override
  FSAppAttempt attemptOf(String appId) {
    if (strikes(Fault.PLAN_APPLICATION)) {
      throw new IllegalStateException(MARKER + ": looking up " + appId);
    }
    return super.attemptOf(appId);
  }

  @Override
  void learned(List<LearnedRatio> ratios) {
    if (strikes(Fault.LEARNED)) {
      throw new IllegalStateException(MARKER + ": learned ratios " + ratios);
    }
    super.learned(ratios);
  }

  /** The real engine, failing at the armed offer in the engine's own ways. */
  private final class FaultyEngine extends ForwardingEngine {
    FaultyEngine(NativeCore real) {
      super(real);
    }

    @Override
    public byte[] offer(byte[] request) {
      rememberAnApp(request);
      boolean due = offersUntilFault.decrementAndGet() == 0;
      Fault now = due ? fault : null;
      if (now == null) {
        return super.offer(request);
      }
      switch (now) {
        case PANIC:
          fired = true;
          NativeCore.verifyPanicGuard();
          throw new AssertionError("verifyPanicGuard returned");
        case CALL_THROWS:
          fired = true;
          throw new IllegalStateException(MARKER + ": the call");
        case GARBAGE:
          fired = true;
          return new byte[] {(byte) 0xde, (byte) 0xad, 0, 'x', '{'};
        case UNKNOWN_APP:
          fired = true;
          return plan("application_1_9999", 20, Locality.LOCALITY_NODE_LOCAL_VALUE);
        case UNKNOWN_PRIORITY:
          fired = true;
          return plan(knownApp, 7, Locality.LOCALITY_NODE_LOCAL_VALUE);
        case BAD_LOCALITY:
          fired = true;
          // A number no Locality has.
          return plan(knownApp, 20, 42);
        case LOG_RECORDS:
          fired = true;
          return response(super.offer(request)).toBuilder().addLogs(LogRecord.newBuilder()
              .setLevel(LogLevel.LOG_LEVEL_ERROR).setTarget("injected").setMessage(MARKER))
              .build().toByteArray();
        case LEARNED:
          return response(super.offer(request)).toBuilder().addLearned(
              io.rackwise.wire.v1.LearnedRatio.newBuilder().setJobName("injected").setRatio(1.5)
                  .setRuns(1)).build().toByteArray();
        case BLOCK:
          fired = true;
          try {
            Thread.sleep(2000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return super.offer(request);
        default:
          // Scheduler-side faults: the offer itself is sound.
          return super.offer(request);
      }
    }

    private void rememberAnApp(byte[] request) {
      for (Event event : events(request)) {
        if (event.hasAppAdded()) {
          knownApp = event.getAppAdded().getApp();
        }
      }
    }

    private byte[] plan(String app, int priority, int locality) {
      return OfferResponse.newBuilder()
          .setPlan(Plan.newBuilder().addQueues(QueuePlan.newBuilder().setQueue("root.sw")
              .addSteered(app).addEntries(PlanEntry.newBuilder().setApp(app)
                  .setPriority(priority).setLocalityValue(locality).setReason("injected"))))
          .setDiagnostics(Diagnostics.newBuilder().setRackUtilization(0)
              .setRackSaturated(false))
          .build().toByteArray();
    }
  }
}
