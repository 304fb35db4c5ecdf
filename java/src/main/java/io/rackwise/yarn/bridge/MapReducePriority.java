package io.rackwise.yarn.bridge;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rackwise.wire.v1.MapReduceFacts;
import io.rackwise.yarn.nativecore.NativeCore;
import io.rackwise.yarn.nativecore.NativeLibraryLoader;
import io.rackwise.yarn.nativecore.NativeProtocolException;

/**
 * The request priorities a MapReduce ApplicationMaster uses ({@code RMContainerAllocator}), which
 * is how the core tells the kind of task an ask is for. The core defines them
 * ({@code rackwise_core::mapreduce}); this class reads them from the native library when first
 * used (the library is loaded whenever the core steers, the only time they are needed), so the
 * shim and the core cannot disagree.
 */
public final class MapReducePriority {
  private static final MapReduceFacts FACTS = read();

  /** The AM's own container: FairScheduler's business, never in a plan. */
  public static final int AM = FACTS.getAmPriority();
  /** A map re-run after a fetch failure. */
  public static final int RERUN_MAP = FACTS.getRerunMapPriority();
  public static final int REDUCE = FACTS.getReducePriority();
  public static final int OPPORTUNISTIC_MAP = FACTS.getOpportunisticMapPriority();
  /** An ordinary map, the asks that carry split locations. */
  public static final int MAP = FACTS.getMapPriority();

  private MapReducePriority() {
  }

  /**
   * Reads the priorities from the library now, if not yet done: the engine's start calls it so
   * that a library unable to give them fails there, inside the fallback net.
   */
  static void load() {
    // Calling any static method initialises the class, which reads FACTS.
  }

  /** Whether a plan may name this priority: a map or reduce task's (AMs are never steered). */
  public static boolean isTask(int priority) {
    return priority == RERUN_MAP || priority == REDUCE || priority == OPPORTUNISTIC_MAP
        || priority == MAP;
  }

  private static MapReduceFacts read() {
    NativeLibraryLoader.LoadResult load = NativeLibraryLoader.load();
    if (!load.loaded()) {
      throw new IllegalStateException("the MapReduce priorities come from the native library, "
          + "which is not loaded: " + load.message());
    }
    MapReduceFacts facts;
    try {
      facts = MapReduceFacts.parseFrom(NativeCore.mapreduceFacts());
    } catch (InvalidProtocolBufferException e) {
      throw new NativeProtocolException("rackwise.wire.v1.MapReduceFacts is malformed: "
          + e.getMessage());
    }
    if (!facts.hasAmPriority() || !facts.hasRerunMapPriority() || !facts.hasReducePriority()
        || !facts.hasOpportunisticMapPriority() || !facts.hasMapPriority()) {
      throw new NativeProtocolException("rackwise.wire.v1.MapReduceFacts lacks a priority "
          + "(required: all five): " + facts);
    }
    return facts;
  }
}
