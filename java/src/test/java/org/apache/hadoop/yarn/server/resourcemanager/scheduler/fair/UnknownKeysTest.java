package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.testing.CapturedLog;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A misspelt {@code yarn.scheduler.rackwise.*} key is warned about when the ResourceManager
 * starts (before any node is offered), naming the key, its value and the known key it was
 * probably meant to be; for a core key as for a key the shim reads itself.
 */
class UnknownKeysTest {
  private static final Map<String, List<String>> ONE_RACK = new LinkedHashMap<>();

  static {
    ONE_RACK.put("/r1", Arrays.asList("h1"));
  }

  @TempDir
  Path workDir;

  @Test
  void misspeltKeysAreWarnedAboutAtStartNamingTheKeyMeant() throws Exception {
    try (CapturedLog shimLog = CapturedLog.of(RackwiseFairScheduler.class.getName());
        CapturedLog nativeLog = CapturedLog.of("io.rackwise.yarn.native");
        MockRackCluster cluster = new MockRackCluster(RackwiseFairScheduler.class,
            MockRackCluster.allocationFile("<queue name=\"sw\"><rackwise><policy>shufflewatcher"
                + "</policy></rackwise></queue>"),
            Map.of("yarn.scheduler.rackwise.native.required", "true",
                "yarn.scheduler.rackwise.netsat.treshold", "0.7",
                "yarn.scheduler.rackwise.stats.poll-intervall-ms", "900",
                "yarn.scheduler.rackwise.feed.unrelated-thing", "x",
                "yarn.scheduler.rackwise.dp.http.prot", "8090"),
            ONE_RACK, workDir)) {
      RackwiseFairScheduler scheduler = cluster.rackwise();
      assertTrue(scheduler.isNativeActive());
      assertEquals(0, scheduler.getRackwiseMetrics().getOffers(),
          "no offer yet: the warnings below came at start");

      List<String> core = nativeLog.messages(Level.WARN);
      assertTrue(core.stream().anyMatch(m -> m.contains(
          "unknown setting yarn.scheduler.rackwise.netsat.treshold=0.7 is ignored (did you mean "
              + "yarn.scheduler.rackwise.netsat.threshold?)")), core.toString());
      List<String> shim = shimLog.messages(Level.WARN);
      assertTrue(shim.stream().anyMatch(m -> m.startsWith(
          "unknown setting yarn.scheduler.rackwise.stats.poll-intervall-ms=900 is ignored (did "
              + "you mean yarn.scheduler.rackwise.stats.poll-interval-ms?)")), shim.toString());
      assertTrue(shim.stream().anyMatch(m -> m.startsWith(
          "unknown setting yarn.scheduler.rackwise.dp.http.prot=8090 is ignored (did you mean "
              + "yarn.scheduler.rackwise.dp.http.port?)")), shim.toString());
      assertTrue(shim.stream().anyMatch(m -> m.startsWith(
          "unknown setting yarn.scheduler.rackwise.feed.unrelated-thing=x is ignored; Rackwise "
              + "shim keys are: yarn.scheduler.rackwise.native.required")),
          "no key is close enough to suggest: " + shim);
    }
  }
}
