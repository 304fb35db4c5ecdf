package io.rackwise.yarn.nativecore;

/**
 * The JNI surface of {@code librackwise} and the one owner of an engine handle.
 *
 * <p>The {@code static native} methods are the boundary contract (docs/boundary.md): every
 * payload is a protobuf message of {@code proto/rackwise.proto} (package {@code rackwise.wire.v1},
 * built and read by {@code io.rackwise.yarn.bridge.WireCodec}; docs/wire.md), and every failure
 * is a {@link NativeCoreException} subclass, never a crash. They are public so the contract can be
 * exercised directly, but the scheduler should hold a {@code NativeCore} instance from
 * {@link #open}: it owns its handle, and {@link #close} destroys the engine exactly once, after
 * which calls pass handle 0 and are refused with {@link NativeHandleException}.
 *
 * <p>Nothing here loads the library; {@link #open} asks {@link NativeLibraryLoader} first.
 */
public final class NativeCore implements NativeEngine {

  /**
   * Builds an engine ({@code Engine::new}).
   *
   * @param engineConfig an {@code EngineConfig} message
   * @return a nonzero handle
   * @throws NativeConfigException the configuration was refused (every problem listed)
   * @throws NativeProtocolException the bytes are no {@code EngineConfig}, or one lacks a
   *     required field (the message names it)
   */
  public static native long create(byte[] engineConfig);

  /**
   * Runs one node offer ({@code Engine::offer}).
   *
   * @param offerRequest an {@code OfferRequest} message
   * @return an {@code OfferResponse} message, including the native log records since the
   *     previous offer
   * @throws NativeHandleException the handle is zero, closed, made up or poisoned
   * @throws NativeProtocolException the bytes are no {@code OfferRequest}, or one lacks a
   *     required field (the message names it)
   */
  public static native byte[] offer(long handle, byte[] offerRequest);

  /**
   * Replaces an engine's configuration ({@code Engine::reconfigure}); when refused, the engine
   * keeps its previous one.
   *
   * @throws NativeConfigException the configuration was refused (every problem listed)
   * @throws NativeProtocolException the bytes are no {@code EngineConfig}
   */
  public static native void reconfigure(long handle, byte[] engineConfig);

  /**
   * The native log records taken since the last drain (by this call or an offer), process-wide:
   * an encoded {@code LogRecords} message. Called right after {@link #create} and {@link
   * #reconfigure}, so that what building a configuration logged reaches the log then.
   */
  public static native byte[] drainLogs();

  /**
   * Drops an engine. An offer already running on another thread finishes first; later calls with
   * the handle are refused.
   */
  public static native void destroy(long handle);

  /**
   * Sets the most verbose level of native log records captured, process-wide: 0 off, 1 error,
   * 2 warn, 3 info, 4 debug, 5 trace. Until it is first called, {@code RACKWISE_NATIVE_LOG_LEVEL}
   * (default info) decides.
   */
  public static native void setMaxLogLevel(int level);

  /**
   * The MapReduce ApplicationMaster's request priorities as the core defines them, an encoded
   * {@code MapReduceFacts} message ({@code MapReducePriority} reads it).
   */
  public static native byte[] mapreduceFacts();

  /** The library's crate version, compared with the version this jar was built with. */
  public static native String version();

  /**
   * Panics inside the native guard on purpose. Throws {@link NativePanicException} when the
   * library is safe to call; anything else means it is not.
   */
  public static native void verifyPanicGuard();

  // Volatile, not guarded: offers must not queue behind a close. An offer that read the handle
  // just before a close still gets a clean NativeHandleException, because the library looks
  // handles up in a table instead of dereferencing them.
  private volatile long handle;

  private NativeCore(long handle) {
    this.handle = handle;
  }

  /**
   * Loads the library if needed and builds an engine owned by the returned object.
   *
   * @throws NativeCoreException the library is not available (the message says why), or a
   *     subclass from {@link #create}
   */
  public static NativeCore open(byte[] engineConfig) {
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    if (!load.loaded()) {
      throw new NativeCoreException(load.message(), load.cause());
    }
    return new NativeCore(create(engineConfig));
  }

  /** {@link #offer(long, byte[])} on this engine. */
  @Override
  public byte[] offer(byte[] offerRequest) {
    return offer(handle, offerRequest);
  }

  /** {@link #reconfigure(long, byte[])} on this engine. */
  @Override
  public void reconfigure(byte[] engineConfig) {
    reconfigure(handle, engineConfig);
  }

  public boolean isClosed() {
    return handle == 0;
  }

  /** Destroys the engine; later calls and later closes do nothing native but refuse. */
  @Override
  public synchronized void close() {
    long owned = handle;
    if (owned == 0) {
      return;
    }
    handle = 0;
    destroy(owned);
  }

  @Override
  public String toString() {
    long current = handle;
    return current == 0 ? "NativeCore[closed]" : "NativeCore[handle " + current + "]";
  }
}
