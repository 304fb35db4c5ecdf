package io.rackwise.yarn.netsat;

/**
 * The per-host figures an operator's feed may give (schema version 2), each with the name it has
 * in the feed file and in the {@code host_figures} event the core receives, and the values it
 * accepts. Every figure is optional.
 */
public enum HostFigure {
  /** The host's traffic across racks, Mbit/s; the core adds it up per rack. */
  CROSS_RACK_MBPS("cross_rack_mbps", 0, Double.POSITIVE_INFINITY, true,
      "a number >= 0 (Mbit/s)"),
  /** Share of the host's disk bandwidth in use, 0 = idle, 1 = saturated. */
  DISK_UTILIZATION("disk_utilization", 0, 1, true, "a number from 0 to 1"),
  /** Share of the host's network bandwidth in use, 0 = idle, 1 = saturated. */
  NETWORK_UTILIZATION("network_utilization", 0, 1, true, "a number from 0 to 1"),
  /** The host's CPU speed relative to the cluster's nominal one (1 = nominal). */
  CPU_SPEED("cpu_speed", 0, Double.POSITIVE_INFINITY, false, "a number > 0 (1 = nominal)");

  private final String wireName;
  private final double min;
  private final double max;
  private final boolean minIncluded;
  private final String expected;

  HostFigure(String wireName, double min, double max, boolean minIncluded, String expected) {
    this.wireName = wireName;
    this.min = min;
    this.max = max;
    this.minIncluded = minIncluded;
    this.expected = expected;
  }

  /** The field name in the feed file and in the core's {@code host_figures} event. */
  public String wireName() {
    return wireName;
  }

  /** What a valid value is, for error messages. */
  public String expected() {
    return expected;
  }

  /** Whether {@code value} is a valid figure (finite and within the bounds). */
  public boolean accepts(double value) {
    return Double.isFinite(value) && (minIncluded ? value >= min : value > min) && value <= max;
  }

  /** The figure with this wire name, or null. */
  public static HostFigure ofWireName(String name) {
    for (HostFigure figure : values()) {
      if (figure.wireName.equals(name)) {
        return figure;
      }
    }
    return null;
  }
}
