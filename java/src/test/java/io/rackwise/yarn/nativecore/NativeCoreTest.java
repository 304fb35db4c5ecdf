package io.rackwise.yarn.nativecore;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rackwise.wire.v1.EngineConfig;
import io.rackwise.wire.v1.MapReduceFacts;
import io.rackwise.wire.v1.OfferRequest;
import io.rackwise.wire.v1.QueueSettings;
import io.rackwise.wire.v1.RackwiseElement;
import io.rackwise.yarn.bridge.MapReducePriority;
import io.rackwise.yarn.bridge.WireCodec;
import io.rackwise.yarn.bridge.WireResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every native method of the contract, once each way it can go: against the real library, in a
 * JVM the build runs with {@code -Xcheck:jni}.
 */
class NativeCoreTest {
  private static final byte[] CONFIG =
      WireCodec.engineConfig(Map.of(), List.of(), List.of(), 0, "test", null).toByteArray();
  private static final byte[] REQUEST =
      WireCodec.offerRequest(1, List.of(), "h1:1", Resource.newInstance(1024, 1), null)
          .toByteArray();

  @BeforeAll
  static void loadTheLibrary() {
    NativeLibraryLoader.LoadResult result = NativeLibraryLoader.load();
    if (!NativeLibraryLoaderTest.REQUIRED) {
      assumeTrue(result.loaded(), result::message);
    }
    assertTrue(result.loaded(), result::message);
  }

  @Test
  void createOfferReconfigureDestroy() throws Exception {
    long handle = NativeCore.create(CONFIG);
    assertNotEquals(0, handle);
    try {
      WireResponse response = WireCodec.decodeResponse(NativeCore.offer(handle, REQUEST));
      assertTrue(response.plan().isEmpty());
      // The engine knows no node h1:1, so it names no rack.
      assertNull(response.diagnostics().rack());
      NativeCore.reconfigure(handle, CONFIG);
    } finally {
      NativeCore.destroy(handle);
    }
  }

  /**
   * The shim takes the MapReduce priorities from the core; they must be those Hadoop's
   * {@code RMContainerAllocator} asks with.
   */
  @Test
  void theCoreGivesTheMapReduceApplicationMastersPriorities() throws Exception {
    MapReduceFacts facts = MapReduceFacts.parseFrom(NativeCore.mapreduceFacts());
    assertEquals(List.of(0, 5, 10, 19, 20), List.of(facts.getAmPriority(),
        facts.getRerunMapPriority(), facts.getReducePriority(),
        facts.getOpportunisticMapPriority(), facts.getMapPriority()));
    assertTrue(facts.hasAmPriority(), "0 is sent, not left out as proto3's default");
    assertEquals(20, MapReducePriority.MAP);
    assertTrue(MapReducePriority.isTask(19) && !MapReducePriority.isTask(0));
  }

  @Test
  void everyHandleIsNew() {
    long first = NativeCore.create(CONFIG);
    long second = NativeCore.create(CONFIG);
    NativeCore.destroy(first);
    NativeCore.destroy(second);
    long third = NativeCore.create(CONFIG);
    NativeCore.destroy(third);
    assertTrue(first != second && third != first && third != second);
  }

  @Test
  void aPanicBecomesAnExceptionAndTheJvmCarriesOn() throws Exception {
    NativePanicException panic =
        assertThrows(NativePanicException.class, NativeCore::verifyPanicGuard);
    assertTrue(panic.getMessage().contains("deliberate panic"), panic.getMessage());
    assertTrue(panic.getMessage().contains(".rs:"), "location: " + panic.getMessage());

    assertThrows(NativePanicException.class, NativeCore::verifyPanicGuard);
    try (NativeCore core = NativeCore.open(CONFIG)) {
      assertTrue(WireCodec.decodeResponse(core.offer(REQUEST)).plan().isEmpty());
    }
  }

