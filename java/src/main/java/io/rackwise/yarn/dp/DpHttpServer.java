package io.rackwise.yarn.dp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rackwise.yarn.bridge.WireResponse.MarketInterval;
import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.dp.DpLedger.Balance;
import io.rackwise.yarn.dp.DpMarkets.QueueState;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.HttpServer2;
import org.apache.hadoop.security.AuthenticationFilterInitializer;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dynamic Priority's user and admin endpoint, on Hadoop's {@link HttpServer2}: HTTPS when the
 * cluster's {@code yarn.http.policy} asks for it (with the RM's ssl-server.xml), and SPNEGO
 * where the cluster's HTTP authentication is Kerberos ({@link #spnego}), the caller then being
 * who Kerberos says. Otherwise every request is signed with the caller's key from the ACL file ({@link DpSignature}); a signature must be
 * fresh (its timestamp within the window of the RM's clock) and newer than the caller's last
 * accepted one, so that a captured request cannot be replayed.
 *
 * <p>Requests, all answered in JSON: {@code GET /dp/price}, {@code GET /dp/queues}, {@code GET
 * /dp/queue/<queue>}, {@code POST /dp/spending} with {@code {"queue": q, "spending": rate}} (the
 * queue's own user or an admin), {@code POST /dp/budget} with {@code {"queue": q, "add":
 * credits}} (an admin). A user reads and changes only their own queues. A refusal is an HTTP
 * 400, 401, 403, 404 or 405 with {@code {"status", "element", "value", "reason"}}.
 */
public final class DpHttpServer {
  private static final Logger LOG = LoggerFactory.getLogger(DpHttpServer.class);
  static final String PATH = "/dp";
  private static final String ENDPOINT_ATTRIBUTE = "rackwise.dp.endpoint";
  /** A request body larger than this is refused: none of ours is more than a line. */
  private static final int MAX_BODY_BYTES = 64 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer2 server;

  private DpHttpServer(HttpServer2 server) {
    this.server = server;
  }

  /**
   * Starts the endpoint.
   *
   * @throws IOException the port cannot be bound (the message names it)
   */
  public static DpHttpServer start(ShimSettings.DpHttp settings, Configuration conf,
      DpMarkets markets) throws IOException {
    return start(settings, conf, markets, System::currentTimeMillis);
  }

  static DpHttpServer start(ShimSettings.DpHttp settings, Configuration conf, DpMarkets markets,
      LongSupplier clock) throws IOException {
    boolean https = YarnConfiguration.useHttps(conf);
    URI endpoint = URI.create((https ? "https://" : "http://") + settings.host() + ":"
        + settings.port());
    HttpServer2.Builder builder = new HttpServer2.Builder().setName("rackwise-dp")
        .setConf(serverConf(conf)).addEndpoint(endpoint).setFindPort(false)
        .setSecurityEnabled(UserGroupInformation.isSecurityEnabled())
        .setUsernameConfKey(YarnConfiguration.RM_WEBAPP_SPNEGO_USER_NAME_KEY)
        .setKeytabConfKey(YarnConfiguration.RM_WEBAPP_SPNEGO_KEYTAB_FILE_KEY);
    if (https) {
      WebAppUtils.loadSslConfiguration(builder, conf);
    }
    HttpServer2 server = builder.build();
    server.setAttribute(ENDPOINT_ATTRIBUTE, new Endpoint(settings, conf, markets, clock));
    server.addInternalServlet("rackwise-dp", PATH + "/*", Servlet.class);
    try {
      server.start();
    } catch (IOException e) {
      throw new IOException("Dynamic Priority endpoint cannot start on " + endpoint + " ("
          + ShimSettings.DP_HTTP_PORT + "): " + e.getMessage(), e);
    }
    DpHttpServer started = new DpHttpServer(server);
    LOG.info("Dynamic Priority endpoint at {}://{}:{}{} ({})", https ? "https" : "http",
        settings.host(), started.port(), PATH, spnego(conf)
            ? "Kerberos (SPNEGO)" : "requests signed with the keys of " + settings.aclFile());
    return started;
  }

