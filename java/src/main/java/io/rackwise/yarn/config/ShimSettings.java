package io.rackwise.yarn.config;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;

/**
 * The yarn-site.xml keys read by the Java shim itself: those under
 * {@code yarn.scheduler.rackwise.native.}, {@code .state.}, {@code .stats.} and {@code .feed.}. Every other
 * {@code yarn.scheduler.rackwise.*} key belongs to the native core, which owns its defaults and
 * validation (see {@link #coreSettings}); splitting by prefix means each key is parsed in exactly
 * one place and a new shim key never needs registering twice.
 */
public final class ShimSettings {
  public static final String PREFIX = "yarn.scheduler.rackwise.";
  /** A native failure stops the ResourceManager instead of falling back to FairScheduler. */
  public static final String NATIVE_REQUIRED = PREFIX + "native.required";
  /** Directory for state that must survive a restart (learned shuffle ratios). */
  public static final String STATE_DIR = PREFIX + "state.dir";
  /** Poll MapReduce ApplicationMasters for job counters. */
  public static final String STATS_ENABLED = PREFIX + "stats.enabled";
  public static final String STATS_POLL_INTERVAL_MS = PREFIX + "stats.poll-interval-ms";
  public static final String STATS_TIMEOUT_MS = PREFIX + "stats.timeout-ms";
  /** A JSON file of measured cross-rack loads that a monitoring agent rewrites. */
  public static final String FEED_FILE = PREFIX + "feed.file";
  public static final String FEED_POLL_INTERVAL_MS = PREFIX + "feed.poll-interval-ms";

  private static final List<String> SHIM_PREFIXES =
      List.of(PREFIX + "native.", PREFIX + "state.", PREFIX + "stats.", PREFIX + "feed.");

  private final boolean nativeRequired;
  private final Path stateDir;
  private final boolean statsEnabled;
  private final long statsPollIntervalMs;
  private final long statsTimeoutMs;
  private final Path feedFile;
  private final long feedPollIntervalMs;

  private ShimSettings(boolean nativeRequired, Path stateDir, boolean statsEnabled,
      long statsPollIntervalMs, long statsTimeoutMs, Path feedFile, long feedPollIntervalMs) {
    this.nativeRequired = nativeRequired;
    this.stateDir = stateDir;
    this.statsEnabled = statsEnabled;
    this.statsPollIntervalMs = statsPollIntervalMs;
    this.statsTimeoutMs = statsTimeoutMs;
    this.feedFile = feedFile;
    this.feedPollIntervalMs = feedPollIntervalMs;
  }

  /** Reads and validates the shim's keys, reporting every bad one at once. */
  public static ShimSettings from(Configuration conf) throws RackwiseConfigException {
    List<String> problems = new ArrayList<>();
    boolean required = parseBoolean(conf, NATIVE_REQUIRED, false, problems);
    boolean stats = parseBoolean(conf, STATS_ENABLED, true, problems);
    long interval = parsePositiveLong(conf, STATS_POLL_INTERVAL_MS, 5000, problems);
    long timeout = parsePositiveLong(conf, STATS_TIMEOUT_MS, 2000, problems);
    long feedInterval = parsePositiveLong(conf, FEED_POLL_INTERVAL_MS, 1000, problems);
    String dir = conf.getTrimmed(STATE_DIR, "");
    String feed = conf.getTrimmed(FEED_FILE, "");
    if (!problems.isEmpty()) {
      throw RackwiseConfigException.of(problems);
    }
    return new ShimSettings(required, dir.isEmpty() ? null : Paths.get(dir), stats, interval,
        timeout, feed.isEmpty() ? null : Paths.get(feed), feedInterval);
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
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return defaultValue;
    }
    try {
      long value = Long.parseLong(raw);
      if (value > 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(key + ": value '" + raw + "' must be a positive whole number of milliseconds");
    return defaultValue;
  }

  public boolean nativeRequired() {
    return nativeRequired;
  }

  /** Where learned state is persisted, or null when persistence is off. */
  public Path stateDir() {
    return stateDir;
  }

  public boolean statsEnabled() {
    return statsEnabled;
  }

  public long statsPollIntervalMs() {
    return statsPollIntervalMs;
  }

  public long statsTimeoutMs() {
    return statsTimeoutMs;
  }

  /** The network load feed file, or null when there is none. */
  public Path feedFile() {
    return feedFile;
  }

  public long feedPollIntervalMs() {
    return feedPollIntervalMs;
  }
}
