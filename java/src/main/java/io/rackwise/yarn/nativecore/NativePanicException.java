package io.rackwise.yarn.nativecore;

/**
 * Native code panicked; the panic was caught before it could reach the JVM. The message gives the
 * panic's text and source location. The engine that panicked refuses later calls.
 */
public class NativePanicException extends NativeCoreException {
  private static final long serialVersionUID = 1L;

  /** Called by the native library, which passes only the message. */
  public NativePanicException(String message) {
    super(message);
  }
}
