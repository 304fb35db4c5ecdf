package io.rackwise.yarn.compat;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The Hadoop versions the scheduler runs on, and the check that refuses any other at start.
 *
 * <p>RackwiseFairScheduler subclasses FairScheduler and overrides package-private methods of
 * FairScheduler and FSAppAttempt; on a Hadoop whose signatures differ, an override would
 * silently stop applying or a call would fail on the scheduler thread, which exits the
 * ResourceManager. So the shim runs only on release lines its source compiles and its tests
 * pass against (docs/compatibility.md says how each line is checked), and refuses every other
 * at start, before any app reaches it.
 */
public final class HadoopVersions {
  /** One supported release line: its major and minor version, and its oldest patch release. */
  private static final class Line {
    final int major;
    final int minor;
    final int oldestPatch;

    Line(int major, int minor, int oldestPatch) {
      this.major = major;
      this.minor = minor;
      this.oldestPatch = oldestPatch;
    }

    boolean admits(int major, int minor, int patch) {
      return this.major == major && this.minor == minor && patch >= oldestPatch;
    }

    @Override
    public String toString() {
      String any = major + "." + minor + ".x";
      return oldestPatch == 0 ? any : major + "." + minor + "." + oldestPatch + " or a later "
          + any;
    }
  }

  /** 3.3 from 3.3.6 (the release tested; older 3.3 ones are not), and all of 3.4. */
  private static final List<Line> SUPPORTED = List.of(new Line(3, 3, 6), new Line(3, 4, 0));

  private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)(\\D.*)?");

  private HadoopVersions() {}

  /**
   * Refuses a Hadoop version the scheduler does not support.
   *
   * @param version the running Hadoop's version, as {@code VersionInfo.getVersion()} reports it
   * @throws IllegalStateException the version is not supported; the message names it, the
   *     supported ones and what to do
   */
  public static void check(String version) {
    Matcher parsed = VERSION.matcher(version == null ? "" : version);
    if (parsed.matches()) {
      int major = Integer.parseInt(parsed.group(1));
      int minor = Integer.parseInt(parsed.group(2));
      int patch = Integer.parseInt(parsed.group(3));
      if (SUPPORTED.stream().anyMatch(line -> line.admits(major, minor, patch))) {
        return;
      }
    }
    throw new IllegalStateException("RackwiseFairScheduler does not support Hadoop " + version
        + " (this ResourceManager's version): it supports " + supported() + ". Use a "
        + "supported Hadoop, or set yarn.resourcemanager.scheduler.class back to "
        + "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler");
  }

  /** The supported versions, for messages and documentation. */
  public static String supported() {
    return SUPPORTED.stream().map(Line::toString).collect(Collectors.joining(" and "));
  }
}