  @Test
  void malformedBytesAndMissingFieldsAreProtocolErrorsNamingTheField() {
    // A length-delimited field (settings) that claims 5 bytes and has 2.
    byte[] truncated = {0x0a, 0x05, 'a', 'b'};
    assertThrows(NativeProtocolException.class, () -> NativeCore.create(truncated));
    NativeProtocolException nullBytes =
        assertThrows(NativeProtocolException.class, () -> NativeCore.create(null));
    assertTrue(nullBytes.getMessage().contains("null"), nullBytes.getMessage());
    long handle = NativeCore.create(CONFIG);
    try {
      byte[] noNode = OfferRequest.newBuilder().setNowMs(1).build().toByteArray();
      NativeProtocolException missing = assertThrows(NativeProtocolException.class,
          () -> NativeCore.offer(handle, noNode));
      assertEquals("rackwise.wire.v1.OfferRequest.node is missing (required)",
          missing.getMessage());
      NativeProtocolException garbage = assertThrows(NativeProtocolException.class,
          () -> NativeCore.offer(handle, new byte[] {(byte) 0xff, (byte) 0xff}));
      assertTrue(garbage.getMessage().contains("cannot be decoded"), garbage.getMessage());
      NativeProtocolException badConfig = assertThrows(NativeProtocolException.class,
          () -> NativeCore.reconfigure(handle, truncated));
      assertTrue(badConfig.getMessage().startsWith("rackwise.wire.v1.EngineConfig"),
          badConfig.getMessage());
      // A refused message leaves the engine usable.
      assertDoesNotThrow(() -> NativeCore.offer(handle, REQUEST));
    } finally {
      NativeCore.destroy(handle);
    }
  }

  @Test
  void aConfigurationNamingAnUnknownPolicyIsAConfigError() {
    byte[] unknownPolicy = EngineConfig.newBuilder().setSource("test").addQueues(
        QueueSettings.newBuilder().setQueue("root.q").setRackwise(
            RackwiseElement.newBuilder().putChildren("policy", "nope")))
        .build().toByteArray();
    NativeConfigException e = assertThrows(NativeConfigException.class,
        () -> NativeCore.create(unknownPolicy));
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
  }

  @Test
  void aRefusedConfigurationNamesTheKeyTheValueAndTheReason() {
    byte[] bad = EngineConfig.newBuilder()
        .putSettings("yarn.scheduler.rackwise.netsat.threshold", "1.5").build().toByteArray();
    NativeConfigException refused =
        assertThrows(NativeConfigException.class, () -> NativeCore.create(bad));
    assertTrue(refused.getMessage().contains("yarn.scheduler.rackwise.netsat.threshold"),
        refused.getMessage());
    assertTrue(refused.getMessage().contains("1.5"), refused.getMessage());

    long handle = NativeCore.create(CONFIG);
    try {
      assertThrows(NativeConfigException.class, () -> NativeCore.reconfigure(handle, bad));
      assertDoesNotThrow(() -> NativeCore.offer(handle, REQUEST));
    } finally {
      NativeCore.destroy(handle);
    }
  }

  @Test
  void zeroClosedAndMadeUpHandlesAreRefused() {
    long closed = NativeCore.create(CONFIG);
    NativeCore.destroy(closed);
    for (long handle : new long[] {0, closed, 0x7fff_ffff_0000L, -1}) {
      String which = "handle " + handle;
      assertThrows(NativeHandleException.class, () -> NativeCore.offer(handle, REQUEST), which);
      assertThrows(NativeHandleException.class,
          () -> NativeCore.reconfigure(handle, CONFIG), which);
      assertThrows(NativeHandleException.class, () -> NativeCore.destroy(handle), which);
    }
  }

  @Test
  void theOwnerDestroysOnceAndThenRefuses() {
    NativeCore core = NativeCore.open(CONFIG);
    assertFalse(core.isClosed());
    assertDoesNotThrow(() -> core.offer(REQUEST));
    core.close();
    assertTrue(core.isClosed());
    core.close();
    NativeHandleException refused =
        assertThrows(NativeHandleException.class, () -> core.offer(REQUEST));
    assertTrue(refused.getMessage().contains("handle 0"), refused.getMessage());
    assertThrows(NativeHandleException.class, () -> core.reconfigure(CONFIG));
  }

  @Test
  void offersAndReloadsFromSeveralThreadsAreSerializedPerEngine() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (NativeCore core = NativeCore.open(CONFIG)) {
      List<Callable<Integer>> work = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        boolean reloader = t == 0;
        work.add(() -> {
          int done = 0;
          for (int i = 0; i < 200; i++) {
            if (reloader) {
              core.reconfigure(CONFIG);
            } else {
              WireCodec.decodeResponse(core.offer(REQUEST));
            }
            done++;
          }
          return done;
        });
      }
      for (Future<Integer> finished : pool.invokeAll(work)) {
        assertEquals(200, finished.get());
      }
    } finally {
      pool.shutdown();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void everyExceptionIsANativeCoreException() {
    for (Class<?> kind : List.of(NativeConfigException.class, NativeProtocolException.class,
        NativeHandleException.class, NativePanicException.class)) {
      assertTrue(NativeCoreException.class.isAssignableFrom(kind), kind.getName());
    }
    assertTrue(RuntimeException.class.isAssignableFrom(NativeCoreException.class));
  }
}
