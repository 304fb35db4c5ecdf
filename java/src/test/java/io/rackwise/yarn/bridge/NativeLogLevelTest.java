package io.rackwise.yarn.bridge;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.EngineConfig;
import io.rackwise.wire.v1.Event;
import io.rackwise.yarn.metrics.RackwiseMetrics;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeEngine;
import io.rackwise.yarn.testing.CapturedLog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.junit.jupiter.api.Test;

/**
 * The native log level follows the {@code io.rackwise.yarn.native} logger, as
 * {@code yarn daemonlog -setlevel} changes it at run time: at DEBUG the core's debug records
 * reach the RM's log; back at INFO the library stops producing them (seen on a second engine's
 * raw responses, which no Java logger filters).
 */
class NativeLogLevelTest {
  private static final String NATIVE_LOGGER = "io.rackwise.yarn.native";
  /** What the core logs at debug for asks of an app it does not know. */
  private static final String DEBUG_RECORD = "asks for unknown app application_0_77 ignored";
  private static final Resource FREE = Resource.newInstance(1024, 1);
  private static final EngineConfig CONFIG =
      WireCodec.engineConfig(Map.of(), List.of(), List.of(), 0, "test", null);
  /** One map ask of an app the core was never told about. */
  private static final Event UNKNOWN_ASKS = Event.newBuilder()
      .setAsksChanged(io.rackwise.wire.v1.AsksChanged.newBuilder().setApp("application_0_77")
          .addRows(WireCodec.askRow(MapReducePriority.MAP, 1, FREE, Map.of(), Map.of())))
      .build();
  private static final byte[] RAW_OFFER =
      WireCodec.offerRequest(1, List.of(UNKNOWN_ASKS), "h1:1", FREE, null).toByteArray();

  @Test
  void debugRecordsAppearAndDisappearWithTheLoggersLevel() throws Exception {
    Logger logger = Logger.getLogger(NATIVE_LOGGER);
    Level previous = logger.getLevel();
    RackwiseMetrics metrics = RackwiseMetrics.register();
    logger.setLevel(Level.INFO);
    try (CapturedLog captured = CapturedLog.of(NATIVE_LOGGER);
        DecisionCore core = DecisionCore.start(true, CONFIG, metrics, ratios -> { }, weights -> { },
            intervals -> { },
            NativeEngine.JNI);
        NativeCore raw = NativeCore.open(CONFIG.toByteArray())) {
      offerWithUnknownAsks(core);
      assertFalse(loggedTheDebugRecord(captured), "INFO at start");

      logger.setLevel(Level.DEBUG);
      await().atMost(Duration.ofSeconds(10)).until(() -> {
        offerWithUnknownAsks(core);
        return loggedTheDebugRecord(captured);
      });

      logger.setLevel(Level.INFO);
      // Once the core has read the new level (within a second), the library itself logs no
      // debug record: the raw engine's responses carry none.
      await().atMost(Duration.ofSeconds(10)).until(() -> {
        offerWithUnknownAsks(core);
        return !rawOfferLogsTheDebugRecord(raw);
      });
      for (int i = 0; i < 3; i++) {
        offerWithUnknownAsks(core);
        assertFalse(rawOfferLogsTheDebugRecord(raw), "still INFO natively");
      }
      assertTrue(core.isActive());
    } finally {
      logger.setLevel(previous);
      metrics.unregister();
    }
  }

  /** The shim writes a record as {@code <target>: <message>}. */
  private static boolean loggedTheDebugRecord(CapturedLog captured) {
    return captured.messages(Level.DEBUG).stream().anyMatch(m -> m.endsWith(": " + DEBUG_RECORD));
  }

  private static void offerWithUnknownAsks(DecisionCore core) {
    core.asksChanged(() -> UNKNOWN_ASKS);
    core.offer(1, "h1:1", FREE, null);
  }

  private static boolean rawOfferLogsTheDebugRecord(NativeCore raw) {
    return WireCodec.decodeResponse(raw.offer(RAW_OFFER)).logs().stream()
        .anyMatch(line -> line.message().equals(DEBUG_RECORD));
  }
}
