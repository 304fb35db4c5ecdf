package io.rackwise.yarn.compat;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HadoopVersionsTest {
  @ParameterizedTest
  @ValueSource(strings = {"3.3.6", "3.3.7-SNAPSHOT", "3.4.0", "3.4.3", "3.4.9"})
  void supportedVersionsStart(String version) {
    assertDoesNotThrow(() -> HadoopVersions.check(version));
  }

  @ParameterizedTest
  @ValueSource(strings = {"3.3.5", "3.2.4", "3.5.0", "2.10.2", "4.0.0", "unknown", ""})
  void otherVersionsAreRefusedByName(String version) {
    IllegalStateException refused =
        assertThrows(IllegalStateException.class, () -> HadoopVersions.check(version));
    assertTrue(refused.getMessage().startsWith(
        "RackwiseFairScheduler does not support Hadoop " + version + " "), refused.getMessage());
    assertTrue(refused.getMessage().contains(HadoopVersions.supported()), refused.getMessage());
    assertTrue(refused.getMessage().contains("yarn.resourcemanager.scheduler.class"),
        "says what to change: " + refused.getMessage());
  }

  @Test
  void supportedLinesReadAsOperatorsWriteThem() {
    assertEquals("3.3.6 or a later 3.3.x and 3.4.x", HadoopVersions.supported());
  }

  /** The Hadoop these tests run on (3.4.3 by default, 3.3.6 with -Dhadoop.version) passes. */
  @Test
  void theHadoopOfThisBuildIsSupported() {
    assertDoesNotThrow(() -> HadoopVersions.check(VersionInfo.getVersion()));
  }
}
