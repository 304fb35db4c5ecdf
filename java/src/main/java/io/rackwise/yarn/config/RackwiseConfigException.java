package io.rackwise.yarn.config;

import java.util.List;

/**
 * A Rackwise configuration was refused. The message lists every problem found, each naming the
 * key or element, the value and the reason, so an operator fixes them all in one pass.
 */
public class RackwiseConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  public RackwiseConfigException(String message) {
    super(message);
  }

  public RackwiseConfigException(String message, Throwable cause) {
    super(message, cause);
  }

  static RackwiseConfigException of(List<String> problems) {
    return new RackwiseConfigException(
        "invalid Rackwise configuration: " + String.join("; ", problems));
  }
}
