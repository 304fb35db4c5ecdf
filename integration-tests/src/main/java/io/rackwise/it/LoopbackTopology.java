package io.rackwise.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Where each simulated machine lives and which rack it is in.
 *
 * <p>Node {@code n} (0-based) of rack {@code r} (0-based) is the loopback address
 * {@code 127.0.(r+1).(n+2)} on rack {@code /rack(r+1)}. Linux routes all of 127.0.0.0/8 to
 * {@code lo}, so daemons can bind these addresses without any setup, and reverse DNS of an
 * address missing from /etc/hosts yields the IP literal, which is then also the host name YARN
 * and HDFS report. The last octet starts at 2 because distributions map {@code 127.0.1.1} to
 * the machine's own name in /etc/hosts, which would change the reported host name.
 *
 * <p>The rack table is one file per JVM covering every address the scheme can produce, not
 * just the current layout: YARN's {@code RackResolver} is initialised once per JVM and
 * {@code TableMapping} reads its file once, so a second cluster started in the same JVM (the
 * compare runner starts two) must find its hosts in the table the first cluster installed.
 */
public final class LoopbackTopology {
  /** Upper bounds of the address scheme (third and fourth octet). */
  public static final int MAX_RACKS = 8;
  public static final int MAX_NODES_PER_RACK = 32;

  private static Path tableFile;

  private LoopbackTopology() {
  }

  /** The loopback address (also the host name Hadoop reports) of one node. */
  public static String host(int rack, int node) {
    check(rack, node);
    return "127.0." + (rack + 1) + "." + (node + 2);
  }

  /** The network location the rack table gives a rack index. */
  public static String rackName(int rack) {
    check(rack, 0);
    return "/rack" + (rack + 1);
  }

  /**
   * The rack of a host produced by {@link #host}, or {@code null} for any other name. Used by
   * the job helpers to attribute task attempts to racks without asking a cluster.
   */
  public static String rackOf(String host) {
    String[] octets = host.split("\\.");
    if (octets.length != 4 || !octets[0].equals("127") || !octets[1].equals("0")) {
      return null;
    }
    try {
      int rack = Integer.parseInt(octets[2]) - 1;
      int node = Integer.parseInt(octets[3]) - 2;
      if (rack < 0 || rack >= MAX_RACKS || node < 0 || node >= MAX_NODES_PER_RACK) {
        return null;
      }
      return rackName(rack);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * The {@code TableMapping} file for this JVM, written on first use under {@code dir}; later
   * calls return the same file whatever directory they pass (see the class comment).
   */
  public static synchronized Path tableFile(Path dir) {
    if (tableFile != null && Files.isRegularFile(tableFile)) {
      return tableFile;
    }
    StringBuilder table = new StringBuilder();
    for (int r = 0; r < MAX_RACKS; r++) {
      for (int n = 0; n < MAX_NODES_PER_RACK; n++) {
        table.append(host(r, n)).append(' ').append(rackName(r)).append('\n');
      }
    }
    try {
      Files.createDirectories(dir);
      Path target = dir.toAbsolutePath().resolve("topology.table");
      // Written to a temp file and moved so a concurrently reading child JVM never sees half
      // a table.
      Path tmp = Files.createTempFile(dir, "topology", ".tmp");
      Files.writeString(tmp, table, StandardCharsets.US_ASCII);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
      tableFile = target;
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the rack table under " + dir, e);
    }
  }

  private static void check(int rack, int node) {
    if (rack < 0 || rack >= MAX_RACKS || node < 0 || node >= MAX_NODES_PER_RACK) {
      throw new IllegalArgumentException("rack " + rack + " node " + node
          + " outside the loopback scheme (" + MAX_RACKS + " racks x " + MAX_NODES_PER_RACK
          + " nodes)");
    }
  }
}
