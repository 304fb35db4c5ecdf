package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.state.LearnedRatio;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

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
    /** The response is not JSON at all. */
    GARBAGE("decoding the response"),
    /** A well-formed plan for an app the scheduler never had. */
    UNKNOWN_APP("checking the plan"),
    /** A well-formed plan for a real app at a priority no MapReduce task has. */
    UNKNOWN_PRIORITY("decoding the response"),
    /** A plan whose locality is not one of YARN's. */
    BAD_LOCALITY("decoding the response"),
    /** Building an ask table for the offer throws. */
    ENCODE("encoding a asks event"),
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

  private static final ObjectMapper JSON = new ObjectMapper();

  private volatile Fault fault;
  /** Offers answered before the armed fault; the engine counts them. */
  private final AtomicInteger offersUntilFault = new AtomicInteger(Integer.MAX_VALUE);
  private final AtomicInteger askTablesInFallback = new AtomicInteger();
  private volatile boolean fired;
  private volatile String knownApp;

  /** The fault strikes at the {@code offers}-th native offer from now (1 = the next). */
  void arm(Fault chosen, int offers) {
    fault = chosen;
    offersUntilFault.set(offers);
  }

  /** Ask tables built after the core fell back: must stay 0. */
  int askTablesBuiltInFallback() {
    return askTablesInFallback.get();
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
  ArrayNode askTable(RackwiseAppAttempt app) {
    if (!isNativeActive()) {
      askTablesInFallback.incrementAndGet();
    }
    // The count reaches 0 as the due offer's call returns; the offer after it encodes asks.
    if (strikes(Fault.ENCODE)) {
      throw new IllegalStateException(MARKER + ": ask table");
    }
    return super.askTable(app);
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
  private final class FaultyEngine implements NativeEngine {
    private final NativeCore real;

    FaultyEngine(NativeCore real) {
      this.real = real;
    }

    @Override
    public byte[] offer(byte[] request) {
      rememberAnApp(request);
      boolean due = offersUntilFault.decrementAndGet() == 0;
      Fault now = due ? fault : null;
      if (now == null) {
        return real.offer(request);
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
          return plan("application_1_9999", 20, "node_local");
        case UNKNOWN_PRIORITY:
          fired = true;
          return plan(knownApp, 7, "node_local");
        case BAD_LOCALITY:
          fired = true;
          return plan(knownApp, 20, "sideways");
        case LOG_RECORDS:
          fired = true;
          return withExtra(real.offer(request), "logs", JSON.createObjectNode()
              .put("level", "error").put("target", "injected").put("message", MARKER));
        case LEARNED:
          return withExtra(real.offer(request), "learned", JSON.createObjectNode()
              .put("job_name", "injected").put("ratio", 1.5).put("runs", 1));
        case BLOCK:
          fired = true;
          try {
            Thread.sleep(2000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return real.offer(request);
        default:
          // Scheduler-side faults: the offer itself is sound.
          return real.offer(request);
      }
    }

    @Override
    public void reconfigure(byte[] engineConfig) {
      real.reconfigure(engineConfig);
    }

    @Override
    public void close() {
      real.close();
    }

    private void rememberAnApp(byte[] request) {
      try {
        for (JsonNode event : JSON.readTree(request).path("events")) {
          if (event.path("type").asText().equals("app_added")) {
            knownApp = event.path("app").asText();
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private byte[] plan(String app, int priority, String locality) {
      return ("{\"plan\":{\"queues\":[{\"queue\":\"root.sw\",\"steered\":[\"" + app + "\"],"
          + "\"entries\":[{\"app\":\"" + app + "\",\"priority\":" + priority + ",\"locality\":\""
          + locality + "\",\"reason\":\"injected\"}]}]},\"learned\":[],\"diagnostics\":"
          + "{\"rack\":null,\"rack_utilization\":0,\"rack_saturated\":false,\"starved\":[]},"
          + "\"logs\":[]}").getBytes(StandardCharsets.UTF_8);
    }

    private byte[] withExtra(byte[] response, String field, ObjectNode element) {
      try {
        ObjectNode document = (ObjectNode) JSON.readTree(response);
        ((ArrayNode) document.withArray(field)).add(element);
        return JSON.writeValueAsBytes(document);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
