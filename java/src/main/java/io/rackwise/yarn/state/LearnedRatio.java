package io.rackwise.yarn.state;

import java.util.Objects;

/**
 * The shuffle/input ratio the core has learned for a recurring job name: the Java side of
 * the core's {@code LearnedRatio} ({@code native/rackwise-core/src/protocol.rs}), which
 * serialises as {@code {"job_name": ..., "ratio": ..., "runs": ...}}.
 *
 * <p>The constructor refuses what the core would refuse (a NaN or negative ratio, negative
 * runs), so an invalid value can never reach the history file and make it unreadable at the
 * next start.
 *
 * @param jobName the job name the ratio belongs to, not blank
 * @param ratio   map-output bytes ÷ map-input bytes, finite and ≥ 0
 * @param runs    how many completed runs contributed, ≥ 0 (the core's {@code u32}; Java's
 *                {@code int} range is far beyond any real count)
 */
public record LearnedRatio(String jobName, double ratio, int runs) {

  public LearnedRatio {
    Objects.requireNonNull(jobName, "jobName");
    if (jobName.isBlank()) {
      throw new IllegalArgumentException("learned ratio with a blank job name");
    }
    if (!Double.isFinite(ratio) || ratio < 0) {
      throw new IllegalArgumentException("learned ratio of '" + jobName
          + "' must be a finite number >= 0, got " + ratio);
    }
    if (runs < 0) {
      throw new IllegalArgumentException("learned ratio of '" + jobName
          + "' must have runs >= 0, got " + runs);
    }
  }
}