  /**
   * Whether HttpServer2 authenticates callers with SPNEGO: on a Kerberos cluster whose HTTP
   * authentication ({@value #HTTP_AUTH_TYPE}) is not {@code simple}, HttpServer2's rule. Only
   * then is the request's user trusted: with {@code simple} it is a static user or whatever
   * the {@code user.name} parameter claims.
   */
  static boolean spnego(Configuration conf) {
    return UserGroupInformation.isSecurityEnabled()
        && !"simple".equals(conf.getTrimmed(HTTP_AUTH_TYPE, "simple"));
  }

  static final String HTTP_AUTH_TYPE = "hadoop.http.authentication.type";

  /**
   * The server's configuration: the RM's, with Hadoop's {@link AuthenticationFilterInitializer}
   * among the filter initializers when {@link #spnego} holds and none is there yet. HttpServer2
   * (3.4) maps no SPNEGO filter to a servlet by itself; the initializer puts one on every path,
   * configured by the cluster's {@code hadoop.http.authentication.*} keys (principal, keytab,
   * cookie and signature settings), as on the daemons' own web UIs.
   */
  private static Configuration serverConf(Configuration conf) {
    Configuration serverConf = new Configuration(conf);
    if (spnego(conf)) {
      String[] initializers = conf.getTrimmedStrings(HttpServer2.FILTER_INITIALIZER_PROPERTY);
      boolean authenticating = java.util.Arrays.stream(initializers)
          .anyMatch(name -> name.endsWith("AuthenticationFilterInitializer"));
      if (!authenticating) {
        String[] added = java.util.Arrays.copyOf(initializers, initializers.length + 1);
        added[initializers.length] = AuthenticationFilterInitializer.class.getName();
        serverConf.setStrings(HttpServer2.FILTER_INITIALIZER_PROPERTY, added);
      }
    }
    return serverConf;
  }

  /** The port it listens on. */
  public int port() {
    InetSocketAddress address = server.getConnectorAddress(0);
    return address.getPort();
  }

  public void stop() throws Exception {
    server.stop();
  }

