package io.rackwise.it;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.WordCount;
import org.apache.hadoop.examples.terasort.TeraGen;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;

/**
 * Runs stock jobs from hadoop-mapreduce-examples on a {@link MultiRackCluster} and collects
 * what the comparison needs: success, times, counters and where each task ran.
 *
 * <p>WordCount has no {@code Tool}, so its job is assembled here from the public nested
 * {@code TokenizerMapper}/{@code IntSumReducer}; TeraGen and TeraSort run unmodified through
 * {@code ToolRunner}. Because those create their {@code Job} internally, every submission
 * carries a unique application tag ({@code mapreduce.job.tags}) and the job is found again
 * through the ResourceManager by that tag.
 */
public final class ExampleJobs {
  /** The counters every {@link JobResult} carries. */
  public static final List<Enum<?>> COUNTERS = List.of(
      TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES,
      TaskCounter.REDUCE_SHUFFLE_BYTES,
      TaskCounter.MAP_OUTPUT_BYTES,
      TaskCounter.MAP_OUTPUT_RECORDS,
      TaskCounter.REDUCE_OUTPUT_RECORDS,
      JobCounter.TOTAL_LAUNCHED_MAPS,
      JobCounter.TOTAL_LAUNCHED_REDUCES,
      JobCounter.DATA_LOCAL_MAPS,
      JobCounter.RACK_LOCAL_MAPS,
      JobCounter.OTHER_LOCAL_MAPS,
      JobCounter.MILLIS_MAPS,
      JobCounter.MILLIS_REDUCES);

  /** The job (and YARN application) name of {@link #wordCount}. */
  public static final String WORD_COUNT_JOB_NAME = "word count";

  private final MultiRackCluster cluster;

  public ExampleJobs(MultiRackCluster cluster) {
    this.cluster = cluster;
  }

  /**
   * Writes {@code files} text files of about {@code bytesPerFile} each: lines of words drawn
   * from a fixed synthetic vocabulary with a skewed (Zipf-like) frequency, so the combiner and
   * shuffle see realistic repetition. Same seed, same bytes.
   */
  public void writeText(Path dir, int files, long bytesPerFile, long seed) throws IOException {
    FileSystem fs = dir.getFileSystem(cluster.clientConf());
    fs.delete(dir, true);
    SplittableRandom random = new SplittableRandom(seed);
    String[] vocabulary = vocabulary(random, 5000);
    for (int f = 0; f < files; f++) {
      Path file = new Path(dir, String.format(Locale.ROOT, "part-%05d.txt", f));
      try (BufferedWriter out = new BufferedWriter(new OutputStreamWriter(fs.create(file),
          StandardCharsets.US_ASCII), 1 << 16)) {
        long written = 0;
        while (written < bytesPerFile) {
          int words = 8 + random.nextInt(8);
          StringBuilder line = new StringBuilder(128);
          for (int w = 0; w < words; w++) {
            // u^3 puts most draws on the first words of the vocabulary.
            double u = random.nextDouble();
            line.append(w == 0 ? "" : " ")
                .append(vocabulary[(int) (vocabulary.length * u * u * u)]);
          }
          line.append('\n');
          out.write(line.toString());
          written += line.length();
        }
      }
    }
  }

