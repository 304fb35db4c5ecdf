package io.rackwise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The job checks both schedulers must pass: a 2-rack x 2-node cluster with HDFS runs
 * WordCount, TeraGen and TeraSort from hadoop-mapreduce-examples. Subclasses choose the
 * scheduler and may add checks of their own. One cluster per class (start-up costs ~15 s).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// Generous (a job takes 20-75 s here) but finite: a stuck job fails its test, not the build.
@Timeout(value = 6, unit = TimeUnit.MINUTES)
abstract class AbstractJobsIT {
  static final int RACKS = 2;
  static final int NODES_PER_RACK = 2;

  /** Smaller than the compare runner's mix: the suite has to stay within minutes. */
  static final JobMix.Settings MIX = new JobMix.Settings(3, 4L << 20, 2, 200_000, 3, 3, false,
      false, OptionalDouble.empty());

  MultiRackCluster cluster;
  ExampleJobs jobs;
  final List<JobResult> results = new ArrayList<>();

  /** Scheduler class, allocation file and extra settings of the cluster under test. */
  abstract MultiRackCluster.Builder configure(MultiRackCluster.Builder builder);

  @BeforeAll
  void startCluster() throws Exception {
    cluster = configure(MultiRackCluster.builder(getClass().getSimpleName())
        .racks(RACKS)
        .nodesPerRack(NODES_PER_RACK))
        .start();
    jobs = new ExampleJobs(cluster);
  }

