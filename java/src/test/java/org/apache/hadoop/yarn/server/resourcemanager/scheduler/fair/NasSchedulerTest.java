package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.MAP;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.MockRackCluster.REDUCE;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairSchedulerTest.ratio;
import static org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairSchedulerTest.saturateRackOne;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Container;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NAS inside a real ResourceManager (MockRM) on three racks, native core required: MTS keeps each
 * node's predicted map output under TrafficThreshold except where the paper lets it exceed (a
 * user past its skip bound with nothing that fits), and a congested rack receives only
 * shuffle-light reduces until a heavy job's skip bound expires.
 */
class NasSchedulerTest {
  private static final Map<String, List<String>> THREE_RACKS = new LinkedHashMap<>();

  static {
    THREE_RACKS.put("/r1", Arrays.asList("h1", "h2"));
    THREE_RACKS.put("/r2", Arrays.asList("h3", "h4"));
    THREE_RACKS.put("/r3", Arrays.asList("h5", "h6"));
  }

  /** Predicted output of one map of a job whose ratio is hinted, with 128 MiB splits. */
  private static final double SPLIT_MB = 128;

  @TempDir
  Path workDir;

  private MockRackCluster start(String nasElements, String... settings) throws Exception {
    Map<String, String> extra = new LinkedHashMap<>();
    extra.put("yarn.scheduler.rackwise.native.required", "true");
    for (int i = 0; i < settings.length; i += 2) {
      extra.put(settings[i], settings[i + 1]);
    }
    String allocation = MockRackCluster.allocationFile(
        "<queue name=\"nas\"><rackwise><policy>nas</policy>" + nasElements
            + "</rackwise></queue>\n<queue name=\"plain\"/>");
    return new MockRackCluster(RackwiseFairScheduler.class, allocation, extra, THREE_RACKS,
        workDir);
  }

  /**
   * 100 Mbit/s rack links, so {@link RackwiseFairSchedulerTest#saturateRackOne}'s fetch congests
   * racks 1 and 2; NetSat samples on every offer, unsmoothed, as the stepped heartbeats come
   * milliseconds apart.
   */
  private MockRackCluster startCongestible(String nasElements) throws Exception {
    return start(nasElements, "yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "100",
        "yarn.scheduler.rackwise.netsat.period-ms", "0",
        "yarn.scheduler.rackwise.netsat.smoothing", "1");
  }

  /** Predicted map output (MiB) now running on {@code host}: maps × ratio × split size. */
  private static double mapOutputOn(String host, Map<MockRackCluster.Job, Double> ratios) {
    double total = 0;
    for (Map.Entry<MockRackCluster.Job, Double> job : ratios.entrySet()) {
      for (Container c : job.getKey().containers) {
        if (c.getPriority().getPriority() == MAP && c.getNodeId().getHost().equals(host)) {
          total += job.getValue() * SPLIT_MB;
        }
      }
    }
    return total;
  }

  private static int total(MockRackCluster.Job... jobs) {
    return Arrays.stream(jobs).mapToInt(job -> job.containers.size()).sum();
  }