  /** WordCount with combiner, {@code reduces} reducers. */
  public JobResult wordCount(String label, Path input, Path output, int reduces, String queue)
      throws Exception {
    Configuration conf = jobConf(queue);
    String tag = tag(conf);
    cluster.fileSystem().delete(output, true);
    Job job = Job.getInstance(conf, WORD_COUNT_JOB_NAME);
    job.setJarByClass(WordCount.class);
    job.setMapperClass(WordCount.TokenizerMapper.class);
    job.setCombinerClass(WordCount.IntSumReducer.class);
    job.setReducerClass(WordCount.IntSumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(reduces);
    FileInputFormat.addInputPath(job, input);
    FileOutputFormat.setOutputPath(job, output);
    long start = System.nanoTime();
    boolean ok = job.waitForCompletion(false);
    long wall = (System.nanoTime() - start) / 1_000_000;
    return collect(label, conf, tag, ok, wall);
  }

  /** TeraGen of {@code rows} 100-byte rows with {@code maps} map tasks. */
  public JobResult teraGen(String label, long rows, int maps, Path output, String queue)
      throws Exception {
    Configuration conf = jobConf(queue);
    conf.setInt(MRJobConfig.NUM_MAPS, maps);
    String tag = tag(conf);
    cluster.fileSystem().delete(output, true);
    long start = System.nanoTime();
    int rc = ToolRunner.run(conf, new TeraGen(),
        new String[] {Long.toString(rows), output.toString()});
    long wall = (System.nanoTime() - start) / 1_000_000;
    return collect(label, conf, tag, rc == 0, wall);
  }

  /**
   * TeraSort with {@code reduces} reducers (TeraSort samples the input on the client). With
   * {@code statedShuffleRatio}, the job carries the application tag
   * {@code rackwise.shuffle-ratio=<ratio>}, as a user states the shuffle/input ratio of a job
   * they know (ShuffleWatcher: "given by the user or previous runs"); other schedulers ignore
   * the tag.
   */
  public JobResult teraSort(String label, Path input, Path output, int reduces, String queue,
      OptionalDouble statedShuffleRatio) throws Exception {
    Configuration conf = jobConf(queue);
    conf.setInt(MRJobConfig.NUM_REDUCES, reduces);
    // TeraSort's own TeraScheduler (on by default) rewrites every split's locations to the
    // one host it assigns the split to, so the map asks name one replica and the RM's
    // scheduler cannot choose between replicas. ShuffleWatcher's SAMP is that choice (which
    // racks' replicas a job reads), and stock FairScheduler also does better with every
    // replica named; so the splits keep all their block locations, as FileInputFormat gives.
    conf.setBoolean("mapreduce.terasort.use.terascheduler", false);
    if (!cluster.hasHdfs()) {
      // TeraSort's TotalOrderPartitioner opens the relative path "_partition.lst" (a cache
      // symlink in the task's directory) through FileSystem.getLocal. When the default file
      // system is the local one, that cached instance has had its working directory set to
      // the job's (the submitting client's) directory, so the file is looked for there and
      // every map fails. The simple partitioner needs no file; TeraGen keys are uniform, so
      // it splits them as evenly.
      conf.setBoolean("mapreduce.terasort.simplepartitioner", true);
    }
    String tag = tag(conf);
    statedShuffleRatio.ifPresent(ratio -> conf.set(MRJobConfig.JOB_TAGS,
        tag + ",rackwise.shuffle-ratio=" + ratio));
    cluster.fileSystem().delete(output, true);
    long start = System.nanoTime();
    int rc = ToolRunner.run(conf, new TeraSort(),
        new String[] {input.toString(), output.toString()});
    long wall = (System.nanoTime() - start) / 1_000_000;
    return collect(label, conf, tag, rc == 0, wall);
  }

  private Configuration jobConf(String queue) {
    Configuration conf = cluster.clientConf();
    if (queue != null) {
      conf.set(MRJobConfig.QUEUE_NAME, queue);
    }
    return conf;
  }

  /** Tags are lower-cased by YARN; a UUID is lower case already. */
  private static String tag(Configuration conf) {
    String tag = "rackwise-" + UUID.randomUUID();
    conf.set(MRJobConfig.JOB_TAGS, tag);
    return tag;
  }

  /**
   * Finds the application by tag and reads counters and task placement. The job has
   * finished, so the client is redirected to the JobHistoryServer for all of this.
   */
  private JobResult collect(String label, Configuration conf, String tag, boolean ok, long wall)
      throws IOException, InterruptedException {
    ApplicationReport app = findApp(conf, tag);
    if (app == null) {
      return new JobResult(label, null, false, wall, -1, Map.of(), List.of(), List.of(), -1,
          "no application with tag " + tag + " reached the ResourceManager");
    }
    JobID jobId = TypeConverter.fromYarn(app.getApplicationId());
    long appMillis = app.getFinishTime() > 0 ? app.getFinishTime() - app.getStartTime() : -1;
    Cluster client = new Cluster(conf);
    try {
      Job job = client.getJob(jobId);
      if (job == null) {
        return new JobResult(label, jobId.toString(), false, wall, appMillis, Map.of(),
            List.of(), List.of(), -1, app.getDiagnostics());
      }
      JobStatus status = job.getStatus();
      boolean succeeded = ok && status.getState() == JobStatus.State.SUCCEEDED;
      String diagnostics = succeeded ? ""
          : String.join(" | ", nonEmpty(status.getFailureInfo(), app.getDiagnostics()));
      Map<String, Long> counters = new TreeMap<>();
      Counters all = job.getCounters();
      if (all != null) {
        for (Enum<?> key : COUNTERS) {
          Counter c = all.findCounter(key);
          counters.put(key.name(), c == null ? 0L : c.getValue());
        }
      }
      Map<TaskAttemptID, String> hosts = attemptHosts(job);
      List<String> mapHosts = new ArrayList<>();
      List<String> reduceHosts = new ArrayList<>();
      hosts.forEach((attempt, host) -> (attempt.getTaskType() == TaskType.MAP
          ? mapHosts : reduceHosts).add(host));
      long crossRack = crossRackShuffle(job, hosts);
      return new JobResult(label, jobId.toString(), succeeded, wall, appMillis, counters,
          mapHosts, reduceHosts, crossRack, diagnostics);
    } finally {
      client.close();
    }
  }

  private static List<String> nonEmpty(String... texts) {
    List<String> out = new ArrayList<>();
    for (String t : texts) {
      if (t != null && !t.isBlank()) {
        out.add(t.strip());
      }
    }
    return out;
  }

  private static ApplicationReport findApp(Configuration conf, String tag)
      throws IOException {
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    try {
      List<ApplicationReport> apps = yarn.getApplications(Set.of("MAPREDUCE"),
          EnumSet.allOf(YarnApplicationState.class), Set.of(tag));
      return apps.isEmpty() ? null : apps.get(0);
    } catch (org.apache.hadoop.yarn.exceptions.YarnException e) {
      throw new IOException(e);
    } finally {
      yarn.stop();
    }
  }

  /** Successful attempt to host, from the completion events (maps and reduces). */
  private static Map<TaskAttemptID, String> attemptHosts(Job job)
      throws IOException, InterruptedException {
    Map<TaskAttemptID, String> hosts = new HashMap<>();
    int from = 0;
    while (true) {
      TaskCompletionEvent[] events = job.getTaskCompletionEvents(from, 100);
      if (events == null || events.length == 0) {
        return hosts;
      }
      for (TaskCompletionEvent e : events) {
        if (e.getStatus() == TaskCompletionEvent.Status.SUCCEEDED) {
          hosts.put(e.getTaskAttemptId(), hostOf(e.getTaskTrackerHttp()));
        }
      }
      from += events.length;
    }
  }

  /**
   * Host part of a completion event's tracker address. The AM reports {@code http://host:port}
   * while the job runs, the JobHistoryServer {@code host:port} once it has finished.
   */
  static String hostOf(String trackerHttp) {
    String s = trackerHttp;
    int scheme = s.indexOf("://");
    if (scheme >= 0) {
      s = s.substring(scheme + 3);
    }
    int port = s.lastIndexOf(':');
    return port >= 0 ? s.substring(0, port) : s;
  }

  /**
   * Shuffle bytes that crossed racks, from the finished job's history: for each successful
   * reduce attempt, its {@code REDUCE_SHUFFLE_BYTES} times the share of the job's map output
   * ({@code MAP_OUTPUT_MATERIALIZED_BYTES} of the successful map attempts) that sat on racks
   * other than the reduce's. MapReduce has no per-source shuffle counter; this is exact when
   * every map's output splits over the reduces in the same proportions, as hash partitioning
   * and TeraSort's sampled partitioner aim for. -1 if the job has no reduces, no map output,
   * or a task ran on a host with no known rack.
   */
  private long crossRackShuffle(Job job, Map<TaskAttemptID, String> hosts)
      throws IOException, InterruptedException {
    Map<String, Long> mapOutputByRack = new HashMap<>();
    for (TaskReport report : job.getTaskReports(TaskType.MAP)) {
      String rack = rackOfSuccessfulAttempt(report, hosts);
      if (rack == null) {
        return -1;
      }
      mapOutputByRack.merge(rack, counter(report, TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES),
          Long::sum);
    }
    long mapOutput = mapOutputByRack.values().stream().mapToLong(Long::longValue).sum();
    TaskReport[] reduces = job.getTaskReports(TaskType.REDUCE);
    if (reduces.length == 0 || mapOutput == 0) {
      return -1;
    }
    double crossed = 0;
    for (TaskReport report : reduces) {
      String rack = rackOfSuccessfulAttempt(report, hosts);
      if (rack == null) {
        return -1;
      }
      double elsewhere = 1.0 - (double) mapOutputByRack.getOrDefault(rack, 0L) / mapOutput;
      crossed += counter(report, TaskCounter.REDUCE_SHUFFLE_BYTES) * elsewhere;
    }
    return Math.round(crossed);
  }

  private String rackOfSuccessfulAttempt(TaskReport report, Map<TaskAttemptID, String> hosts) {
    TaskAttemptID attempt = report.getSuccessfulTaskAttemptId();
    String host = attempt == null ? null : hosts.get(attempt);
    return host == null ? null : cluster.rackOf(host);
  }

  private static long counter(TaskReport report, TaskCounter key) {
    Counter c = report.getTaskCounters().findCounter(key);
    return c == null ? 0 : c.getValue();
  }

  /** Pronounceable pseudo-words, distinct, fixed by the random stream. */
  private static String[] vocabulary(SplittableRandom random, int size) {
    String[] syllables = {"ka", "ri", "to", "ne", "su", "mo", "la", "pe", "di", "vo", "zu",
        "ha", "gi", "bo", "fe", "xa", "qu", "ye", "wi", "jo"};
    java.util.LinkedHashSet<String> words = new java.util.LinkedHashSet<>();
    while (words.size() < size) {
      int n = 1 + random.nextInt(4);
      StringBuilder w = new StringBuilder();
      for (int i = 0; i < n; i++) {
        w.append(syllables[random.nextInt(syllables.length)]);
      }
      words.add(w.toString());
    }
    return words.toArray(new String[0]);
  }
}
