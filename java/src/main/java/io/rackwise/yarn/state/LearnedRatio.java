package io.rackwise.yarn.state;

import java.util.Objects;
import java.util.OptionalDouble;

/**
 * What the core has learned for a recurring job name: the Java side of the core's
 * {@code LearnedRatio} ({@code native/rackwise-core/src/protocol.rs}), which serialises as
 * {@code {"job_name": ..., "ratio": ..., "runs": ..., "map_ms": ..., "reduce_ms": ...,
 * "profile_runs": ...}}: the shuffle/input ratio, and the mean map and reduce task times FRESH
 * takes as a job's profile before it has finished tasks of its own. Histories written before
 * the task times were kept have none.
 *
 * <p>The constructor refuses what the core would refuse (a NaN or negative ratio or task time,
 * negative runs), so an invalid value can never reach the history file and make it unreadable
 * at the next start.
 *
 * @param jobName     the job name the entry belongs to, not blank
 * @param ratio       map-output bytes ÷ map-input bytes, finite and ≥ 0
 * @param runs        how many completed runs contributed to the ratio, ≥ 0 (0: no ratio known;
 *                    the core's {@code u32}; Java's {@code int} range is far beyond any real
 *                    count)
 * @param mapMs       mean map task time in ms, finite and ≥ 0, if learned
 * @param reduceMs    mean reduce task time in ms, finite and ≥ 0, if learned
 * @param profileRuns how many completed runs contributed task times, ≥ 0
 */
public record LearnedRatio(String jobName, double ratio, int runs, OptionalDouble mapMs,
    OptionalDouble reduceMs, int profileRuns) {

  public LearnedRatio {
    Objects.requireNonNull(jobName, "jobName");
    Objects.requireNonNull(mapMs, "mapMs");
    Objects.requireNonNull(reduceMs, "reduceMs");
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
    checkTime(jobName, "map", mapMs);
    checkTime(jobName, "reduce", reduceMs);
    if (profileRuns < 0) {
      throw new IllegalArgumentException("learned task times of '" + jobName
          + "' must have profile runs >= 0, got " + profileRuns);
    }
  }

  /** An entry with a ratio and no task times (as every entry was before FRESH kept them). */
  public LearnedRatio(String jobName, double ratio, int runs) {
    this(jobName, ratio, runs, OptionalDouble.empty(), OptionalDouble.empty(), 0);
  }

  private static void checkTime(String jobName, String kind, OptionalDouble ms) {
    if (ms.isPresent() && (!Double.isFinite(ms.getAsDouble()) || ms.getAsDouble() < 0)) {
      throw new IllegalArgumentException("learned " + kind + " task time of '" + jobName
          + "' must be a finite number of ms >= 0, got " + ms.getAsDouble());
    }
  }
}
