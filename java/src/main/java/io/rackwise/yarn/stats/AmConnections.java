package io.rackwise.yarn.stats;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLConnection;
import java.security.GeneralSecurityException;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.AuthenticationException;
import org.apache.hadoop.security.authentication.client.ConnectionConfigurator;
import org.apache.hadoop.security.authentication.client.KerberosAuthenticator;
import org.apache.hadoop.security.ssl.SSLFactory;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * Opens the poller's connections to the web proxy the way the cluster is secured, with
 * Hadoop's own client pieces rather than hand-made ones:
 * <ul>
 *   <li>HTTPS ({@code yarn.http.policy=HTTPS_ONLY}): an {@link SSLFactory} in client mode, which
 *   reads the truststore (and a keystore, for two-way TLS) from {@code ssl-client.xml} exactly
 *   as every other Hadoop client in this JVM does, and verifies host names as configured
 *   there ({@code hadoop.ssl.hostname.verifier});</li>
 *   <li>Kerberos ({@code hadoop.security.authentication=kerberos}): SPNEGO through
 *   {@link AuthenticatedURL} with the RM's login user (its keytab; the ticket is renewed from
 *   the keytab before each connection when due). The signed cookie the proxy returns is kept and
 *   sent with later requests, so one negotiation serves many polls; an answer of 401 drops it
 *   and the next cycle negotiates again.</li>
 * </ul>
 * Used by the polling thread only (the token is not thread-safe).
 */
final class AmConnections implements AutoCloseable {

  private final int timeoutMs;
  private final SSLFactory ssl;
  private final boolean spnego;
  private AuthenticatedURL.Token token = new AuthenticatedURL.Token();

  private AmConnections(int timeoutMs, SSLFactory ssl, boolean spnego) {
    this.timeoutMs = timeoutMs;
    this.ssl = ssl;
    this.spnego = spnego;
  }

  /** Plain HTTP, no authentication: what an insecure cluster's proxy speaks. */
  static AmConnections plain(int timeoutMs) {
    return new AmConnections(timeoutMs, null, false);
  }

  /**
   * Connections as {@code conf} secures the cluster's web endpoints.
   *
   * @throws IOException when HTTPS is configured and the TLS client cannot be set up (for
   *                     example, the truststore named in {@code ssl-client.xml} is missing)
   */
  static AmConnections forCluster(Configuration conf, int timeoutMs) throws IOException {
    SSLFactory ssl = null;
    if (YarnConfiguration.useHttps(conf)) {
      ssl = new SSLFactory(SSLFactory.Mode.CLIENT, conf);
      try {
        ssl.init();
      } catch (GeneralSecurityException e) {
        throw new IOException("cannot set up the TLS client from " + SSLFactory.SSL_CLIENT_CONF_KEY
            + " (" + conf.get(SSLFactory.SSL_CLIENT_CONF_KEY, "ssl-client.xml") + "): " + e, e);
      }
    }
    return new AmConnections(timeoutMs, ssl, UserGroupInformation.isSecurityEnabled());
  }

  /** The URL scheme these connections speak. */
  String scheme() {
    return ssl != null ? "https" : "http";
  }

  /**
   * An open connection to {@code url}, authenticated when the cluster is; the caller reads the
   * status and the body.
   *
   * @throws AuthenticationException when SPNEGO fails (no ticket, wrong principal, clock skew)
   */
  HttpURLConnection open(String url) throws IOException, AuthenticationException {
    ConnectionConfigurator configure = this::configure;
    if (!spnego) {
      URLConnection c = URI.create(url).toURL().openConnection();
      if (!(c instanceof HttpURLConnection http)) {
        throw new IOException("not an http URL: " + url);
      }
      return configure.configure(http);
    }
    UserGroupInformation rm = UserGroupInformation.getLoginUser();
    rm.checkTGTAndReloginFromKeytab();
    try {
      return rm.doAs((PrivilegedExceptionAction<HttpURLConnection>) () ->
          new AuthenticatedURL(new KerberosAuthenticator(), configure)
              .openConnection(URI.create(url).toURL(), token));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while authenticating to " + url, e);
    } catch (UndeclaredThrowableException e) {
      // doAs passes IOException through and wraps any other checked exception.
      if (e.getCause() instanceof AuthenticationException auth) {
        throw auth;
      }
      throw e;
    }
  }

  /** The proxy refused the cookie (expired, or its secret rotated): negotiate again next time. */
  void unauthorized() {
    token = new AuthenticatedURL.Token();
  }

  private HttpURLConnection configure(HttpURLConnection conn) throws IOException {
    if (ssl != null) {
      ssl.configure(conn);
    }
    conn.setConnectTimeout(timeoutMs);
    conn.setReadTimeout(timeoutMs);
    conn.setInstanceFollowRedirects(false);
    conn.setUseCaches(false);
    // The AM's resources produce XML as well; without this Jersey may pick XML.
    conn.setRequestProperty("Accept", "application/json");
    return conn;
  }

  @Override
  public void close() {
    if (ssl != null) {
      ssl.destroy();
    }
  }
}
