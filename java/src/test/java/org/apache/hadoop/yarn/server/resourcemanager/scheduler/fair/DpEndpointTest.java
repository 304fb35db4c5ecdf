package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.dp.DpClient;
import io.rackwise.yarn.dp.DpLedger.Balance;
import io.rackwise.yarn.dp.DpSignature;
import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.util.ControlledClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic Priority's endpoint on a real HttpServer2, started by a real ResourceManager's
 * scheduler (MockRM) over a {@code dp} market, on a cluster without Kerberos: requests signed
 * with the keys of the ACL file.
 */
class DpEndpointTest {
  private static final String QUEUES = "<queue name=\"users\" type=\"parent\">"
      + "<rackwise><policy>dp</policy></rackwise>"
      + "<queue name=\"alice\"/><queue name=\"bob\"/></queue>";
  private static final List<String> HOSTS = List.of("h1", "h2");
  private static final String ALICE = "root.users.alice";
  private static final String BOB = "root.users.bob";
  private static final String ALICE_KEY = "alice-secret-key-0123456789";
  private static final String BOB_KEY = "bob-secret-key-0123456789";
  private static final String ROOT_KEY = "root-secret-key-0123456789";
  /** Carol is an admin by the YARN admin ACL, her line in the file says only "user". */
  private static final String CAROL_KEY = "carol-secret-key-0123456789";
  private static final String ACL = "# user role key\n"
      + "alice user " + ALICE_KEY + "\n"
      + "bob user " + BOB_KEY + "\n"
      + "ops admin " + ROOT_KEY + "\n"
      + "carol user " + CAROL_KEY + "\n";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;
  private Path aclFile;
  private Path journal;
  private MockRackCluster cluster;
  private RackwiseFairScheduler scheduler;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    aclFile = dir.resolve("dp.acl");
    Files.writeString(aclFile, ACL);
    Path state = dir.resolve("state");
    journal = state.resolve("dp-ledger.journal");
    cluster = new MockRackCluster(RackwiseFairScheduler.class,
        MockRackCluster.allocationFile(QUEUES), Map.of(
            "yarn.scheduler.rackwise.dp.http.port", "0",
            "yarn.scheduler.rackwise.dp.http.host", "127.0.0.1",
            "yarn.scheduler.rackwise.dp.acl-file", aclFile.toString(),
            "yarn.scheduler.rackwise.state.dir", state.toString(),
            "yarn.admin.acl", "carol"),
        Map.of("/r1", HOSTS), dir);
    scheduler = cluster.rackwise();
    base = URI.create("http://127.0.0.1:" + scheduler.dpHttpPort());
  }

  @AfterEach
  void stop() throws IOException {
    cluster.close();
  }

  private DpClient client(String user, String key) throws IOException {
    return new DpClient(base, new Configuration(false), user, key);
  }

  private static JsonNode json(DpClient.Reply reply) throws IOException {
    return JSON.readTree(reply.body());
  }

  private Balance balance(String queue) {
    return scheduler.dpLedger().balance(queue).orElseThrow();
  }

  @Test
  void aUserReadsTheirOwnQueueAndNoOneElses() throws Exception {
    scheduler.setDpAccount(ALICE, 100, 2, "ops");
    MockRackCluster.Job job = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
    cluster.ask(job, 3, HOSTS, 0);
    // FairScheduler's update pass (every 500 ms in a live RM) computes the queue's demand.
    scheduler.update();
    DpClient alice = client("alice", ALICE_KEY);

    DpClient.Reply own = alice.send("GET", "/dp/queue/" + ALICE, null);
    assertEquals(200, own.status(), own.body());
    JsonNode queue = json(own);
    assertEquals(ALICE, queue.get("queue").asText());
    assertEquals("alice", queue.get("owner").asText());
    assertEquals(100.0, queue.get("budget").asDouble());
    assertEquals(2.0, queue.get("spending").asDouble());
    assertEquals(MockRackCluster.TASK_MB, queue.get("used").get("memory_mb").asLong(),
        "her AM's container");
    assertEquals(3L * MockRackCluster.TASK_MB, queue.get("pending").get("memory_mb").asLong(),
        "the three maps she asks for");

    DpClient.Reply other = alice.send("GET", "/dp/queue/" + BOB, null);
    assertEquals(403, other.status(), other.body());
    assertEquals("queue", json(other).get("element").asText());
    assertTrue(json(other).get("reason").asText().contains("belongs to user 'bob'"),
        other.body());

    JsonNode listed = json(alice.send("GET", "/dp/queues", null));
    assertEquals(List.of(ALICE), names(listed), "a user lists only their own queue");
    JsonNode all = json(client("ops", ROOT_KEY).send("GET", "/dp/queues", null));
    assertEquals(List.of(ALICE, BOB), names(all), "an admin lists every budget queue");
  }

  private static List<String> names(JsonNode queues) {
    return java.util.stream.StreamSupport.stream(queues.get("queues").spliterator(), false)
        .map(queue -> queue.get("queue").asText()).toList();
  }

  @Test
  void aWrongKeyAReplayAndAnExpiredTimestampAreEachRefused() throws Exception {
    DpClient.Reply wrongKey = client("alice", BOB_KEY).send("GET", "/dp/queue/" + ALICE, null);
    assertEquals(401, wrongKey.status(), wrongKey.body());
    assertEquals(DpSignature.SIGNATURE_HEADER, json(wrongKey).get("element").asText());

    DpClient.Reply unknownUser = client("mallory", ALICE_KEY).send("GET", "/dp/price", null);
    assertEquals(401, unknownUser.status(), unknownUser.body());

    long now = System.currentTimeMillis();
    String path = "/dp/queue/" + ALICE;
    assertEquals(200, raw("GET", path, "alice", ALICE_KEY, now, "").status());
    DpClient.Reply replay = raw("GET", path, "alice", ALICE_KEY, now, "");
    assertEquals(401, replay.status(), replay.body());
    assertTrue(json(replay).get("reason").asText().contains("a replay"), replay.body());

    // Ten minutes old: outside the five-minute window even though never used before.
    DpClient.Reply expired = raw("GET", path, "bob", BOB_KEY, now - 600_000, "");
    assertEquals(401, expired.status(), expired.body());
    assertEquals(DpSignature.TIMESTAMP_HEADER, json(expired).get("element").asText());
    assertTrue(json(expired).get("reason").asText().contains("more than the 300000 ms"),
        expired.body());

    // A body changed after signing (a spending rate raised in transit) fails the signature.
    String signedBody = "{\"queue\":\"" + ALICE + "\",\"spending\":1}";
    long later = System.currentTimeMillis() + 1;
    String signature = DpSignature.sign(ALICE_KEY, "POST", "/dp/spending", "alice", later,
        signedBody.getBytes(StandardCharsets.UTF_8));
    DpClient.Reply tampered = send("POST", "/dp/spending", "alice", later, signature,
        "{\"queue\":\"" + ALICE + "\",\"spending\":9}");
    assertEquals(401, tampered.status(), tampered.body());
    assertTrue(scheduler.dpLedger().balance(ALICE).isEmpty(), "nothing was set");
  }

  @Test
  void anAdminAddsBudgetRecordedWithTheirNameAndAUserCannot() throws Exception {
    scheduler.setDpAccount(ALICE, 100, 1, "ops");
    DpClient.Reply refused = client("alice", ALICE_KEY).send("POST", "/dp/budget",
        "{\"queue\":\"" + ALICE + "\",\"add\":1000}");
    assertEquals(403, refused.status(), refused.body());
    assertTrue(json(refused).get("reason").asText().contains("takes an admin"), refused.body());
    assertEquals(100.0, balance(ALICE).budget(), "nothing added");

    DpClient.Reply added = client("ops", ROOT_KEY).send("POST", "/dp/budget",
        "{\"queue\":\"" + ALICE + "\",\"add\":50}");
    assertEquals(200, added.status(), added.body());
    assertEquals(150.0, json(added).get("budget").asDouble());
    assertEquals(new Balance(150, 1), balance(ALICE));
    // Carol is an admin by yarn.admin.acl alone.
    DpClient.Reply byAcl = client("carol", CAROL_KEY).send("POST", "/dp/budget",
        "{\"queue\":\"users.bob\",\"add\":7.5}");
    assertEquals(200, byAcl.status(), byAcl.body());
    assertEquals(new Balance(7.5, 1), balance(BOB), "bob had no account: 0 credits, rate 1");

    List<JsonNode> records = journalRecords();
    JsonNode last = records.get(records.size() - 1);
    assertEquals("carol", last.get("by").asText());
    assertEquals("budget +7.5", last.get("change").asText());
    JsonNode opsAdd = records.get(records.size() - 2);
    assertEquals("ops", opsAdd.get("by").asText());
    assertEquals("budget +50.0", opsAdd.get("change").asText());
    assertEquals(150.0, opsAdd.get("accounts").get(0).get("budget").asDouble());
  }

  @Test
  void aUserSetsTheirOwnSpendingAndTheMarketPricesIt() throws Exception {
    ControlledClock clock = new ControlledClock();
    clock.setTime(1_000_000);
    scheduler.setClock(clock);
    DpClient ops = client("ops", ROOT_KEY);
    for (String queue : List.of(ALICE, BOB)) {
      assertEquals(200, ops.send("POST", "/dp/budget",
          "{\"queue\":\"" + queue + "\",\"add\":1000}").status());
    }
    DpClient bob = client("bob", BOB_KEY);
    assertEquals(403, bob.send("POST", "/dp/spending",
        "{\"queue\":\"" + ALICE + "\",\"spending\":0}").status(), "not his queue");
    DpClient.Reply set = bob.send("POST", "/dp/spending",
        "{\"queue\":\"" + BOB + "\",\"spending\":3}");
    assertEquals(200, set.status(), set.body());
    assertEquals(new Balance(1000, 3), balance(BOB));
    assertEquals("bob", journalRecords().get(journalRecords().size() - 1).get("by").asText());

    MockRackCluster.Job alice = cluster.submit("a", ALICE, "alice", Set.of(), "h1");
    MockRackCluster.Job bobJob = cluster.submit("b", BOB, "bob", Set.of(), "h2");
    clock.tickMsec(20_000);
    cluster.heartbeat("h1", alice, bobJob);
    JsonNode price = json(bob.send("GET", "/dp/price", null)).get("markets").get(0);
    assertEquals("root.users", price.get("market").asText());
    assertEquals(4.0, price.get("price").asDouble(), "alice's 1 and bob's 3, set over HTTP");
    JsonNode bobQueue = json(bob.send("GET", "/dp/queue/" + BOB, null));
    assertEquals(0.75, bobQueue.get("share").asDouble(), 1e-12);
  }

  @Test
  void badNumbersAndUnknownQueuesAreRefusedNamingTheValueAndNothingIsApplied()
      throws Exception {
    scheduler.setDpAccount(ALICE, 100, 1, "ops");
    int recordsBefore = journalRecords().size();
    DpClient ops = client("ops", ROOT_KEY);
    assertRefused(ops.send("POST", "/dp/spending",
        "{\"queue\":\"" + ALICE + "\",\"spending\":-1}"), 400, "spending", "-1");
    assertRefused(ops.send("POST", "/dp/spending",
        "{\"queue\":\"" + ALICE + "\",\"spending\":\"fast\"}"), 400, "spending", "\"fast\"");
    assertRefused(ops.send("POST", "/dp/budget",
        "{\"queue\":\"" + ALICE + "\",\"add\":-50}"), 400, "add", "-50");
    assertRefused(ops.send("POST", "/dp/budget",
        "{\"queue\":\"" + ALICE + "\",\"add\":1e400}"), 400, "add", "Infinity");
    assertRefused(ops.send("POST", "/dp/budget", "{\"queue\":\"" + ALICE + "\""), 400, "body",
        "{\"queue\":\"" + ALICE + "\"");
    assertRefused(ops.send("POST", "/dp/budget",
        "{\"queue\":\"root.users.nobody\",\"add\":5}"), 404, "queue", "root.users.nobody");
    assertRefused(ops.send("POST", "/dp/budget",
        "{\"queue\":\"root.default.alice\",\"add\":5}"), 404, "queue", "root.default.alice");
    assertRefused(client("alice", ALICE_KEY).send("GET", "/dp/queue/root.users.alice.x", null),
        403, "queue", "root.users.alice.x");
    assertEquals(new Balance(100, 1), balance(ALICE), "the last good account stays");
    assertEquals(recordsBefore, journalRecords().size(), "nothing reached the ledger");
  }

  @Test
  void aMalformedAclFileIsRefusedAndTheLastGoodOneStays() throws Exception {
    DpClient alice = client("alice", ALICE_KEY);
    assertEquals(200, alice.send("GET", "/dp/price", null).status());
    // Line 3 has no key; the new user dave on line 2 must not get in either.
    Files.writeString(aclFile, "alice user " + ALICE_KEY + "\ndave admin dave-secret-key-012345"
        + "\nbob user\n");
    assertEquals(200, alice.send("GET", "/dp/price", null).status(), "alice still works");
    assertEquals(401, client("dave", "dave-secret-key-012345").send("GET", "/dp/price", null)
        .status(), "the refused file's users are not let in");
    assertEquals(200, client("bob", BOB_KEY).send("GET", "/dp/price", null).status(),
        "bob's good line stays");
    // Fixed: the new file takes over, and bob, no longer in it, is out.
    Files.writeString(aclFile, "alice user " + ALICE_KEY + "\ndave admin dave-secret-key-012345"
        + "\n");
    assertEquals(200, client("dave", "dave-secret-key-012345").send("GET", "/dp/price", null)
        .status());
    assertEquals(401, client("bob", BOB_KEY).send("GET", "/dp/price", null).status());
  }

  @Test
  void theCommandLineSignsWithTheUsersKeyFile() throws Exception {
    Path keyFile = dir.resolve("ops.key");
    Files.writeString(keyFile, ROOT_KEY + "\n");
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    String user = org.apache.hadoop.security.UserGroupInformation.getCurrentUser()
        .getShortUserName();
    // The CLI signs as the user running it: give that user the admin key for this test.
    Files.writeString(aclFile, ACL + user + " admin " + ROOT_KEY + "\n");
    String[] args = {"dp", "--url", base.toString(), "--key-file", keyFile.toString(), "budget",
        ALICE, "25"};
    int status = io.rackwise.yarn.dp.DpCliAccess.run(args, out, err);
    assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
    assertEquals(25.0, JSON.readTree(out.toString(StandardCharsets.UTF_8)).get("budget")
        .asDouble());
    assertEquals(new Balance(25, 1), balance(ALICE));
    String[] bad = {"dp", "--url", base.toString(), "--key-file", keyFile.toString(),
        "spending", ALICE, "-3"};
    assertEquals(1, io.rackwise.yarn.dp.DpCliAccess.run(bad, out, err), "refused");
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("\"element\":\"spending\""),
        err.toString(StandardCharsets.UTF_8));
    assertEquals(2, io.rackwise.yarn.dp.DpCliAccess.run(new String[] {"dp", "spend"}, out, err),
        "a usage error");
  }

  private static void assertRefused(DpClient.Reply reply, int status, String element,
      String value) throws IOException {
    assertEquals(status, reply.status(), reply.body());
    JsonNode error = json(reply);
    assertEquals(element, error.get("element").asText(), reply.body());
    assertEquals(value, error.get("value").asText(), reply.body());
    assertTrue(!error.get("reason").asText().isEmpty(), reply.body());
  }

  private List<JsonNode> journalRecords() throws IOException {
    List<JsonNode> records = new java.util.ArrayList<>();
    for (String line : Files.readAllLines(journal)) {
      records.add(JSON.readTree(line));
    }
    return records;
  }

  /** A request signed by hand, with a timestamp of the test's choosing. */
  private DpClient.Reply raw(String method, String path, String user, String key,
      long timestamp, String body) throws IOException {
    return send(method, path, user, timestamp, DpSignature.sign(key, method, path, user,
        timestamp, body.getBytes(StandardCharsets.UTF_8)), body);
  }

  private DpClient.Reply send(String method, String path, String user, long timestamp,
      String signature, String body) throws IOException {
    HttpURLConnection connection =
        (HttpURLConnection) new URL(base.resolve(path).toString()).openConnection();
    connection.setRequestMethod(method);
    connection.setRequestProperty(DpSignature.USER_HEADER, user);
    connection.setRequestProperty(DpSignature.TIMESTAMP_HEADER, Long.toString(timestamp));
    connection.setRequestProperty(DpSignature.SIGNATURE_HEADER, signature);
    if (!body.isEmpty()) {
      connection.setDoOutput(true);
      try (OutputStream out = connection.getOutputStream()) {
        out.write(body.getBytes(StandardCharsets.UTF_8));
      }
    }
    int status = connection.getResponseCode();
    byte[] reply = (status < 400 ? connection.getInputStream() : connection.getErrorStream())
        .readAllBytes();
    return new DpClient.Reply(status, new String(reply, StandardCharsets.UTF_8));
  }
}
