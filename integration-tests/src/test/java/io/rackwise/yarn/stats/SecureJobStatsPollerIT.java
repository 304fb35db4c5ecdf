package io.rackwise.yarn.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rackwise.yarn.KerberizedHttps;
import io.rackwise.yarn.config.ShimSettings;
import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.HttpServer2;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.AuthenticationFilterInitializer;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.ssl.SSLFactory;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job-statistics poller on a secured cluster: the web proxy serves HTTPS only (Hadoop's
 * {@link HttpServer2} with a TLS endpoint) behind Kerberos SPNEGO (Hadoop's
 * {@link AuthenticationFilterInitializer} against a {@link MiniKdc}), and the poller, built from
 * the configuration exactly as the scheduler builds it, reads the AM's job document as the
 * RM's Kerberos login user. The same URL without SPNEGO is refused with 401, so the reading
 * cannot come from an open endpoint. Runs in its own JVM (failsafe forks per IT class): it sets
 * the JVM-wide Kerberos login.
 */
class SecureJobStatsPollerIT {

  private static final ApplicationId APP = ApplicationId.newInstance(1700000000000L, 7);

  @TempDir
  File workDir;

  private KerberizedHttps secure;
  private HttpServer2 proxy;
  private JobStatsPoller poller;

  /** A MapReduce AM's job and map-task resources as the proxy relays them: 4 maps, none done. */
  public static final class AmJobServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String job = "/ws/v1/mapreduce/jobs/" + JobStatsPoller.jobIdOf(APP);
      String body;
      if (req.getRequestURI().endsWith(job)) {
        body = "{\"job\":{\"id\":\"" + JobStatsPoller.jobIdOf(APP) + "\",\"state\":\"RUNNING\","
            + "\"mapsTotal\":4,\"mapsCompleted\":0,\"reducesTotal\":2,\"reducesCompleted\":0}}";
      } else if (req.getRequestURI().endsWith(job + "/tasks")) {
        body = "{\"tasks\":null}"; // Jersey's answer when no map has succeeded yet
      } else {
        resp.sendError(HttpServletResponse.SC_NOT_FOUND);
        return;
      }
      resp.setContentType("application/json");
      resp.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    }
  }

  @AfterEach
  void stopEverything() throws Exception {
    if (poller != null) {
      poller.stop();
    }
    if (proxy != null) {
      proxy.stop();
    }
    if (secure != null) {
      secure.close();
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void pollsAnHttpsOnlyKerberizedProxyAsTheRmLoginUser() throws Exception {
    secure = KerberizedHttps.start(workDir, SecureJobStatsPollerIT.class, "rm/localhost",
        "HTTP/localhost");
    Configuration conf = secure.conf;
    String realm = secure.realm;
    File keytab = secure.keytab;

    startProxy(conf, realm, keytab);
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation.loginUserFromKeytab("rm/localhost@" + realm, keytab.getPath());

    String base = "https://localhost:" + proxy.getConnectorAddress(0).getPort();
    String jobUrl = base + "/proxy/" + APP + "/ws/v1/mapreduce/jobs/" + JobStatsPoller.jobIdOf(APP);
    assertEquals(HttpURLConnection.HTTP_UNAUTHORIZED, secure.statusWithoutSpnego(jobUrl),
        "the proxy refuses requests that do not authenticate");

    conf.set(YarnConfiguration.PROXY_ADDRESS, "localhost:"
        + proxy.getConnectorAddress(0).getPort());
    conf.set(ShimSettings.STATS_POLL_INTERVAL_MS, "3600000");
    assertEquals(base, JobStatsPoller.proxyBaseUrl(conf));
    poller = JobStatsPoller.fromSettings(ShimSettings.from(conf), conf);
    poller.track(APP);
    poller.pollOnce();
    assertEquals(0, poller.pollFailures(), "authenticated over TLS on the first try");
    assertEquals(List.of(new JobStats(APP.toString(), 4, 0, 2, 0, 0)), poller.drain());

    // The cookie from the first negotiation serves the next cycle too.
    poller.pollOnce();
    assertEquals(0, poller.pollFailures());
  }

  private void startProxy(Configuration conf, String realm, File keytab) throws Exception {
    Configuration proxyConf = new Configuration(conf);
    proxyConf.set(HttpServer2.FILTER_INITIALIZER_PROPERTY,
        AuthenticationFilterInitializer.class.getName());
    String prefix = "hadoop.http.authentication.";
    proxyConf.set(prefix + "type", "kerberos");
    proxyConf.set(prefix + "simple.anonymous.allowed", "false");
    proxyConf.set(prefix + "kerberos.principal", "HTTP/localhost@" + realm);
    proxyConf.set(prefix + "kerberos.keytab", keytab.getPath());
    Configuration sslServer = new Configuration(false);
    sslServer.addResource(conf.get(SSLFactory.SSL_SERVER_CONF_KEY));
    proxy = new HttpServer2.Builder().setName("proxy")
        .addEndpoint(URI.create("https://localhost:0"))
        .setConf(proxyConf)
        .setSSLConf(sslServer)
        .build();
    proxy.addServlet("am", "/proxy/*", AmJobServlet.class);
    proxy.start();
  }
}
