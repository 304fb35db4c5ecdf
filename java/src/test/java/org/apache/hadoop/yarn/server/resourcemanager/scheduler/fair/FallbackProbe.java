package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import io.rackwise.yarn.metrics.RackwiseMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Runs in a child JVM whose classpath lacks the native library (see {@link NativeFallbackTest}):
 * starts a ResourceManager with RackwiseFairScheduler, runs one MapReduce-shaped job to its first
 * map container (three heartbeats after its AM runs), and prints what happened. Exit 0 when the job was scheduled, 2 when the
 * ResourceManager refused to start (the message is printed).
 */
public final class FallbackProbe {
  private FallbackProbe() {
  }

  public static void main(String[] args) throws Exception {
    String required = args[0];
    Path dir = Files.createTempDirectory("rackwise-fallback");
    MockRackCluster cluster;
    try {
      cluster = new MockRackCluster(RackwiseFairScheduler.class,
          MockRackCluster.allocationFile(
              "<queue name=\"sw\"><rackwise><policy>shufflewatcher</policy></rackwise></queue>"),
          Map.of("yarn.scheduler.rackwise.native.required", required),
          Map.of("/r1", List.of("h1"), "/r2", List.of("h2")), dir);
    } catch (Exception refused) {
      StringBuilder messages = new StringBuilder();
      for (Throwable t = refused; t != null; t = t.getCause()) {
        messages.append(t.getMessage()).append('\n');
      }
      System.out.println("REFUSED " + messages);
      System.exit(2);
      return;
    }
    try (MockRackCluster running = cluster) {
      MockRackCluster.Job job =
          running.submit("probe", "sw", "alice", Collections.emptySet(), "h1");
      running.ask(job, 1, List.of("h2"), 0);
      RackwiseMetrics metrics = running.rackwise().getRackwiseMetrics();
      long beforeThreeHeartbeats = metrics.getFallbackOffers();
      running.heartbeat("h2", job);
      running.heartbeat("h1", job);
      running.heartbeat("h2", job);
      System.out.println("SCHEDULED containers=" + job.containers.size()
          + " nativeActive=" + running.rackwise().isNativeActive()
          + " nativeFailures=" + metrics.getNativeFailures()
          + " fallbackOffersBefore=" + beforeThreeHeartbeats
          + " fallbackOffersForThreeHeartbeats="
          + (metrics.getFallbackOffers() - beforeThreeHeartbeats));
    }
    System.exit(0);
  }
}
