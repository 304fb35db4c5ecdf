package io.rackwise.yarn.nativecore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rackwise.wire.v1.EngineConfig;
import io.rackwise.wire.v1.QueueSettings;
import io.rackwise.yarn.bridge.WireCodec;
import io.rackwise.yarn.bridge.WireResponse;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The typed wire's native methods ({@code createProto}, {@code offerProto},
 * {@code reconfigureProto}) each way they can go, against the real library in the JVM the build
 * runs with {@code -Xcheck:jni}.
 */
class NativeCoreProtoTest {
  private static final byte[] CONFIG =
      WireCodec.engineConfig(Map.of(), List.of(), List.of(), "test").toByteArray();
  private static final Resource FREE = Resource.newInstance(1024, 1);

  @BeforeAll
  static void loadTheLibrary() {
    NativeLibraryLoader.LoadResult result = NativeLibraryLoader.load();
    if (!NativeLibraryLoaderTest.REQUIRED) {
      assumeTrue(result.loaded(), result::message);
    }
    assertTrue(result.loaded(), result::message);
  }

  private static byte[] request(String node) {
    return WireCodec.offerRequest(1, List.of(), node, FREE, null).toByteArray();
  }

  @Test
  void createOfferReconfigureDestroy() {
    long handle = NativeCore.createProto(CONFIG);
    assertNotEquals(0, handle);
    try {
      WireResponse response = WireCodec.decodeResponse(NativeCore.offerProto(handle,
          request("h1:1")));
      assertTrue(response.plan().isEmpty());
      // The engine knows no node h1:1, so it names no rack.
      assertNull(response.diagnostics().rack());
      NativeCore.reconfigureProto(handle, CONFIG);
    } finally {
      NativeCore.destroy(handle);
    }
    assertThrows(NativeHandleException.class, () -> NativeCore.offerProto(handle,
        request("h1:1")));
  }

  @Test
  void aConfigurationTheCoreRefusesIsAConfigError() {
    byte[] unknownPolicy = EngineConfig.newBuilder().setSource("test").addQueues(
        QueueSettings.newBuilder().setQueue("root.q").setRackwise(
            io.rackwise.wire.v1.RackwiseElement.newBuilder().putChildren("policy", "nope")))
        .build().toByteArray();
    NativeConfigException e = assertThrows(NativeConfigException.class,
        () -> NativeCore.createProto(unknownPolicy));
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
  }

  @Test
  void aMissingRequiredFieldIsAProtocolErrorNamingIt() {
    long handle = NativeCore.createProto(CONFIG);
    try {
      byte[] noNode = io.rackwise.wire.v1.OfferRequest.newBuilder().setNowMs(1).build()
          .toByteArray();
      NativeProtocolException e = assertThrows(NativeProtocolException.class,
          () -> NativeCore.offerProto(handle, noNode));
      assertEquals("rackwise.wire.v1.OfferRequest.node is missing (required)", e.getMessage());
      NativeProtocolException garbage = assertThrows(NativeProtocolException.class,
          () -> NativeCore.offerProto(handle, new byte[] {(byte) 0xff, (byte) 0xff}));
      assertTrue(garbage.getMessage().contains("cannot be decoded"), garbage.getMessage());
      NativeProtocolException badConfig = assertThrows(NativeProtocolException.class,
          () -> NativeCore.reconfigureProto(handle, new byte[] {0x0a, 0x05, 'a', 'b'}));
      assertTrue(badConfig.getMessage().startsWith("rackwise.wire.v1.EngineConfig"),
          badConfig.getMessage());
    } finally {
      NativeCore.destroy(handle);
    }
  }

  @Test
  void aNullArrayIsAProtocolError() {
    assertThrows(NativeProtocolException.class, () -> NativeCore.createProto(null));
  }
}
