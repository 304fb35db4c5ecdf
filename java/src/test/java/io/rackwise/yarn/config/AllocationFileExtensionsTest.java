package io.rackwise.yarn.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rackwise.yarn.config.AllocationFileExtensions.QueueExtension;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class AllocationFileExtensionsTest {

  private static List<QueueExtension> parse(String xml) throws RackwiseConfigException {
    return AllocationFileExtensions.parse(
        new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)), "alloc.xml");
  }

  @Test
  void queuePathsFollowFairSchedulerAndOnlyRackwiseElementsAreKept() throws Exception {
    List<QueueExtension> queues = parse("<allocations>"
        + "<queue name=\"a\"><weight>2</weight>"
        + "  <rackwise><policy> shufflewatcher </policy><shuffleHeavyRatio>2</shuffleHeavyRatio>"
        + "  </rackwise>"
        + "  <queue name=\"b\"/></queue>"
        + "<pool name=\"old\"/>"
        + "</allocations>");
    assertEquals(3, queues.size());
    assertEquals("root.a", queues.get(0).queue());
    assertEquals(Map.of("policy", "shufflewatcher", "shuffleHeavyRatio", "2"),
        queues.get(0).rackwise());
    assertEquals("root.a.b", queues.get(1).queue());
    assertNull(queues.get(1).rackwise(), "inherits from root.a");
    assertEquals("root.old", queues.get(2).queue());
  }

  @Test
  void theShippedExampleConfiguresRootANasQueueAndAnUnsteeredQueue() throws Exception {
    try (InputStream in = Files.newInputStream(Paths.get("..", "conf", "fair-scheduler.xml"))) {
      List<QueueExtension> queues = AllocationFileExtensions.parse(in, "conf/fair-scheduler.xml");
      assertEquals("root", queues.get(0).queue());
      assertEquals("shufflewatcher", queues.get(0).rackwise().get("policy"));
      assertEquals("root.etl", queues.get(1).queue());
      assertEquals("nas", queues.get(1).rackwise().get("policy"));
      assertEquals("root.adhoc", queues.get(2).queue());
      assertEquals("none", queues.get(2).rackwise().get("policy"));
    }
  }

  @Test
  void structuralMistakesNameTheQueueAndElement() {
    RackwiseConfigException e = assertThrows(RackwiseConfigException.class, () -> parse(
        "<allocations><queue name=\"a\"><rackwise><policy>none</policy><policy>none</policy>"
            + "</rackwise><rackwise/></queue></allocations>"));
    assertTrue(e.getMessage().contains("alloc.xml: queue root.a <rackwise><policy>: appears more "
        + "than once"), e.getMessage());
    assertTrue(e.getMessage().contains("alloc.xml: queue root.a <rackwise>: appears more than "
        + "once"), e.getMessage());
  }

  @Test
  void malformedXmlNamesTheFile() {
    RackwiseConfigException e = assertThrows(RackwiseConfigException.class,
        () -> parse("<allocations><queue name=\"a\">"));
    assertTrue(e.getMessage().startsWith("alloc.xml: cannot be parsed as XML"), e.getMessage());
  }

  @Test
  void externalEntitiesAreRefused() {
    assertThrows(RackwiseConfigException.class, () -> parse(
        "<!DOCTYPE a [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><allocations>&x;</allocations>"));
  }

  @Test
  void shimKeysAreValidatedAndEverythingElseGoesToTheCore() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set(ShimSettings.NATIVE_REQUIRED, "yes");
    conf.set(ShimSettings.STATS_POLL_INTERVAL_MS, "-5");
    RackwiseConfigException e =
        assertThrows(RackwiseConfigException.class, () -> ShimSettings.from(conf));
    assertTrue(e.getMessage().contains(
        "yarn.scheduler.rackwise.native.required: value 'yes' must be true or false"));
    assertTrue(e.getMessage().contains("yarn.scheduler.rackwise.stats.poll-interval-ms: value "
        + "'-5' must be a positive whole number"));

    Configuration ok = new Configuration(false);
    ok.set(ShimSettings.NATIVE_REQUIRED, "true");
    ok.set("yarn.scheduler.rackwise.netsat.threshold", "0.7");
    assertTrue(ShimSettings.from(ok).nativeRequired());
    assertEquals(Map.of("yarn.scheduler.rackwise.netsat.threshold", "0.7"),
        ShimSettings.coreSettings(ok));
  }

  private static final String MARKET = "<queue name=\"users\" type=\"parent\">"
      + "<rackwise><policy>dp</policy></rackwise>";

  @Test
  void aDpMarketTakesListedUserQueuesAndQueuesPerUserFromPlacement() throws Exception {
    parse("<allocations>" + MARKET + "<queue name=\"alice\"/><queue name=\"bob\"/></queue>"
        + "<queuePlacementPolicy><rule name=\"specified\" create=\"false\"/>"
        + "<rule name=\"nestedUserQueue\"><rule name=\"default\" queue=\"users\"/></rule>"
        + "<rule name=\"default\" queue=\"other\"/></queuePlacementPolicy></allocations>");
    parse("<allocations><queue name=\"root\"><rackwise><policy>dp</policy></rackwise></queue>"
        + "<queuePlacementPolicy><rule name=\"user\"/></queuePlacementPolicy></allocations>");
  }

  @Test
  void aDpMarketWhoseChildrenAreNotUserQueuesIsRefusedNamingQueueAndReason() {
    RackwiseConfigException parent = assertThrows(RackwiseConfigException.class, () -> parse(
        "<allocations>" + MARKET + "<queue name=\"alice\"/>"
            + "<queue name=\"team\"><queue name=\"carol\"/></queue></queue></allocations>"));
    assertEquals("invalid Rackwise configuration: alloc.xml: queue root.users.team: a child of "
        + "the Dynamic Priority market "
        + "root.users must be one user's leaf queue, but it is a parent queue (type=\"parent\" "
        + "or child queues), so the users below it would share one budget",
        parent.getMessage());
    RackwiseConfigException shared = assertThrows(RackwiseConfigException.class, () -> parse(
        "<allocations>" + MARKET + "</queue><queuePlacementPolicy>"
            + "<rule name=\"default\" queue=\"users.shared\"/></queuePlacementPolicy>"
            + "</allocations>"));
    assertTrue(shared.getMessage().contains("alloc.xml: <queuePlacementPolicy> rule default "
        + "queue=\"root.users.shared\": puts every user it places into root.users.shared, one "
        + "child of the Dynamic Priority market root.users"), shared.getMessage());
    RackwiseConfigException groups = assertThrows(RackwiseConfigException.class, () -> parse(
        "<allocations><queue name=\"root\"><rackwise><policy>dp</policy></rackwise></queue>"
            + "<queuePlacementPolicy><rule name=\"nestedUserQueue\">"
            + "<rule name=\"primaryGroup\"/></rule></queuePlacementPolicy></allocations>"));
    assertTrue(groups.getMessage().contains("rule primaryGroup: makes one child of root per "
        + "group, but root is a Dynamic Priority market"), groups.getMessage());
  }
}
