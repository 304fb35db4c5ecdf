package io.rackwise.yarn.dp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rackwise.yarn.config.ShimSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The Dynamic Priority command line, the jar's main class:
 *
 * <pre>
 * yarn jar rackwise-yarn.jar dp [--url URL] [--key-file FILE] price | queues | queue Q
 *     | spending Q RATE | budget Q ADD
 * </pre>
 *
 * <p>The endpoint is {@code --url}, or the ResourceManager(s) of yarn-site.xml at port {@value
 * ShimSettings#PREFIX}dp.http.port (each RM of an HA pair in turn: only the active one
 * listens). Where the cluster's HTTP authentication is Kerberos it authenticates with the user's
 * ticket (SPNEGO); otherwise it
 * signs with the user's key: {@code --key-file}, else {@code $RACKWISE_DP_KEY_FILE}, else
 * {@code ~/.rackwise/dp.key} (the key on one line; keep the file readable by its user only).
 * Prints the JSON reply; exits 1 on a refusal, 2 on a usage error.
 */
public final class DpCli {
  static final String USAGE = "usage: dp [--url URL] [--key-file FILE] price | queues | "
      + "queue Q | spending Q RATE | budget Q ADD";
  private static final ObjectMapper JSON = new ObjectMapper();

  private DpCli() {
  }

  public static void main(String[] args) {
    int status;
    try {
      status = run(args, new YarnConfiguration(), System.out, System.err);
    } catch (IOException | IllegalArgumentException e) {
      // No endpoint answered, no key file, no port configured: the message says which.
      System.err.println(e.getMessage());
      status = 1;
    }
    System.exit(status);
  }

  /** Runs one command; returns the exit status. */
  static int run(String[] args, Configuration conf, PrintStream out, PrintStream err)
      throws IOException {
    List<String> rest = new ArrayList<>(Arrays.asList(args));
    if (!rest.isEmpty() && rest.get(0).equals("dp")) {
      rest.remove(0);
    }
    String url = option(rest, "--url");
    String keyFile = option(rest, "--key-file");
    String method = "GET";
    String path;
    String body = null;
    try {
      String command = rest.isEmpty() ? "" : rest.get(0);
      switch (command + "/" + rest.size()) {
        case "price/1" -> path = "/dp/price";
        case "queues/1" -> path = "/dp/queues";
        case "queue/2" -> path = "/dp/queue/" + URLEncoder.encode(rest.get(1),
            StandardCharsets.UTF_8);
        case "spending/3" -> {
          method = "POST";
          path = "/dp/spending";
          body = JSON.createObjectNode().put("queue", rest.get(1))
              .put("spending", number(rest.get(2), "RATE")).toString();
        }
        case "budget/3" -> {
          method = "POST";
          path = "/dp/budget";
          body = JSON.createObjectNode().put("queue", rest.get(1))
              .put("add", number(rest.get(2), "ADD")).toString();
        }
        default -> throw new IllegalArgumentException("unknown command " + rest);
      }
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage());
      err.println(USAGE);
      return 2;
    }
    String user = UserGroupInformation.getCurrentUser().getShortUserName();
    String key = DpHttpServer.spnego(conf) ? null : key(keyFile);
    IOException unreachable = null;
    for (URI base : endpoints(url, conf)) {
      try {
        DpClient.Reply reply = new DpClient(base, conf, user, key).send(method, path, body);
        (reply.status() < 300 ? out : err).println(reply.body());
        return reply.status() < 300 ? 0 : 1;
      } catch (ConnectException e) {
        // A standby RM does not serve the endpoint: try the next one.
        unreachable = new IOException("no Dynamic Priority endpoint at " + base + ": "
            + e.getMessage(), e);
      }
    }
    throw unreachable;
  }

  private static String option(List<String> args, String name) {
    int at = args.indexOf(name);
    if (at < 0 || at + 1 >= args.size()) {
      return null;
    }
    String value = args.get(at + 1);
    args.subList(at, at + 2).clear();
    return value;
  }

  private static double number(String raw, String what) {
    try {
      return Double.parseDouble(raw);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " '" + raw + "' is not a number");
    }
  }

  private static String key(String keyFile) throws IOException {
    Path file = keyFile != null ? Paths.get(keyFile)
        : System.getenv("RACKWISE_DP_KEY_FILE") != null
            ? Paths.get(System.getenv("RACKWISE_DP_KEY_FILE"))
            : Paths.get(System.getProperty("user.home"), ".rackwise", "dp.key");
    try {
      return Files.readString(file).strip();
    } catch (IOException e) {
      throw new IOException("cannot read the Dynamic Priority key file " + file + " (--key-file,"
          + " $RACKWISE_DP_KEY_FILE or ~/.rackwise/dp.key): " + e, e);
    }
  }

  /** {@code --url}, or each ResourceManager of the configuration at the endpoint's port. */
  private static List<URI> endpoints(String url, Configuration conf) {
    if (url != null) {
      return List.of(URI.create(url));
    }
    int port = conf.getInt(ShimSettings.DP_HTTP_PORT, -1);
    if (port <= 0) {
      throw new IllegalArgumentException(ShimSettings.DP_HTTP_PORT + " is not set to a port in "
          + "the configuration; give --url");
    }
    String scheme = YarnConfiguration.useHttps(conf) ? "https" : "http";
    List<String> hosts = new ArrayList<>();
    if (HAUtil.isHAEnabled(conf)) {
      for (String id : HAUtil.getRMHAIds(conf)) {
        hosts.add(conf.get(YarnConfiguration.RM_HOSTNAME + "." + id));
      }
    } else {
      hosts.add(conf.get(YarnConfiguration.RM_HOSTNAME, "0.0.0.0"));
    }
    return hosts.stream().map(host -> URI.create(scheme + "://" + host + ":" + port)).toList();
  }
}
