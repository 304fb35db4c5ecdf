package io.rackwise.yarn.dp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.AuthenticationException;
import org.apache.hadoop.security.authentication.client.ConnectionConfigurator;
import org.apache.hadoop.security.authentication.client.KerberosAuthenticator;
import org.apache.hadoop.security.ssl.SSLFactory;

/**
 * A client of the Dynamic Priority endpoint: SPNEGO through Hadoop's {@link AuthenticatedURL}
 * where the cluster's HTTP authentication is Kerberos, otherwise requests signed with the user's
 * key ({@link DpSignature}).
 * HTTPS connections use the client's ssl-client.xml.
 */
public final class DpClient {
  /** A reply: the HTTP status and the JSON body. */
  public record Reply(int status, String body) {}

  private final URI base;
  private final String user;
  /** The user's key, or null on a Kerberos cluster. */
  private final String key;
  private final ConnectionConfigurator tls;
  /** The last timestamp signed, so that two requests in one millisecond still increase. */
  private long lastTimestamp;

  /**
   * @param base the endpoint's address, e.g. {@code http://rm1:8090}
   * @param key the user's key from the ACL file, or null to authenticate with SPNEGO
   */
  public DpClient(URI base, Configuration conf, String user, String key) throws IOException {
    this.base = base;
    this.user = user;
    this.key = key;
    this.tls = "https".equals(base.getScheme()) ? sslFactory(conf) : null;
  }

  private static SSLFactory sslFactory(Configuration conf) throws IOException {
    SSLFactory factory = new SSLFactory(SSLFactory.Mode.CLIENT, conf);
    try {
      factory.init();
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot set up TLS from ssl-client.xml: " + e.getMessage(), e);
    }
    return factory;
  }

  /**
   * Sends one request.
   *
   * @param path the request's path, e.g. {@code /dp/price}
   * @param body the JSON body of a POST, or null for a GET
   */
  public Reply send(String method, String path, String body) throws IOException {
    // user.name satisfies a "simple" authentication filter that admits no anonymous caller; it
    // is not what the endpoint trusts (the signature is), and is outside the signed path.
    URL url = base.resolve(key == null ? path
        : path + "?user.name=" + URLEncoder.encode(user, StandardCharsets.UTF_8)).toURL();
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    HttpURLConnection connection;
    if (key == null) {
      try {
        connection = new AuthenticatedURL(new KerberosAuthenticator(), tls)
            .openConnection(url, new AuthenticatedURL.Token());
      } catch (AuthenticationException e) {
        throw new IOException("Kerberos (SPNEGO) authentication with " + url + " failed for "
            + UserGroupInformation.getCurrentUser() + ": " + e.getMessage(), e);
      }
    } else {
      connection = (HttpURLConnection) url.openConnection();
      if (tls != null) {
        connection = tls.configure(connection);
      }
      long timestamp = Math.max(System.currentTimeMillis(), lastTimestamp + 1);
      lastTimestamp = timestamp;
      connection.setRequestProperty(DpSignature.USER_HEADER, user);
      connection.setRequestProperty(DpSignature.TIMESTAMP_HEADER, Long.toString(timestamp));
      connection.setRequestProperty(DpSignature.SIGNATURE_HEADER,
          DpSignature.sign(key, method, url.getPath(), user, timestamp, bytes));
    }
    connection.setRequestMethod(method);
    if (body != null) {
      connection.setDoOutput(true);
      connection.setRequestProperty("Content-Type", "application/json");
      try (OutputStream out = connection.getOutputStream()) {
        out.write(bytes);
      }
    }
    int status = connection.getResponseCode();
    try (InputStream in = status < 400 ? connection.getInputStream()
        : connection.getErrorStream()) {
      return new Reply(status, in == null ? ""
          : new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}