  /**
   * TrafficThreshold 400 MiB; "big" maps write 128 MiB, "small" ones 12.8 MiB, all with their
   * splits on h1. MTS fills h1 with 3 big maps and 1 small one (396.8 MiB); then nothing fits
   * and the queue is skipped. After {@code maxSkips} skipped heartbeats the paper lets the
   * data-local map that exceeds the space least through (Algorithm 2, lines 13-16), and that
   * node-local map restarts the count. NAS's own order across the user's jobs
   * ({@code kindOrder=priority}), whose closest fit this is: by default FairScheduler's app order
   * would pick between the two jobs.
   */
  @Test
  void perNodeMapOutputStaysUnderTrafficThresholdUntilTheSkipBoundLetsTheSmallestThrough()
      throws Exception {
    try (MockRackCluster cluster = start("<maxSkips>2</maxSkips><kindOrder>priority</kindOrder>",
        "yarn.scheduler.rackwise.nas.traffic-threshold-mb", "400")) {
      MockRackCluster.Job big = cluster.submit("big", "nas", "alice", ratio(1.0), "h6");
      MockRackCluster.Job small = cluster.submit("small", "nas", "alice", ratio(0.1), "h6");
      cluster.ask(big, 10, List.of("h1"), 0);
      cluster.ask(small, 10, List.of("h1"), 0);
      Map<MockRackCluster.Job, Double> ratios = new LinkedHashMap<>();
      ratios.put(big, 1.0);
      ratios.put(small, 0.1);

      List<String> placed = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        int before = total(big, small);
        cluster.heartbeat("h1", big, small);
        double output = mapOutputOn("h1", ratios);
        if (total(big, small) == before) {
          placed.add("skip");
        } else {
          placed.add(String.format("%.1f", output));
        }
      }
      assertEquals(List.of("128.0", "256.0", "384.0", "396.8", "skip", "skip", "409.6", "skip",
          "skip", "422.4"), placed,
          "under 400 MiB until two skips; then one smallest data-local map; then skips again");
      assertEquals(0, cluster.rackwise().getRackwiseMetrics().getNativeFailures());
    }
  }

  /**
   * A shuffle-heavy and a shuffle-light job of the NAS queue both want reduces while racks 1
   * and 2 carry a cross-rack fetch of the unsteered queue (100 Mbit/s links): those racks get
   * only the light job's reduces; the heavy ones go to the uncongested rack 3.
   */
  @Test
  void congestedRacksReceiveOnlyShuffleLightReduces() throws Exception {
    try (MockRackCluster cluster = startCongestible("<maxWaitMs>600000</maxWaitMs>")) {
      saturateRackOne(cluster);
      MockRackCluster.Job light = lightJob(cluster);
      MockRackCluster.Job heavy = heavyJob(cluster);
      for (int round = 0; round < 3; round++) {
        for (String host : List.of("h1", "h2", "h3")) {
          cluster.heartbeat(host, light, heavy);
        }
      }
      assertEquals(List.of(REDUCE, REDUCE), light.priorities(), "light reduces, anywhere");
      assertEquals(List.of(), heavy.priorities(), "nothing heavy on congested racks 1 and 2");

      cluster.heartbeat("h5", light, heavy);
      assertEquals(List.of(REDUCE), heavy.priorities(), "the heavy reduce on rack 3");
      assertEquals("h5", heavy.containers.get(0).getNodeId().getHost());
    }
  }

  /** With a bound of 3 skips, a heavy reduce reaches a congested rack on the 4th offer. */
  @Test
  void aHeavyReduceReachesACongestedRackOnlyAfterItsSkipBound() throws Exception {
    try (MockRackCluster cluster = startCongestible("<maxSkips>3</maxSkips>")) {
      saturateRackOne(cluster);
      MockRackCluster.Job heavy = heavyJob(cluster);
      List<Integer> heavyAfter = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        cluster.heartbeat("h2", heavy);
        heavyAfter.add(heavy.containers.size());
      }
      assertEquals(List.of(0, 0, 0, 1), heavyAfter);
      assertEquals(REDUCE, heavy.priorities().get(0));
    }
  }

  /** One map with ratio 0.001 (0.1 MiB of shuffle) whose split is on rack 3; two reduces. */
  private static MockRackCluster.Job lightJob(MockRackCluster cluster) throws Exception {
    MockRackCluster.Job light = cluster.submit("light", "nas", "alice", ratio(0.001), "h6");
    cluster.ask(light, 1, List.of("h5"), 2);
    return light;
  }

  /**
   * Four maps with ratio 3 (1.5 GiB of shuffle) whose splits are on rack 3, so MTS keeps them
   * off racks 1 and 2 (and holds them there while those racks are congested); two reduces.
   */
  private static MockRackCluster.Job heavyJob(MockRackCluster cluster) throws Exception {
    MockRackCluster.Job heavy = cluster.submit("heavy", "nas", "alice", ratio(3), "h6");
    cluster.ask(heavy, 4, List.of("h5"), 2);
    return heavy;
  }
}