  @AfterAll
  void stopCluster() {
    // Into the failsafe report, for a look at times, counters and placement.
    results.forEach(r -> System.out.println(getClass().getSimpleName() + " " + r));
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void schedulerSeesEveryNodeOnItsOwnRack() throws Exception {
    var racks = cluster.schedulerNodeRacks();
    assertEquals(RACKS * NODES_PER_RACK, racks.size(), "scheduler nodes: " + racks);
    assertEquals(RACKS, new TreeSet<>(racks.values()).size(), "distinct racks: " + racks);
    racks.forEach((node, rack) ->
        assertEquals(cluster.rackOf(node), rack, "rack of scheduler node " + node));
    // HDFS sees the same topology, so block locations (and map split hosts) line up with
    // the NodeManagers.
    assertEquals(cluster.expectedRacks(), new java.util.TreeMap<>(cluster.dataNodeRacks()));
  }

  @Test
  @Order(2)
  void wordCountSucceedsAndCountsEveryWord() throws Exception {
    org.apache.hadoop.fs.Path input = JobMix.prepare(cluster, MIX);
    org.apache.hadoop.fs.Path output = cluster.dataPath("wordcount-out");
    JobResult r = jobs.wordCount("wordcount", input, output, MIX.wordCountReduces(),
        JobMix.ADHOC_QUEUE);
    results.add(r);
    assertTrue(r.succeeded(), "wordcount failed: " + r);
    assertEquals(MIX.wordCountFiles(), r.counter(JobCounter.TOTAL_LAUNCHED_MAPS), r.toString());
    assertEquals(MIX.wordCountReduces(), r.counter(JobCounter.TOTAL_LAUNCHED_REDUCES));
    assertShuffled(r);
    // Every map input came from HDFS on one of our hosts: each map is data-local,
    // rack-local or off-rack, and the AM could tell which.
    assertEquals(r.counter(JobCounter.TOTAL_LAUNCHED_MAPS),
        r.counter(JobCounter.DATA_LOCAL_MAPS) + r.counter(JobCounter.RACK_LOCAL_MAPS)
            + r.counter(JobCounter.OTHER_LOCAL_MAPS), r.toString());
    // The counts add up to the words the maps emitted: the output is complete.
    assertEquals(r.counter(TaskCounter.MAP_OUTPUT_RECORDS), sumCounts(output));
  }

  @Test
  @Order(3)
  void teraGenThenTeraSortSucceed() throws Exception {
    org.apache.hadoop.fs.Path gen = cluster.dataPath("teragen-out");
    org.apache.hadoop.fs.Path sorted = cluster.dataPath("terasort-out");
    JobResult g = jobs.teraGen("teragen", MIX.teraRows(), MIX.teraGenMaps(), gen,
        JobMix.BATCH_QUEUE);
    results.add(g);
    assertTrue(g.succeeded(), "teragen failed: " + g);
    assertEquals(MIX.teraRows(), g.counter(TaskCounter.MAP_OUTPUT_RECORDS));

    JobResult s = jobs.teraSort("terasort", gen, sorted, MIX.teraSortReduces(),
        JobMix.BATCH_QUEUE, MIX.teraSortStatedRatio());
    results.add(s);
    assertTrue(s.succeeded(), "terasort failed: " + s);
    assertEquals(MIX.teraSortReduces(), s.counter(JobCounter.TOTAL_LAUNCHED_REDUCES));
    assertEquals(MIX.teraRows(), s.counter(TaskCounter.REDUCE_OUTPUT_RECORDS));
    assertShuffled(s);
  }

  /**
   * Whether the jobs' tasks must have run on every rack. True for stock FairScheduler, which
   * spreads them; a network-aware policy may keep a job on one rack on purpose.
   */
  boolean expectTasksOnEveryRack() {
    return true;
  }

  @Test
  @Order(4)
  void tasksRanOnTheLoopbackNodes() {
    Set<String> racks = new TreeSet<>();
    for (JobResult r : results) {
      r.mapHosts().forEach(h -> racks.add(String.valueOf(cluster.rackOf(h))));
      r.reduceHosts().forEach(h -> racks.add(String.valueOf(cluster.rackOf(h))));
    }
    assertFalse(results.isEmpty(), "no job ran");
    // Every attempt ran on one of our NodeManagers (its host maps to a rack), so containers,
    // shuffle and completion events all work across the 127.0.r.n addresses.
    assertTrue(cluster.expectedRacks().values().containsAll(racks),
        "task hosts outside the cluster: " + racks + "; results: " + results);
    if (expectTasksOnEveryRack()) {
      assertEquals(new TreeSet<>(cluster.expectedRacks().values()), racks,
          "racks that ran tasks; results: " + results);
    }
  }

  @Test
  @Order(5)
  void containerJvmsGetTheJdk17AddOpens() throws Exception {
    // Hadoop 3.4 expands <ADD_OPENS> in MR launch commands on JDK 17+
    // (mapreduce.jvm.add-opens-as-default). Prove it happened instead of assuming it.
    List<Path> scripts = cluster.launchScripts();
    assertFalse(scripts.isEmpty(), "no container launch scripts kept");
    int withOpens = 0;
    for (Path script : scripts) {
      String text = Files.readString(script);
      if (text.contains("org.apache.hadoop.mapred.YarnChild")
          || text.contains("org.apache.hadoop.mapreduce.v2.app.MRAppMaster")) {
        assertTrue(text.contains("--add-opens=java.base/java.lang=ALL-UNNAMED"),
            "no add-opens in " + script);
        withOpens++;
      }
    }
    assertTrue(withOpens > 0, "no MR container among " + scripts.size() + " launch scripts");
  }

  static void assertShuffled(JobResult r) {
    assertTrue(r.counter(TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES) > 0, r.toString());
    assertTrue(r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES) > 0, r.toString());
    // Every materialized byte of map output was fetched by some reducer.
    assertEquals(r.counter(TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES),
        r.counter(TaskCounter.REDUCE_SHUFFLE_BYTES), r.toString());
    assertNotNull(r.jobId());
  }

  long sumCounts(org.apache.hadoop.fs.Path output) throws Exception {
    FileSystem fs = cluster.fileSystem();
    long total = 0;
    for (FileStatus part : fs.listStatus(output, p -> p.getName().startsWith("part-"))) {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(
          fs.open(part.getPath()), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          total += Long.parseLong(line.substring(line.indexOf('\t') + 1));
        }
      }
    }
    return total;
  }
}
