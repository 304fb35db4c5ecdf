package io.rackwise.yarn.nativecore;

/**
 * A call into the native Rackwise library failed. The subclasses say how, one per error kind of
 * the boundary contract (docs/boundary.md); the native side throws them with a single message.
 * Unchecked, because every failure has the same answer on the heartbeat path: fall back to stock
 * FairScheduler, or stop if native is required.
 */
public class NativeCoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public NativeCoreException(String message) {
    super(message);
  }

  public NativeCoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