  /** HttpServer2 makes the servlet by reflection; the endpoint is in the servlet context. */
  public static final class Servlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      endpoint().serve(request, response);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      endpoint().serve(request, response);
    }

    private Endpoint endpoint() {
      return (Endpoint) getServletContext().getAttribute(ENDPOINT_ATTRIBUTE);
    }
  }

  /** A request refused: the status and the element, value and reason the reply names. */
  static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;
    final String element;
    final String value;

    Refusal(int status, String element, String value, String reason) {
      super(reason);
      this.status = status;
      this.element = element;
      this.value = value;
    }
  }

  /** Who is calling, and whether as an admin. */
  record Caller(String user, boolean admin) {}

  /** The endpoint's logic, one instance per server. */
  static final class Endpoint {
    private final ShimSettings.DpHttp settings;
    private final DpMarkets markets;
    private final LongSupplier clock;
    private final boolean kerberos;
    private final DpAclFile aclFile;
    /** The YARN admin ACL, or null when it allows everyone (then the ACL file's role decides). */
    private final AccessControlList adminAcl;
    /** Each user's last accepted signature timestamp; guarded by itself. */
    private final Map<String, Long> lastTimestamps = new HashMap<>();

    Endpoint(ShimSettings.DpHttp settings, Configuration conf, DpMarkets markets,
        LongSupplier clock) {
      this.settings = settings;
      this.markets = markets;
      this.clock = clock;
      this.kerberos = spnego(conf);
      this.aclFile = settings.aclFile() == null ? null : new DpAclFile(settings.aclFile());
      AccessControlList acl = new AccessControlList(conf.get(YarnConfiguration.YARN_ADMIN_ACL,
          YarnConfiguration.DEFAULT_YARN_ADMIN_ACL));
      if (acl.isAllAllowed()) {
        LOG.warn("{} allows everyone, so it makes no Dynamic Priority admins (everyone could "
            + "read and fund every queue); admins are the ACL file's admin lines",
            YarnConfiguration.YARN_ADMIN_ACL);
        this.adminAcl = null;
      } else {
        this.adminAcl = acl;
      }
      if (!kerberos && aclFile == null) {
        LOG.warn("Dynamic Priority endpoint: the HTTP authentication ({}) is not Kerberos and "
            + "{} is not set, so every request is refused", HTTP_AUTH_TYPE,
            ShimSettings.DP_ACL_FILE);
      }
    }

    void serve(HttpServletRequest request, HttpServletResponse response) throws IOException {
      ObjectNode reply;
      int status = HttpServletResponse.SC_OK;
      try {
        byte[] body = body(request);
        Caller caller = authenticate(request, body);
        reply = route(request.getMethod(), request.getPathInfo(), body, caller);
      } catch (Refusal refusal) {
        status = refusal.status;
        reply = JSON.createObjectNode().put("status", refusal.status)
            .put("element", refusal.element).put("value", refusal.value)
            .put("reason", refusal.getMessage());
        LOG.info("Dynamic Priority request {} {} from {} refused ({}): {} '{}': {}",
            request.getMethod(), request.getRequestURI(), request.getRemoteAddr(),
            refusal.status, refusal.element, refusal.value, refusal.getMessage());
      }
      response.setStatus(status);
      response.setContentType("application/json; charset=utf-8");
      response.getOutputStream().write(JSON.writeValueAsBytes(reply));
    }

    private static byte[] body(HttpServletRequest request) throws IOException, Refusal {
      try (InputStream in = request.getInputStream()) {
        byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
        if (body.length > MAX_BODY_BYTES) {
          throw new Refusal(400, "body", body.length + "+ bytes", "a request body may have at "
              + "most " + MAX_BODY_BYTES + " bytes");
        }
        return body;
      }
    }

    // ---- who is calling ------------------------------------------------------------------

    Caller authenticate(HttpServletRequest request, byte[] body) throws Refusal {
      if (kerberos) {
        String user = request.getRemoteUser();
        if (user == null) {
          throw new Refusal(401, "Authorization", "", "this cluster's HTTP authentication is "
              + "Kerberos and the request carries no SPNEGO authentication");
        }
        return new Caller(user, isAdmin(user, aclFile == null ? Optional.empty()
            : aclFile.user(user)));
      }
      if (aclFile == null) {
        throw new Refusal(401, ShimSettings.DP_ACL_FILE, "", "the cluster's HTTP "
            + "authentication is not Kerberos and the ResourceManager has no ACL file of keys, "
            + "so no caller can be authenticated");
      }
      String user = header(request, DpSignature.USER_HEADER);
      String rawTimestamp = header(request, DpSignature.TIMESTAMP_HEADER);
      String rawSignature = header(request, DpSignature.SIGNATURE_HEADER);
      long timestamp;
      try {
        timestamp = Long.parseLong(rawTimestamp);
      } catch (NumberFormatException e) {
        throw new Refusal(400, DpSignature.TIMESTAMP_HEADER, rawTimestamp,
            "not a whole number of milliseconds since the epoch");
      }
      byte[] signature;
      try {
        signature = Base64.getDecoder().decode(rawSignature);
      } catch (IllegalArgumentException e) {
        throw new Refusal(400, DpSignature.SIGNATURE_HEADER, rawSignature, "not Base64");
      }
      Optional<DpAclFile.Entry> entry = aclFile.user(user);
      // One reason for an unknown user and a wrong key: which users exist is not told.
      if (entry.isEmpty() || !DpSignature.matches(entry.get().key(), request.getMethod(),
          request.getRequestURI(), user, timestamp, body, signature)) {
        throw new Refusal(401, DpSignature.SIGNATURE_HEADER, rawSignature, "the signature is "
            + "not that of the request with the key of user '" + user + "' in the ACL file");
      }
      long now = clock.getAsLong();
      if (Math.abs(now - timestamp) > settings.signatureWindowMs()) {
        throw new Refusal(401, DpSignature.TIMESTAMP_HEADER, rawTimestamp, "lies "
            + Math.abs(now - timestamp) + " ms from the ResourceManager's clock ("
            + now + "), more than the " + settings.signatureWindowMs() + " ms allowed ("
            + ShimSettings.DP_SIGNATURE_WINDOW_MS + "); check the client's clock");
      }
      synchronized (lastTimestamps) {
        Long last = lastTimestamps.get(user);
        if (last != null && timestamp <= last) {
          throw new Refusal(401, DpSignature.TIMESTAMP_HEADER, rawTimestamp, "not after "
              + "user '" + user + "''s last accepted request (" + last + "): a replay");
        }
        lastTimestamps.put(user, timestamp);
      }
      return new Caller(user, isAdmin(user, entry));
    }

    private boolean isAdmin(String user, Optional<DpAclFile.Entry> entry) {
      return entry.map(e -> e.role() == DpAclFile.Role.ADMIN).orElse(false)
          || adminAcl != null && adminAcl.isUserAllowed(UserGroupInformation.createRemoteUser(
              user));
    }

    private static String header(HttpServletRequest request, String name) throws Refusal {
      String value = request.getHeader(name);
      if (value == null || value.isBlank()) {
        throw new Refusal(401, name, "", "missing: a request to this cluster must be signed "
            + "(headers " + DpSignature.USER_HEADER + ", " + DpSignature.TIMESTAMP_HEADER + ", "
            + DpSignature.SIGNATURE_HEADER + ")");
      }
      return value.trim();
    }

    // ---- what is asked -------------------------------------------------------------------

    ObjectNode route(String method, String path, byte[] body, Caller caller) throws Refusal,
        IOException {
      String route = path == null ? "" : path;
      boolean get = "GET".equals(method);
      if (route.equals("/price")) {
        requireMethod(get, method, "GET");
        return price();
      }
      if (route.equals("/queues")) {
        requireMethod(get, method, "GET");
        return queues(caller);
      }
      if (route.startsWith("/queue/")) {
        requireMethod(get, method, "GET");
        String queue = route.substring("/queue/".length());
        return state(readable(queue, caller));
      }
      if (route.equals("/spending")) {
        requireMethod(!get, method, "POST");
        return setSpending(jsonObject(body), caller);
      }
      if (route.equals("/budget")) {
        requireMethod(!get, method, "POST");
        return addBudget(jsonObject(body), caller);
      }
      throw new Refusal(404, "path", PATH + route, "no such request; there are GET "
          + PATH + "/price, /queues and /queue/<queue>, POST " + PATH + "/spending and /budget");
    }

    private static void requireMethod(boolean right, String method, String expected)
        throws Refusal {
      if (!right) {
        throw new Refusal(405, "method", method, "this request takes " + expected);
      }
    }

    private ObjectNode price() {
      ObjectNode reply = JSON.createObjectNode();
      ArrayNode list = reply.putArray("markets");
      Map<String, MarketInterval> latest = markets.latestIntervals();
      for (String market : markets.markets()) {
        ObjectNode line = list.addObject().put("market", market);
        MarketInterval interval = latest.get(market);
        if (interval == null) {
          // No interval closed yet on this RM: there is no price to tell.
          line.putNull("price");
        } else {
          line.put("price", interval.price()).put("interval", interval.sequence())
              .put("end_ms", interval.endMs());
        }
      }
      return reply;
    }

    private ObjectNode queues(Caller caller) throws Refusal {
      ObjectNode reply = JSON.createObjectNode().put("user", caller.user())
          .put("admin", caller.admin());
      ArrayNode list = reply.putArray("queues");
      for (String queue : markets.budgetQueues()) {
        if (caller.admin() || DpMarkets.owner(queue).equals(caller.user())) {
          list.add(state(lookUp(queue)));
        }
      }
      return reply;
    }

    /** A queue the caller may read (their own, or any for an admin). */
    private QueueState readable(String queue, Caller caller) throws Refusal {
      String full = DpMarkets.fullName(queue).orElseThrow(
          () -> new Refusal(400, "queue", "", "no queue named"));
      if (!caller.admin() && !DpMarkets.owner(full).equals(caller.user())) {
        throw new Refusal(403, "queue", full, "queue " + full + " belongs to user '"
            + DpMarkets.owner(full) + "'; user '" + caller.user() + "' may read and change "
            + "only their own queues");
      }
      return lookUp(full);
    }

    private QueueState lookUp(String queue) throws Refusal {
      try {
        return markets.queue(queue);
      } catch (IllegalArgumentException e) {
        throw new Refusal(404, "queue", queue, e.getMessage());
      }
    }

    private ObjectNode setSpending(JsonNode body, Caller caller) throws Refusal, IOException {
      QueueState queue = readable(text(body, "queue"), caller);
      double spending = amount(body, "spending", false);
      return change(queue, current -> new Balance(current.budget(), spending), caller,
          "spending " + spending);
    }

    private ObjectNode addBudget(JsonNode body, Caller caller) throws Refusal, IOException {
      String named = text(body, "queue");
      if (!caller.admin()) {
        throw new Refusal(403, "budget", named, "adding budget takes an admin (the YARN admin "
            + "ACL " + YarnConfiguration.YARN_ADMIN_ACL + ", or role admin in the ACL file); "
            + "user '" + caller.user() + "' is none");
      }
      QueueState queue = readable(named, caller);
      double add = amount(body, "add", true);
      return change(queue, current -> new Balance(current.budget() + add, current.spending()),
          caller, "budget +" + add);
    }

    private ObjectNode change(QueueState queue, UnaryOperator<Balance> change,
        Caller caller, String what) throws Refusal, IOException {
      try {
        markets.change(queue.queue(), change, caller.user(), what);
      } catch (IllegalArgumentException e) {
        throw new Refusal(400, "account", queue.queue(), e.getMessage());
      }
      LOG.info("Dynamic Priority: {} by {}{} on {}", what, caller.user(),
          caller.admin() ? " (admin)" : "", queue.queue());
      return state(lookUp(queue.queue()));
    }

    private static String text(JsonNode body, String field) throws Refusal {
      JsonNode value = body.get(field);
      if (value == null || !value.isTextual() || value.asText().isBlank()) {
        throw new Refusal(400, field, value == null ? "" : value.toString(),
            "required: the queue's name, a string");
      }
      return value.asText();
    }

    /** A finite amount: above 0 when {@code positive}, otherwise 0 or more. */
    private static double amount(JsonNode body, String field, boolean positive)
        throws Refusal {
      JsonNode value = body.get(field);
      String required = positive ? "a finite number > 0" : "a finite number >= 0";
      if (value == null || !value.isNumber()) {
        throw new Refusal(400, field, value == null ? "" : value.toString(),
            "not a number; required: " + required + " (a JSON number)");
      }
      double amount = value.asDouble();
      if (!Double.isFinite(amount) || amount < 0 || positive && amount == 0) {
        throw new Refusal(400, field, value.asText(), "required: " + required);
      }
      return amount;
    }

    private static ObjectNode state(QueueState queue) {
      ObjectNode node = JSON.createObjectNode().put("queue", queue.queue())
          .put("market", queue.market()).put("owner", queue.owner())
          .put("budget", queue.balance().budget()).put("spending", queue.balance().spending())
          .put("share", queue.share()).put("used_units", queue.usedUnits());
      node.putObject("used").put("memory_mb", queue.usedMb()).put("vcores", queue.usedVcores());
      node.putObject("pending").put("memory_mb", queue.pendingMb())
          .put("vcores", queue.pendingVcores());
      return node;
    }
  }

  /** Parses a POST body as a JSON object, refusing anything else. */
  private static JsonNode jsonObject(byte[] body) throws Refusal {
    String text = new String(body, StandardCharsets.UTF_8);
    try {
      JsonNode node = JSON.readTree(body);
      if (node != null && node.isObject()) {
        return node;
      }
    } catch (JsonProcessingException e) {
      throw new Refusal(400, "body", text, "not JSON (" + e.getOriginalMessage() + ")");
    } catch (IOException e) {
      throw new Refusal(400, "body", text, "unreadable (" + e.getMessage() + ")");
    }
    throw new Refusal(400, "body", text, "required: a JSON object");
  }
}
