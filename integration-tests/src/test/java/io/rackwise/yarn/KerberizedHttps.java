package io.rackwise.yarn;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URI;
import javax.net.ssl.HttpsURLConnection;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.http.HttpConfig;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.ssl.KeyStoreTestUtil;
import org.apache.hadoop.security.ssl.SSLFactory;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * A secure cluster's setting for one test: a MiniKdc with a keytab of the test's principals, and
 * a configuration with Kerberos on and HTTPS only, whose keystores and {@code ssl-client.xml} /
 * {@code ssl-server.xml} are on the classpath as on an RM. Closing stops the KDC, removes the
 * SSL files and resets {@link UserGroupInformation}.
 */
public final class KerberizedHttps implements AutoCloseable {
  public final MiniKdc kdc;
  public final File keytab;
  public final String realm;
  /** Kerberos authentication, HTTPS only, the SSL configuration set; add to it, then log in. */
  public final Configuration conf;
  private final String keystores;
  private final String sslConfDir;

  private KerberizedHttps(MiniKdc kdc, File keytab, Configuration conf, String keystores,
      String sslConfDir) {
    this.kdc = kdc;
    this.keytab = keytab;
    this.realm = kdc.getRealm();
    this.conf = conf;
    this.keystores = keystores;
    this.sslConfDir = sslConfDir;
  }

  /**
   * Starts the KDC under {@code workDir} with {@code principals} in one keytab, and writes the
   * keystores and SSL files for {@code testClass}'s classpath.
   */
  public static KerberizedHttps start(File workDir, Class<?> testClass, String... principals)
      throws Exception {
    MiniKdc kdc = new MiniKdc(MiniKdc.createConf(), new File(workDir, "kdc"));
    kdc.start();
    try {
      File keytab = new File(workDir, "test.keytab");
      kdc.createPrincipal(keytab, principals);
      Configuration conf = new YarnConfiguration();
      conf.set(CommonConfigurationKeysPublic.HADOOP_SECURITY_AUTHENTICATION, "kerberos");
      conf.set(YarnConfiguration.YARN_HTTP_POLICY_KEY, HttpConfig.Policy.HTTPS_ONLY.name());
      String keystores = new File(workDir, "keystores").getPath();
      new File(keystores).mkdirs();
      String sslConfDir = KeyStoreTestUtil.getClasspathDir(testClass);
      KeyStoreTestUtil.setupSSLConfig(keystores, sslConfDir, conf, false);
      return new KerberizedHttps(kdc, keytab, conf, keystores, sslConfDir);
    } catch (Exception e) {
      kdc.stop();
      throw e;
    }
  }

  /** The HTTP status of a plain HTTPS GET of {@code url}, one that does not negotiate SPNEGO. */
  public int statusWithoutSpnego(String url) throws Exception {
    SSLFactory ssl = new SSLFactory(SSLFactory.Mode.CLIENT, conf);
    ssl.init();
    try {
      HttpsURLConnection c = (HttpsURLConnection) URI.create(url).toURL().openConnection();
      ssl.configure(c);
      int status = c.getResponseCode();
      c.disconnect();
      assertTrue(status > 0);
      return status;
    } finally {
      ssl.destroy();
    }
  }

  @Override
  public void close() throws Exception {
    try {
      kdc.stop();
      KeyStoreTestUtil.cleanupSSLConfig(keystores, sslConfDir);
    } finally {
      UserGroupInformation.reset();
    }
  }
}
