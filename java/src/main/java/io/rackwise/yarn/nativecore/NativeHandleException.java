package io.rackwise.yarn.nativecore;

/**
 * The handle names no usable engine: zero (closed), destroyed, never created, or poisoned by an
 * earlier panic. Never undefined behaviour: handles are ids into a table, not pointers.
 */
public class NativeHandleException extends NativeCoreException {
  private static final long serialVersionUID = 1L;

  /** Called by the native library, which passes only the message. */
  public NativeHandleException(String message) {
    super(message);
  }
}
