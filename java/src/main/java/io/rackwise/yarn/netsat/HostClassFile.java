package io.rackwise.yarn.netsat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads an operator's host-class file: each host's CPU speed relative to nominal, the input of
 * DRMJS's CPU term. One rule a line:
 *
 * <pre>
 * # host name or pattern     relative speed
 * node17.example.com         1.5
 * gen2-.*\.example\.com      0.8
 * </pre>
 *
 * The first field is a Java regular expression that must match the whole host name (a plain
 * host name matches itself); the second is the speed, {@link HostFigure#CPU_SPEED}'s range. The
 * first rule that matches a host gives its speed; a host no rule matches runs at 1.0. Blank lines
 * and text after {@code #} are ignored.
 *
 * <p>A background thread re-reads the file when its modification time changes, never the
 * heartbeat path, and sends every known host's speed to the core as its {@code cpu_speed}
 * figure; a node that joins later gets its speed when it is added ({@link #speedOf}). A file with
 * a bad line is reported (file, line, value, reason) and ignored as a whole: the last good rules
 * and the speeds the core has stay.
 */
public final class HostClassFile extends PolledFile {
  private static final Logger LOG = LoggerFactory.getLogger(HostClassFile.class);
  public static final String THREAD_NAME = "rackwise-host-class-file";
  /** The speed of a host no rule matches. */
  public static final double NOMINAL_SPEED = 1.0;

  /** One line of the file. */
  private record Rule(Pattern hosts, double speed) {
  }

  private final NetworkLoadFeed.Sink sink;
  private final Supplier<Collection<String>> knownHosts;
  /** The last good rules; empty (every host nominal) until a file was read. */
  private volatile List<Rule> rules = List.of();

  /**
   * @param knownHosts the hosts of the cluster's nodes now, whose speeds are sent on each read
   */
  public HostClassFile(Path file, long pollIntervalMs, NetworkLoadFeed.Sink sink,
      Supplier<Collection<String>> knownHosts) {
    super(file, pollIntervalMs, THREAD_NAME, "host-class file", "hosts keep their last speeds");
    this.sink = sink;
    this.knownHosts = knownHosts;
  }

  /** The relative CPU speed of {@code host} by the last good rules. */
  public double speedOf(String host) {
    for (Rule rule : rules) {
      if (rule.hosts().matcher(host).matches()) {
        return rule.speed();
      }
    }
    return NOMINAL_SPEED;
  }

  @Override
  protected boolean read(FileTime modified) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      LOG.error("host-class file {} cannot be read and is ignored, the last good speeds stay: {}",
          file, e.toString());
      return false;
    }
    List<String> problems = new ArrayList<>();
    List<Rule> parsed = parse(lines, problems);
    if (!problems.isEmpty()) {
      LOG.error("host-class file {} is ignored, the last good speeds stay: {}", file,
          String.join("; ", problems));
      return false;
    }
    rules = parsed;
    long now = modified.toMillis();
    for (String host : knownHosts.get()) {
      sink.hostFigures(host, Map.of(HostFigure.CPU_SPEED, speedOf(host)), now);
    }
    LOG.info("host-class file {}: {} rules read; speeds sent for the cluster's hosts", file,
        parsed.size());
    return true;
  }

  /** The rules of the file's lines; each bad line adds a problem naming it. */
  private static List<Rule> parse(List<String> lines, List<String> problems) {
    List<Rule> parsed = new ArrayList<>();
    for (int index = 0; index < lines.size(); index++) {
      String line = lines.get(index);
      int comment = line.indexOf('#');
      String content = (comment >= 0 ? line.substring(0, comment) : line).trim();
      if (content.isEmpty()) {
        continue;
      }
      String at = "line " + (index + 1);
      String[] fields = content.split("\\s+");
      if (fields.length != 2) {
        problems.add(at + ": '" + content + "' must be a host name or pattern and a speed");
        continue;
      }
      Pattern hosts;
      try {
        hosts = Pattern.compile(fields[0]);
      } catch (PatternSyntaxException e) {
        problems.add(at + ": host pattern '" + fields[0] + "' is not a regular expression: "
            + e.getDescription());
        continue;
      }
      double speed;
      try {
        speed = Double.parseDouble(fields[1]);
      } catch (NumberFormatException e) {
        speed = Double.NaN;
      }
      if (!HostFigure.CPU_SPEED.accepts(speed)) {
        problems.add(at + ": speed '" + fields[1] + "' must be "
            + HostFigure.CPU_SPEED.expected());
        continue;
      }
      parsed.add(new Rule(hosts, speed));
    }
    return parsed;
  }
}
