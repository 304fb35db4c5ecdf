package io.rackwise.yarn.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.BooleanSupplier;

/** Waiting on background threads in tests, with a generous bound so slow CI stays green. */
public final class Waiting {
  private Waiting() {
  }

  /** Polls {@code condition} every 10 ms for up to 10 s; fails naming {@code what}. */
  public static void awaitTrue(BooleanSupplier condition, String what) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return;
      }
      Thread.sleep(10);
    }
    fail("timed out waiting for " + what);
  }

  /** Whether a live thread of this name exists. */
  public static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }
}
