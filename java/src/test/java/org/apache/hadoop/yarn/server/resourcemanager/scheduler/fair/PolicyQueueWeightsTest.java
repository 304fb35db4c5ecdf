package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.wire.v1.OfferResponse;
import io.rackwise.wire.v1.QueueWeight;
import io.rackwise.yarn.nativecore.ForwardingEngine;
import io.rackwise.yarn.nativecore.NativeEngine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Queue weights are a policy output the shim applies to FairScheduler queues (how a market policy
 * such as Dynamic Priority sets shares): they take effect at the offer that returns them, survive
 * an allocation reload (which re-reads the configured weights), and wait for a queue that does
 * not exist yet. The engine is the real library; the responses additionally carry the weights a
 * policy would set, since no built-in policy sets any yet.
 */
class PolicyQueueWeightsTest {
  private static final String QUEUES = "<queue name=\"a\"><weight>1.0</weight></queue>\n"
      + "<queue name=\"b\"><weight>1.0</weight></queue>";

  /** The production scheduler over the real engine, whose responses name queue weights. */
  public static class WeightingScheduler extends RackwiseFairScheduler {
    static final Map<String, Double> WEIGHTS = Map.of("root.a", 3.0, "root.c", 0.0);

    @Override
    NativeEngine.Factory engineFactory() {
      return config -> {
        return new ForwardingEngine(NativeEngine.JNI.open(config)) {
          @Override
          public byte[] offer(byte[] request) {
            OfferResponse.Builder response = response(super.offer(request)).toBuilder();
            WEIGHTS.forEach((queue, weight) -> response.addQueueWeights(
                QueueWeight.newBuilder().setQueue(queue).setWeight(weight)));
            return response.build().toByteArray();
          }
        };
      };
    }
  }

  @Test
  void weightsTakeEffectSurviveReloadsAndWaitForTheirQueue(@TempDir Path dir) throws Exception {
    try (MockRackCluster cluster = new MockRackCluster(WeightingScheduler.class,
        MockRackCluster.allocationFile(QUEUES), Map.of(), Map.of("/r1", List.of("h1")), dir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      QueueManager queues = scheduler.getQueueManager();
      assertEquals(1.0f, queues.getQueue("root.a").getWeight());

      cluster.heartbeat("h1");
      assertTrue(scheduler.isNativeActive(), "the offer went through the native path");
      assertEquals(3.0f, queues.getQueue("root.a").getWeight(), "set at the offer");
      assertEquals(1.0f, queues.getQueue("root.b").getWeight(), "a queue no policy weighs");
      assertNull(queues.getQueue("root.c"), "c does not exist yet: its weight waits");

      // The operator adds queue c and edits a's configured weight; FairScheduler reloads.
      Files.write(dir.resolve("fair-scheduler.xml"), MockRackCluster.allocationFile(QUEUES
          .replace("<weight>1.0</weight></queue>\n<queue name=\"b\">",
              "<weight>5.0</weight></queue>\n<queue name=\"b\">")
          + "\n<queue name=\"c\"><weight>1.0</weight></queue>")
          .getBytes(StandardCharsets.UTF_8));
      scheduler.reinitialize(cluster.rm.getConfig(), cluster.rm.getRMContext());

      assertEquals(3.0f, queues.getQueue("root.a").getWeight(),
          "the policy's weight, not the reloaded 5.0");
      assertEquals(0.0f, queues.getQueue("root.c").getWeight(), "applied once c exists");
      assertEquals(0L, scheduler.getRackwiseMetrics().getNativeFailures());
    }
  }
}
