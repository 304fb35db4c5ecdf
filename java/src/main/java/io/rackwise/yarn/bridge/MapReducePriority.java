package io.rackwise.yarn.bridge;

/**
 * The request priorities a MapReduce ApplicationMaster uses ({@code RMContainerAllocator}), which
 * is how the core tells the kind of task an ask is for; the core reads them the same way
 * ({@code TaskKind::of_mapreduce_priority} in {@code protocol.rs}).
 */
public final class MapReducePriority {
  // The AM asks at 0; AMs are FairScheduler's business and never in a plan.
  public static final int RERUN_MAP = 5;
  public static final int REDUCE = 10;
  public static final int OPPORTUNISTIC_MAP = 19;
  public static final int MAP = 20;

  private MapReducePriority() {
  }

  /** Whether a plan may name this priority: a map or reduce task's (AMs are never steered). */
  public static boolean isTask(int priority) {
    return priority == RERUN_MAP || priority == REDUCE || priority == OPPORTUNISTIC_MAP
        || priority == MAP;
  }
}
