package io.rackwise.yarn.config;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.commons.text.similarity.LevenshteinDistance;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * The yarn-site.xml keys read by the Java shim itself: those under
 * {@code yarn.scheduler.rackwise.native.}, {@code .state.}, {@code .stats.}, {@code .feed.} and
 * {@code .dp.},
 * each parsed and validated here only. Every other
 * {@code yarn.scheduler.rackwise.*} key belongs to the native core, which owns its defaults and
 * validation (see {@link #coreSettings}); splitting by prefix means each key is parsed in exactly
 * one place and a new shim key never needs registering twice.
 */
public final class ShimSettings {
  public static final String PREFIX = "yarn.scheduler.rackwise.";
  /** A native failure stops the ResourceManager instead of falling back to FairScheduler. */
  public static final String NATIVE_REQUIRED = PREFIX + "native.required";
  /**
   * Directory for state that must survive a restart (learned shuffle ratios): a local path, or
   * a Hadoop file system URI ({@code hdfs://...}) shared by the RMs of an HA pair.
   */
  public static final String STATE_DIR = PREFIX + "state.dir";
  /** Shortest time between two writes of the learned history. */
  public static final String STATE_FLUSH_INTERVAL_MS = PREFIX + "state.flush-interval-ms";
  /** How many job names the learned history keeps. */
  public static final String STATE_LEARNED_MAX_ENTRIES = PREFIX + "state.learned.max-entries";
  /** Poll MapReduce ApplicationMasters for job counters. */
  public static final String STATS_ENABLED = PREFIX + "stats.enabled";
  public static final String STATS_POLL_INTERVAL_MS = PREFIX + "stats.poll-interval-ms";
  public static final String STATS_TIMEOUT_MS = PREFIX + "stats.timeout-ms";
  /** A JSON file of measured cross-rack loads that a monitoring agent rewrites. */
  public static final String FEED_FILE = PREFIX + "feed.file";
  public static final String FEED_POLL_INTERVAL_MS = PREFIX + "feed.poll-interval-ms";
  /**
   * A text file of relative CPU speeds per host or host pattern (DRMJS's CPU term), re-read
   * when it changes at the feed's poll interval; see {@code HostClassFile}.
   */
  public static final String HOST_CLASS_FILE = PREFIX + "feed.host-class-file";

  /**
   * Port of Dynamic Priority's HTTP endpoint; unset or -1: no endpoint, 0: any free port (the
   * log names it).
   */
  public static final String DP_HTTP_PORT = PREFIX + "dp.http.port";
  /** Address the endpoint binds to. */
  public static final String DP_HTTP_HOST = PREFIX + "dp.http.host";
  /** The users' keys and roles for signed requests where HTTP authentication is not Kerberos. */
  public static final String DP_ACL_FILE = PREFIX + "dp.acl-file";
  /** How far a signed request's timestamp may lie from the RM's clock. */
  public static final String DP_SIGNATURE_WINDOW_MS = PREFIX + "dp.signature-window-ms";

  private static final List<String> SHIM_PREFIXES = List.of(PREFIX + "native.",
      PREFIX + "state.", PREFIX + "stats.", PREFIX + "feed.", PREFIX + "dp.");

  /** Every key the shim reads: a key under one of its prefixes that is none of these is unknown. */
  private static final List<String> SHIM_KEYS = List.of(NATIVE_REQUIRED, STATE_DIR,
      STATE_FLUSH_INTERVAL_MS, STATE_LEARNED_MAX_ENTRIES, STATS_ENABLED, STATS_POLL_INTERVAL_MS,
      STATS_TIMEOUT_MS, FEED_FILE, FEED_POLL_INTERVAL_MS, HOST_CLASS_FILE, DP_HTTP_PORT,
      DP_HTTP_HOST, DP_ACL_FILE, DP_SIGNATURE_WINDOW_MS);

  private final boolean nativeRequired;
  private final org.apache.hadoop.fs.Path stateDir;
  private final long stateFlushIntervalMs;
  private final int learnedMaxEntries;
  private final boolean statsEnabled;
  private final long statsPollIntervalMs;
  private final int statsTimeoutMs;
  private final Path feedFile;
  private final long feedPollIntervalMs;
  private final DpHttp dpHttp;
  private final Path hostClassFile;

  /**
   * Dynamic Priority's HTTP endpoint.
   *
   * @param port -1: no endpoint; 0: any free port
   * @param aclFile the signed-request keys, or null when none is configured
   */
  public record DpHttp(int port, String host, Path aclFile, long signatureWindowMs) {
    public boolean enabled() {
      return port >= 0;
    }
  }

  private ShimSettings(boolean nativeRequired, org.apache.hadoop.fs.Path stateDir, long stateFlushIntervalMs,
      int learnedMaxEntries, boolean statsEnabled, long statsPollIntervalMs, int statsTimeoutMs,
      Path feedFile, long feedPollIntervalMs, Path hostClassFile, DpHttp dpHttp) {
    this.nativeRequired = nativeRequired;
    this.stateDir = stateDir;
    this.stateFlushIntervalMs = stateFlushIntervalMs;
    this.learnedMaxEntries = learnedMaxEntries;
    this.statsEnabled = statsEnabled;
    this.statsPollIntervalMs = statsPollIntervalMs;
    this.statsTimeoutMs = statsTimeoutMs;
    this.feedFile = feedFile;
    this.feedPollIntervalMs = feedPollIntervalMs;
    this.hostClassFile = hostClassFile;
    this.dpHttp = dpHttp;
  }

  /** Reads and validates the shim's keys, reporting every bad one at once. */
  public static ShimSettings from(Configuration conf) throws RackwiseConfigException {
    List<String> problems = new ArrayList<>();
    boolean required = parseBoolean(conf, NATIVE_REQUIRED, false, problems);
    boolean stats = parseBoolean(conf, STATS_ENABLED, true, problems);
    long flushInterval = parsePositiveLong(conf, STATE_FLUSH_INTERVAL_MS, 30_000, problems);
    int maxEntries = (int) parsePositive(conf, STATE_LEARNED_MAX_ENTRIES, 10_000,
        Integer.MAX_VALUE, "a positive whole number", problems);
    long interval = parsePositiveLong(conf, STATS_POLL_INTERVAL_MS, 5000, problems);
    int timeout = (int) parsePositive(conf, STATS_TIMEOUT_MS, 2000, Integer.MAX_VALUE,
        "a positive whole number of milliseconds", problems);
    long feedInterval = parsePositiveLong(conf, FEED_POLL_INTERVAL_MS, 1000, problems);
    org.apache.hadoop.fs.Path dir = parseStateDir(conf, problems);
    String feed = conf.getTrimmed(FEED_FILE, "");
    String hostClasses = conf.getTrimmed(HOST_CLASS_FILE, "");
    DpHttp dpHttp = parseDpHttp(conf, problems);
    if (!problems.isEmpty()) {
      throw RackwiseConfigException.of(problems);
    }
    return new ShimSettings(required, dir, flushInterval,
        maxEntries, stats, interval, timeout, feed.isEmpty() ? null : Paths.get(feed),
        feedInterval, hostClasses.isEmpty() ? null : Paths.get(hostClasses), dpHttp);
  }

  /**
   * The {@code yarn.scheduler.rackwise.*} keys the native core validates, as raw strings.
   */
  public static Map<String, String> coreSettings(Configuration conf) {
    Map<String, String> core = new TreeMap<>();
    for (Map.Entry<String, String> entry : conf.getPropsWithPrefix(PREFIX).entrySet()) {
      String key = PREFIX + entry.getKey();
      if (SHIM_PREFIXES.stream().noneMatch(key::startsWith)) {
        core.put(key, conf.get(key));
      }
    }
    return core;
  }

  private static DpHttp parseDpHttp(Configuration conf, List<String> problems) {
    String rawPort = conf.getTrimmed(DP_HTTP_PORT, "");
    int port = -1;
    if (!rawPort.isEmpty()) {
      try {
        port = Integer.parseInt(rawPort);
      } catch (NumberFormatException e) {
        port = Integer.MIN_VALUE;
      }
      if (port < -1 || port > 65535) {
        problems.add(DP_HTTP_PORT + ": value '" + rawPort + "' must be a port from 0 to 65535 "
            + "(0: any free port), or -1 for no endpoint");
        port = -1;
      }
    }
    String acl = conf.getTrimmed(DP_ACL_FILE, "");
    long window = parsePositiveLong(conf, DP_SIGNATURE_WINDOW_MS, 300_000, problems);
    return new DpHttp(port, conf.getTrimmed(DP_HTTP_HOST, "0.0.0.0"),
        acl.isEmpty() ? null : Paths.get(acl), window);
  }

  /**
   * The state directory, or null when unset. A URI's scheme must name a file system this RM
   * can load, found at start rather than at the first write minutes later.
   */
  private static org.apache.hadoop.fs.Path parseStateDir(Configuration conf,
      List<String> problems) {
    String raw = conf.getTrimmed(STATE_DIR, "");
    if (raw.isEmpty()) {
      return null;
    }
    org.apache.hadoop.fs.Path dir;
    try {
      dir = new org.apache.hadoop.fs.Path(raw);
    } catch (IllegalArgumentException e) {
      problems.add(STATE_DIR + ": value '" + raw + "' is not a path or URI (" + e.getMessage()
          + ")");
      return null;
    }
    String scheme = dir.toUri().getScheme();
    if (scheme != null) {
      try {
        FileSystem.getFileSystemClass(scheme, conf);
      } catch (java.io.IOException e) {
        problems.add(STATE_DIR + ": value '" + raw + "' names file system scheme '" + scheme
            + "', which this ResourceManager cannot load (" + e.getMessage() + ")");
        return null;
      }
    }
    return dir;
  }

  /**
   * A warning for each key under the shim's prefixes that the shim does not read (a misspelt
   * key would otherwise be ignored without a word), naming the known key it was probably meant
   * to be. The core warns about unknown keys under its own prefixes when it builds its
   * configuration.
   */
  public static List<String> unknownKeyWarnings(Configuration conf) {
    List<String> warnings = new ArrayList<>();
    for (String key : new TreeMap<>(conf.getPropsWithPrefix(PREFIX)).keySet()) {
      String full = PREFIX + key;
      if (SHIM_PREFIXES.stream().anyMatch(full::startsWith) && !SHIM_KEYS.contains(full)) {
        warnings.add("unknown setting " + full + "=" + conf.get(full) + " is ignored"
            + nearestShimKey(full).map(near -> " (did you mean " + near + "?)").orElse("")
            + "; Rackwise shim keys are: " + String.join(", ", SHIM_KEYS));
      }
    }
    return warnings;
  }

  /**
   * The shim key closest to {@code key} when it is close enough to be the one meant: at most a
   * third of the characters after the common prefix differ (a typo or two, not merely a key
   * under the same prefix). The core applies the same rule to its keys.
   */
  private static Optional<String> nearestShimKey(String key) {
    LevenshteinDistance distance = LevenshteinDistance.getDefaultInstance();
    return SHIM_KEYS.stream()
        .filter(known -> distance.apply(key, known) * 3 <= known.length() - PREFIX.length())
        .min(Comparator.comparingInt((String known) -> distance.apply(key, known)));
  }

  private static boolean parseBoolean(Configuration conf, String key, boolean defaultValue,
      List<String> problems) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return defaultValue;
    }
    if (raw.equalsIgnoreCase("true") || raw.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(raw);
    }
    problems.add(key + ": value '" + raw + "' must be true or false");
    return defaultValue;
  }

  private static long parsePositiveLong(Configuration conf, String key, long defaultValue,
      List<String> problems) {
    return parsePositive(conf, key, defaultValue, Long.MAX_VALUE,
        "a positive whole number of milliseconds", problems);
  }

  private static long parsePositive(Configuration conf, String key, long defaultValue, long max,
      String expected, List<String> problems) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return defaultValue;
    }
    try {
      long value = Long.parseLong(raw);
      if (value > 0 && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(key + ": value '" + raw + "' must be " + expected
        + (max < Long.MAX_VALUE ? " up to " + max : ""));
    return defaultValue;
  }

  public boolean nativeRequired() {
    return nativeRequired;
  }

  /** Where learned state is persisted (scheme-less: local), or null when persistence is off. */
  public org.apache.hadoop.fs.Path stateDir() {
    return stateDir;
  }

  public long stateFlushIntervalMs() {
    return stateFlushIntervalMs;
  }

  public int learnedMaxEntries() {
    return learnedMaxEntries;
  }

  public boolean statsEnabled() {
    return statsEnabled;
  }

  public long statsPollIntervalMs() {
    return statsPollIntervalMs;
  }

  public int statsTimeoutMs() {
    return statsTimeoutMs;
  }

  /** The network load feed file, or null when there is none. */
  public Path feedFile() {
    return feedFile;
  }

  public long feedPollIntervalMs() {
    return feedPollIntervalMs;
  }

  /** The host-class file of relative CPU speeds, or null when there is none. */
  public Path hostClassFile() {
    return hostClassFile;
  }

  public DpHttp dpHttp() {
    return dpHttp;
  }
}
