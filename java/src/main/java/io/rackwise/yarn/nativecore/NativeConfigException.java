package io.rackwise.yarn.nativecore;

/**
 * The core refused an engine configuration. The message lists every problem, each naming the
 * element or key, the value found and the reason; the engine (if any) keeps its previous
 * configuration.
 */
public class NativeConfigException extends NativeCoreException {
  private static final long serialVersionUID = 1L;

  /** Called by the native library, which passes only the message. */
  public NativeConfigException(String message) {
    super(message);
  }
}
