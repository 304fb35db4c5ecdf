package io.rackwise.yarn.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import io.rackwise.yarn.stats.FakeProxyServer.MapTask;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AmRestParserTest {

  private static final ApplicationId APP = ApplicationId.newInstance(1700000000000L, 7);
  private static final String JOB = JobStatsPoller.jobIdOf(APP);
  private static final String TASK = FakeProxyServer.mapTaskId(APP, 3);

  private static JsonNode json(String text) throws Exception {
    return FakeProxyServer.JSON.readTree(text);
  }

  @Test
  void succeededMapsAreThoseInStateSucceeded() throws Exception {
    JsonNode tasks = json(FakeProxyServer.tasksJson(APP, List.of(
        new MapTask("SUCCEEDED", 1, 1),
        new MapTask("RUNNING", 1, 0),
        new MapTask("SUCCEEDED", 1, 1),
        new MapTask("NEW", 0, 0),
        new MapTask("SCHEDULED", 0, 0),
        new MapTask("FAILED", 0, 0),
        new MapTask("KILLED", 0, 0))));
    assertEquals(Set.of(FakeProxyServer.mapTaskId(APP, 0), FakeProxyServer.mapTaskId(APP, 2)),
        AmRestParser.parseSucceededMaps(tasks, JOB));
  }

  @Test
  void aJobWithoutMapsListsNone() throws Exception {
    // Jersey's natural notation leaves an empty list out, or the whole object.
    assertEquals(Set.of(), AmRestParser.parseSucceededMaps(json("{\"tasks\":null}"), JOB));
    assertEquals(Set.of(), AmRestParser.parseSucceededMaps(json("{\"tasks\":{}}"), JOB));
    assertEquals(Set.of(),
        AmRestParser.parseSucceededMaps(json("{\"tasks\":{\"task\":[]}}"), JOB));
  }

  static Stream<Arguments> malformedTasks() {
    String ok = "\"id\":\"" + TASK + "\",\"state\":\"SUCCEEDED\"";
    return Stream.of(
        Arguments.of("no tasks root", "{\"task\":[{" + ok + "}]}"),
        Arguments.of("tasks not an object", "{\"tasks\":[{" + ok + "}]}"),
        Arguments.of("task list of numbers", "{\"tasks\":{\"task\":[1]}}"),
        Arguments.of("task list a string", "{\"tasks\":{\"task\":\"x\"}}"),
        Arguments.of("task without id", "{\"tasks\":{\"task\":[{\"state\":\"RUNNING\"}]}}"),
        Arguments.of("task without state", "{\"tasks\":{\"task\":[{\"id\":\"" + TASK + "\"}]}}"),
        Arguments.of("state not text",
            "{\"tasks\":{\"task\":[{\"id\":\"" + TASK + "\",\"state\":3}]}}"),
        Arguments.of("reduce task id",
            "{\"tasks\":{\"task\":[{\"id\":\"" + TASK.replace("_m_", "_r_")
                + "\",\"state\":\"SUCCEEDED\"}]}}"),
        Arguments.of("id of another job",
            "{\"tasks\":{\"task\":[{\"id\":\"" + TASK.replace("_0007_", "_0008_")
                + "\",\"state\":\"SUCCEEDED\"}]}}"),
        Arguments.of("id with a path in it",
            "{\"tasks\":{\"task\":[{\"id\":\"" + TASK + "/../../x\",\"state\":\"SUCCEEDED\"}]}}"),
        Arguments.of("same map twice", "{\"tasks\":{\"task\":[{" + ok + "},{" + ok + "}]}}"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedTasks")
  void malformedTasksDocumentIsAnError(String name, String doc) throws Exception {
    JsonNode root = json(doc);
    assertThrows(PollException.class, () -> AmRestParser.parseSucceededMaps(root, JOB));
  }

  @Test
  void taskCountersGiveTheMapSideBytes() throws Exception {
    JsonNode counters = json(FakeProxyServer.taskCountersJson(TASK, 5_000_000_000L, 5_200_000L));
    assertEquals(new AmRestParser.MapBytes(5_000_000_000L, 5_200_000L),
        AmRestParser.parseTaskCounters(counters, TASK));
  }

  @Test
  void countersNotReportedReadAsZero() throws Exception {
    String head = "{\"jobTaskCounters\":{\"id\":\"" + TASK + "\"";
    AmRestParser.MapBytes none = new AmRestParser.MapBytes(0, 0);
    assertEquals(none, AmRestParser.parseTaskCounters(json(head + "}}"), TASK));
    assertEquals(none,
        AmRestParser.parseTaskCounters(json(head + ",\"taskCounterGroup\":null}}"), TASK));
    assertEquals(none, AmRestParser.parseTaskCounters(json(head + ",\"taskCounterGroup\":["
        + "{\"counterGroupName\":\"org.apache.hadoop.mapreduce.TaskCounter\"}]}}"), TASK));
  }

  static Stream<Arguments> malformedCounters() {
    String head = "{\"jobTaskCounters\":{\"id\":\"" + TASK + "\",\"taskCounterGroup\":";
    String taskGroup = "{\"counterGroupName\":\"org.apache.hadoop.mapreduce.TaskCounter\","
        + "\"counter\":";
    return Stream.of(
        Arguments.of("job counters, not task counters",
            "{\"jobCounters\":{\"id\":\"" + JOB + "\",\"counterGroup\":[]}}"),
        Arguments.of("no id", "{\"jobTaskCounters\":{\"taskCounterGroup\":[]}}"),
        Arguments.of("another task's counters",
            "{\"jobTaskCounters\":{\"id\":\"" + FakeProxyServer.mapTaskId(APP, 4)
                + "\",\"taskCounterGroup\":[]}}"),
        Arguments.of("group without name", head + "[{\"counter\":[]}]}}"),
        Arguments.of("groups a number", head + "7}}"),
        Arguments.of("counter without name", head + "[" + taskGroup + "[{\"value\":1}]}]}}"),
        Arguments.of("counter without value", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\"}]}]}}"),
        Arguments.of("job counter fields instead of value", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"mapCounterValue\":1}]}]}}"),
        Arguments.of("value not a number", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"value\":\"lots\"}]}]}}"),
        Arguments.of("value a fraction", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"value\":1.5}]}]}}"),
        Arguments.of("negative value", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"value\":-1}]}]}}"),
        Arguments.of("value beyond a long", head + "[" + taskGroup
            + "[{\"name\":\"MAP_OUTPUT_MATERIALIZED_BYTES\",\"value\":99999999999999999999}]}]}}"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedCounters")
  void malformedTaskCountersDocumentIsAnError(String name, String doc) throws Exception {
    JsonNode root = json(doc);
    assertThrows(PollException.class, () -> AmRestParser.parseTaskCounters(root, TASK));
  }
}
