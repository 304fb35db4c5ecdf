package io.rackwise.yarn.testing;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting on background threads in tests, with a generous bound so slow CI stays green. */
public final class Waiting {
  private Waiting() {
  }

  /** Polls {@code condition} every 10 ms for up to 10 s; fails naming {@code what}. */
  public static void awaitTrue(BooleanSupplier condition, String what) {
    await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
        .until(condition::getAsBoolean);
  }

  /** Whether a live thread of this name exists. */
  public static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }
}
