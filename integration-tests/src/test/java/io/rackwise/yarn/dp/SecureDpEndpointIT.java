package io.rackwise.yarn.dp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.KerberizedHttps;
import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.dp.DpLedger.Balance;
import java.io.File;
import java.net.URI;
import java.security.PrivilegedExceptionAction;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic Priority's endpoint on a Kerberos cluster with HTTPS only: the caller is who SPNEGO
 * (Hadoop's authentication filter with the cluster's {@code hadoop.http.authentication.*}
 * settings, against a {@link MiniKdc}) says, over TLS from the
 * cluster's ssl-server.xml, through the CLI's own {@link DpClient} ({@code AuthenticatedURL}).
 * A request without SPNEGO is refused by the filter. The markets are a small table in memory:
 * what is tested is who gets in, which the MockRM tests of the signed path do not cover. Own
 * JVM (failsafe forks per IT class): it sets the JVM-wide Kerberos login.
 */
class SecureDpEndpointIT {
  private static final String ALICE = "root.users.alice";
  private static final String BOB = "root.users.bob";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  File workDir;

  private KerberizedHttps secure;
  private DpHttpServer server;

  /** Two budget queues in memory. */
  private static final class TableMarkets implements DpMarkets {
    private final Map<String, Balance> accounts = new TreeMap<>(Map.of(
        ALICE, new Balance(100, 1), BOB, new Balance(200, 2)));

    @Override
    public Map<String, MarketInterval> latestIntervals() {
      return Map.of();
    }

    @Override
    public List<String> markets() {
      return List.of("root.users");
    }

    @Override
    public List<String> budgetQueues() {
      return List.copyOf(accounts.keySet());
    }

    @Override
    public synchronized QueueState queue(String name) {
      String queue = DpMarkets.fullName(name).orElseThrow();
      Balance balance = accounts.get(queue);
      if (balance == null) {
        throw new IllegalArgumentException("no queue " + queue);
      }
      return new QueueState(queue, "root.users", DpMarkets.owner(queue), balance, 0, 0, 0, 0,
          0, 0);
    }

    @Override
    public synchronized Balance change(String queue, UnaryOperator<Balance> change, String by,
        String what) {
      Balance after = change.apply(accounts.get(queue));
      accounts.put(queue, after);
      return after;
    }
  }

  @AfterEach
  void stopEverything() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (secure != null) {
      secure.close();
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void theCallerIsWhoKerberosSaysOverHttps() throws Exception {
    secure = KerberizedHttps.start(workDir, SecureDpEndpointIT.class, "HTTP/localhost", "alice",
        "ops");
    Configuration conf = secure.conf;
    String realm = secure.realm;
    File keytab = secure.keytab;
    conf.set("hadoop.http.authentication.type", "kerberos");
    conf.set("hadoop.http.authentication.kerberos.principal", "HTTP/localhost@" + realm);
    conf.set("hadoop.http.authentication.kerberos.keytab", keytab.getPath());
    conf.set("hadoop.http.authentication.simple.anonymous.allowed", "false");
    conf.set(YarnConfiguration.YARN_ADMIN_ACL, "ops");
    conf.set("hadoop.security.auth_to_local", "RULE:[1:$1] RULE:[2:$1] DEFAULT");
    UserGroupInformation.setConfiguration(conf);

    server = DpHttpServer.start(new ShimSettings.DpHttp(0, "localhost", null, 300_000), conf,
        new TableMarkets());
    URI base = URI.create("https://localhost:" + server.port());

    assertEquals(401, secure.statusWithoutSpnego(base.resolve("/dp/queues").toString()),
        "the SPNEGO filter refuses a request that does not authenticate");

    DpClient.Reply own = as("alice", keytab, realm, () -> new DpClient(base, conf, "alice", null)
        .send("GET", "/dp/queue/" + ALICE, null));
    assertEquals(200, own.status(), own.body());
    assertEquals(100.0, JSON.readTree(own.body()).get("budget").asDouble());
    DpClient.Reply other = as("alice", keytab, realm, () -> new DpClient(base, conf, "alice",
        null).send("GET", "/dp/queue/" + BOB, null));
    assertEquals(403, other.status(), other.body());
    DpClient.Reply add = as("alice", keytab, realm, () -> new DpClient(base, conf, "alice",
        null).send("POST", "/dp/budget", "{\"queue\":\"" + ALICE + "\",\"add\":5}"));
    assertEquals(403, add.status(), "alice is no admin");

    DpClient.Reply admin = as("ops", keytab, realm, () -> new DpClient(base, conf, "ops", null)
        .send("POST", "/dp/budget", "{\"queue\":\"" + BOB + "\",\"add\":5}"));
    assertEquals(200, admin.status(), admin.body());
    assertEquals(205.0, JSON.readTree(admin.body()).get("budget").asDouble());
  }

  private static <T> T as(String user, File keytab, String realm,
      PrivilegedExceptionAction<T> action) throws Exception {
    return UserGroupInformation.loginUserFromKeytabAndReturnUGI(user + "@" + realm,
        keytab.getPath()).doAs(action);
  }
}
