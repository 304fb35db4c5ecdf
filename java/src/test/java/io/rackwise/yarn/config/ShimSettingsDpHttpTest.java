package io.rackwise.yarn.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The Dynamic Priority endpoint's keys: off unless a port is set, and each value checked. */
class ShimSettingsDpHttpTest {
  @Test
  void theEndpointIsOffUnlessAPortIsSet() throws Exception {
    ShimSettings.DpHttp unset = ShimSettings.from(new Configuration(false)).dpHttp();
    assertFalse(unset.enabled());
    assertEquals(300_000, unset.signatureWindowMs());

    Configuration conf = new Configuration(false);
    conf.set(ShimSettings.DP_HTTP_PORT, "8090");
    conf.set(ShimSettings.DP_ACL_FILE, "/etc/hadoop/dp.acl");
    ShimSettings.DpHttp set = ShimSettings.from(conf).dpHttp();
    assertTrue(set.enabled());
    assertEquals(8090, set.port());
    assertEquals(Paths.get("/etc/hadoop/dp.acl"), set.aclFile());
  }

  @Test
  void badValuesAreRefusedNamingKeyAndValue() {
    Configuration conf = new Configuration(false);
    conf.set(ShimSettings.DP_HTTP_PORT, "http");
    conf.set(ShimSettings.DP_SIGNATURE_WINDOW_MS, "-5");
    String message = assertThrows(RackwiseConfigException.class,
        () -> ShimSettings.from(conf)).getMessage();
    assertTrue(message.contains("yarn.scheduler.rackwise.dp.http.port: value 'http' must be a "
        + "port from 0 to 65535"), message);
    assertTrue(message.contains("yarn.scheduler.rackwise.dp.signature-window-ms: value '-5' "
        + "must be a positive whole number of milliseconds"), message);
    conf.set(ShimSettings.DP_HTTP_PORT, "70000");
    conf.unset(ShimSettings.DP_SIGNATURE_WINDOW_MS);
    assertTrue(assertThrows(RackwiseConfigException.class, () -> ShimSettings.from(conf))
        .getMessage().contains("value '70000'"));
  }
}
