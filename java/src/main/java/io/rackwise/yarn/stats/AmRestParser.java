package io.rackwise.yarn.stats;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the MapReduce ApplicationMaster REST documents the poller needs.
 *
 * <p>The shapes follow the AM's JAXB classes in {@code hadoop-mapreduce-client-app}
 * ({@code JobInfo}; {@code TasksInfo}, {@code TaskInfo}; {@code JobTaskCounterInfo},
 * {@code TaskCounterGroupInfo}, {@code TaskCounterInfo}) as rendered by its
 * {@code JAXBContextResolver}: Jersey "natural" JSON with the root element kept, so
 * <ul>
 *   <li>{@code /jobs/{jobid}} answers {@code {"job":{...,"state":...,"mapsTotal":...,
 *       "mapsCompleted":...,"reducesTotal":...}}};</li>
 *   <li>{@code /jobs/{jobid}/tasks?type=m} answers {@code {"tasks":{"task":[{"startTime":...,
 *       "finishTime":...,"elapsedTime":...,"progress":...,"id":"task_..._m_000003",
 *       "state":"SUCCEEDED","type":"MAP","successfulAttempt":...,"status":...}]}}}, where
 *       {@code state} is a {@code TaskState}: NEW, SCHEDULED, RUNNING, SUCCEEDED, FAILED or
 *       KILLED;</li>
 *   <li>{@code /jobs/{jobid}/tasks/{taskid}/counters} answers
 *       {@code {"jobTaskCounters":{"id":"task_...","taskCounterGroup":[{"counterGroupName":...,
 *       "counter":[{"name":...,"value":...}]}]}}}, the counters of the task's best attempt
 *       (for a succeeded task, its successful one).</li>
 * </ul>
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
  static final String SUCCEEDED = "SUCCEEDED";

  private AmRestParser() {
  }

  /** Task counts of {@code /jobs/{jobid}}; null when the job has no tasks yet. */
  record JobCounts(int mapsTotal, int mapsCompleted, int reducesTotal) {
  }

  /** The two map-side byte counters of one map task. */
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
   * Reads the ids of the map tasks of a tasks document ({@code type=m}) that have SUCCEEDED.
   *
   * <p>Every id must be a map task id of {@code jobId} ({@code job_<ts>_<n>} → {@code
   * task_<ts>_<n>_m_<number>}): the poller puts these ids into its next URLs, so an id of
   * any other form is refused rather than requested.
   */
  static Set<String> parseSucceededMaps(JsonNode root, String jobId) throws PollException {
    JsonNode tasks = root.get("tasks");
    if (tasks == null) {
      throw new PollException("no \"tasks\" in the answer");
    }
    Set<String> succeeded = new HashSet<>();
    // Jersey writes a job without tasks of that type as "tasks":null or without the "task"
    // list; that is "no map has succeeded", not a malformed answer.
    if (tasks.isNull()) {
      return succeeded;
    }
    if (!tasks.isObject()) {
      throw new PollException("\"tasks\" is not an object");
    }
    JsonNode list = tasks.get("task");
    if (list == null || list.isNull()) {
      return succeeded;
    }
    Pattern mapTaskId = mapTaskIdPattern(jobId);
    for (JsonNode task : asArray(list, "task")) {
      String id = textField(task, "id");
      if (!mapTaskId.matcher(id).matches()) {
        throw new PollException("\"" + id + "\" is not a map task id of " + jobId);
      }
      if (SUCCEEDED.equals(textField(task, "state")) && !succeeded.add(id)) {
        throw new PollException("map task " + id + " listed twice");
      }
    }
    return succeeded;
  }

  /**
   * Reads the map-side byte counters of one task's counters document.
   *
   * <p>A well-formed document that lacks a counter means the task has not counted any such
   * bytes: a map whose input format is not file based never reports
   * {@code FileInputFormatCounter} at all. Those read as 0; a document without the
   * {@code jobTaskCounters} structure, or about another task, is an error.
   */
  static MapBytes parseTaskCounters(JsonNode root, String taskId) throws PollException {
    JsonNode taskCounters = root.get("jobTaskCounters");
    if (taskCounters == null || !taskCounters.isObject()) {
      throw new PollException("no \"jobTaskCounters\" object in the answer");
    }
    String id = textField(taskCounters, "id");
    if (!taskId.equals(id)) {
      throw new PollException("asked for the counters of " + taskId + ", got those of " + id);
    }
    JsonNode groups = taskCounters.get("taskCounterGroup");
    long input = 0;
    long output = 0;
    // A task with no counters at all may come back without the list; that is "nothing
    // counted", not a malformed answer.
    if (groups != null && !groups.isNull()) {
      for (JsonNode group : asArray(groups, "taskCounterGroup")) {
        String groupName = textField(group, "counterGroupName");
        if (FILE_INPUT_COUNTER_GROUP.equals(groupName)) {
          input = counterValue(group, BYTES_READ, input);
        } else if (TASK_COUNTER_GROUP.equals(groupName)) {
          output = counterValue(group, MAP_OUTPUT_MATERIALIZED_BYTES, output);
        }
      }
    }
    return new MapBytes(input, output);
  }

  private static Pattern mapTaskIdPattern(String jobId) {
    // The poller derives the job id itself, so a bad one is a bug here, not a bad answer.
    if (!jobId.startsWith("job_")) {
      throw new IllegalArgumentException("not a job id: " + jobId);
    }
    return Pattern.compile(Pattern.quote("task_" + jobId.substring("job_".length()) + "_m_")
        + "[0-9]+");
  }

  private static long counterValue(JsonNode group, String counterName, long absent)
      throws PollException {
    JsonNode counters = group.get("counter");
    if (counters == null || counters.isNull()) {
      return absent;
    }
    for (JsonNode counter : asArray(counters, "counter")) {
      if (counterName.equals(textField(counter, "name"))) {
        return longField(counter, "value");
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
