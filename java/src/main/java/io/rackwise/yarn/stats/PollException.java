package io.rackwise.yarn.stats;

/**
 * One poll of one ApplicationMaster gave no usable answer (unreachable, an error status, a
 * redirect, a page that is not the expected JSON). Checked and package-private: it never
 * leaves the poller, which counts it and moves on.
 */
final class PollException extends Exception {
  private static final long serialVersionUID = 1L;

  PollException(String message) {
    super(message);
  }

  PollException(String message, Throwable cause) {
    super(message, cause);
  }
}
