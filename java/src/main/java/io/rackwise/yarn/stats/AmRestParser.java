package io.rackwise.yarn.stats;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads the two MapReduce ApplicationMaster REST documents the poller needs.
 *
 * <p>The shapes follow the AM's JAXB classes in {@code hadoop-mapreduce-client-app}
 * ({@code JobInfo}, {@code JobCounterInfo}, {@code CounterGroupInfo}, {@code CounterInfo})
 * as rendered by its {@code JAXBContextResolver}: Jersey "natural" JSON with the root element
 * kept, so {@code /jobs/{jobid}} answers {@code {"job":{...}}} and {@code /jobs/{jobid}/counters}
 * answers {@code {"jobCounters":{"id":...,"counterGroup":[{"counterGroupName":...,
 * "counter":[{"name":...,"totalCounterValue":...,"mapCounterValue":...,
 * "reduceCounterValue":...}]}]}}}.
 *
 * <p>Anything that does not have that shape is a {@link PollException}: the poller must
 * never turn a page it does not understand into zeros, because the core would take zeros as
 * a real reading and overwrite what it already knows.
 */
final class AmRestParser {

  static final String TASK_COUNTER_GROUP = "org.apache.hadoop.mapreduce.TaskCounter";
  static final String FILE_INPUT_COUNTER_GROUP =
      "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter";
  static final String MAP_OUTPUT_MATERIALIZED_BYTES = "MAP_OUTPUT_MATERIALIZED_BYTES";
  static final String BYTES_READ = "BYTES_READ";

  private AmRestParser() {
  }

  /** Task counts of {@code /jobs/{jobid}}; null when the job has no tasks yet. */
  record JobCounts(int mapsTotal, int mapsCompleted, int reducesTotal) {
  }

  /** The two map-side byte counters of {@code /jobs/{jobid}/counters}. */
  record MapBytes(long input, long output) {
  }

  /**
   * Reads the task counts of a job document.
   *
   * @return the counts, or null while the job is still {@code NEW}: the AM creates the task
   *     objects only when the job initialises, so until then {@code mapsTotal} reads 0
   *     although the job has not yet decided how many maps it has
   */
  static JobCounts parseJob(JsonNode root) throws PollException {
    JsonNode job = root.get("job");
    if (job == null || !job.isObject()) {
      throw new PollException("no \"job\" object in the answer");
    }
    JsonNode state = job.get("state");
    if (state != null && "NEW".equals(state.asText())) {
      return null;
    }
    return new JobCounts(
        intField(job, "mapsTotal"),
        intField(job, "mapsCompleted"),
        intField(job, "reducesTotal"));
  }

  /**
   * Reads the map-side byte counters of a counters document.
   *
   * <p>A well-formed document that lacks a counter means the AM has not counted any such
   * bytes: the AM only lists groups that some task has reported, and a job whose input
   * format is not file based never reports {@code FileInputFormatCounter} at all. Those read
   * as 0; a document without the {@code jobCounters}/{@code counterGroup} structure is an
   * error.
   */
  static MapBytes parseCounters(JsonNode root) throws PollException {
    JsonNode jobCounters = root.get("jobCounters");
    if (jobCounters == null || !jobCounters.isObject()) {
      throw new PollException("no \"jobCounters\" object in the answer");
    }
    JsonNode groups = jobCounters.get("counterGroup");
    long input = 0;
    long output = 0;
    // A job with no counters at all may come back without the array; that is "nothing
    // counted yet", not a malformed answer.
    if (groups != null && !groups.isNull()) {
      for (JsonNode group : asArray(groups, "counterGroup")) {
        String groupName = textField(group, "counterGroupName");
        if (FILE_INPUT_COUNTER_GROUP.equals(groupName)) {
          input = mapCounterValue(group, BYTES_READ, input);
        } else if (TASK_COUNTER_GROUP.equals(groupName)) {
          output = mapCounterValue(group, MAP_OUTPUT_MATERIALIZED_BYTES, output);
        }
      }
    }
    return new MapBytes(input, output);
  }

  private static long mapCounterValue(JsonNode group, String counterName, long absent)
      throws PollException {
    JsonNode counters = group.get("counter");
    if (counters == null || counters.isNull()) {
      return absent;
    }
    for (JsonNode counter : asArray(counters, "counter")) {
      if (counterName.equals(textField(counter, "name"))) {
        return longField(counter, "mapCounterValue");
      }
    }
    return absent;
  }

  /**
   * Jersey's natural notation writes lists as arrays, but older JSON providers wrote a
   * one-element list as a bare object; accepting both costs nothing.
   */
  private static Iterable<JsonNode> asArray(JsonNode node, String what) throws PollException {
    if (node.isArray()) {
      return node;
    }
    if (node.isObject()) {
      return java.util.List.of(node);
    }
    throw new PollException("\"" + what + "\" is neither an array nor an object");
  }

  private static String textField(JsonNode obj, String name) throws PollException {
    JsonNode v = obj.get(name);
    if (v == null || !v.isTextual()) {
      throw new PollException("missing or non-text \"" + name + "\"");
    }
    return v.asText();
  }

  private static int intField(JsonNode obj, String name) throws PollException {
    long v = longField(obj, name);
    if (v > Integer.MAX_VALUE) {
      throw new PollException("\"" + name + "\" out of range: " + v);
    }
    return (int) v;
  }

  private static long longField(JsonNode obj, String name) throws PollException {
    JsonNode v = obj.get(name);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new PollException("missing or non-integer \"" + name + "\"");
    }
    long value = v.asLong();
    if (value < 0) {
      throw new PollException("negative \"" + name + "\": " + value);
    }
    return value;
  }
}
