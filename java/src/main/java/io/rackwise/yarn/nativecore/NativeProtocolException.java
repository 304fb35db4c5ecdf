package io.rackwise.yarn.nativecore;

/**
 * A message could not be decoded: malformed JSON, an unknown field or a missing one, or a null
 * array. A shim and a library from different builds fail this way instead of silently dropping
 * data.
 */
public class NativeProtocolException extends NativeCoreException {
  private static final long serialVersionUID = 1L;

  /** Called by the native library, which passes only the message. */
  public NativeProtocolException(String message) {
    super(message);
  }
}
