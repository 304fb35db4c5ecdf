package io.rackwise.yarn.nativecore;

/**
 * The engine behind {@code DecisionCore}: encoded bytes in, encoded bytes out. {@link NativeCore}
 * is the production implementation (JNI into {@code librackwise}); tests put engines behind this
 * interface that fail in chosen ways, to prove the shim falls back to stock FairScheduler
 * whatever the engine does. Kept at the level of bytes so that it does not depend on how
 * messages are encoded.
 */
public interface NativeEngine extends AutoCloseable {

  /** Builds an engine from an encoded {@code EngineConfig}. */
  @FunctionalInterface
  interface Factory {
    /**
     * @throws NativeConfigException the configuration was refused
     * @throws NativeCoreException the engine cannot be built
     */
    NativeEngine open(byte[] engineConfig);
  }

  /** The production factory: {@link NativeCore#open}. */
  Factory JNI = NativeCore::open;

  /** One node offer: an encoded {@code OfferRequest} in, an encoded {@code OfferResponse} out. */
  byte[] offer(byte[] offerRequest);

  /** Replaces the configuration; when refused, the previous one stays. */
  void reconfigure(byte[] engineConfig);

  /** Drops the engine; later calls are refused. */
  @Override
  void close();
}
