package io.rackwise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Rackwise as an operator installs it: separate NameNode, DataNode, ResourceManager and
 * NodeManager processes on two racks, assembled from Hadoop's Maven artifacts, the Rackwise jar
 * copied into the RM's classpath and nothing else changed but {@code yarn-site.xml} and the
 * allocation file, as the README says. Stock example jobs run through {@code hadoop jar}
 * ({@code RunJar}) processes; the RM's own JMX servlet shows that the native core steered them
 * ({@code native.required} is on, so a fallback would have stopped the RM instead).
 *
 * <p>Once per Hadoop line the jar supports: 3.4 (the classpath Maven resolved for this module
 * without the Rackwise jar) and 3.3 (the hadoop-3.3-runtime module's). The jar is the same one,
 * the one the build just made ({@code rackwise.jar}).
 */
class RealDaemonsIT {

  /**
   * The Hadoop lines one jar supports, each as the system property naming its runtime's
   * classpath file: this module's own Hadoop (3.4) and the hadoop-3.3-runtime module's.
   */
  static Stream<Arguments> hadoopRuntimes() {
    return Stream.of(Arguments.of("3.4", "rackwise.hadoop.classpath.file"),
        Arguments.of("3.3", "rackwise.hadoop33.classpath.file"));
  }

  @ParameterizedTest(name = "Hadoop {0}")
  @MethodSource("hadoopRuntimes")
  @Timeout(value = 20, unit = TimeUnit.MINUTES)
  void stockJobsRunUnderRackwiseInARealResourceManagerProcess(String hadoopLine,
      String classpathProperty) throws Exception {
    // Under target/, not a temporary directory: the daemons' logs stay for a failed build.
    Path work = Path.of("target", "real-daemons-" + hadoopLine).toAbsolutePath();
    org.apache.hadoop.fs.FileUtil.fullyDelete(work.toFile());
    Files.createDirectories(work);
    Path classpathFile = Path.of(System.getProperty(classpathProperty));
    assertTrue(Files.isRegularFile(classpathFile), "the Hadoop " + hadoopLine
        + " runtime's classpath " + classpathFile + " (built by the reactor before this module)");
    String classpath = Files.readString(classpathFile).trim();
    Path rackwiseJar = Path.of(System.getProperty("rackwise.jar"));
    assertTrue(Files.isRegularFile(rackwiseJar), "the built jar: " + rackwiseJar);
    Path examples = Arrays.stream(classpath.split(File.pathSeparator))
        .filter(e -> e.contains("hadoop-mapreduce-examples")).map(Path::of).findFirst()
        .orElseThrow(() -> new AssertionError("hadoop-mapreduce-examples not on the classpath"));

    try (HadoopDaemons cluster = new HadoopDaemons(work, classpath, rackwiseJar, 2)) {
      Configuration conf = cluster.baseConf();
      Path allocations = work.resolve("fair-scheduler.xml");
      Files.writeString(allocations, """
          <?xml version="1.0"?>
          <allocations>
            <queue name="root">
              <rackwise><policy>shufflewatcher</policy></rackwise>
              <queue name="jobs"/>
            </queue>
            <!-- The jobs run as whatever user runs the build, "root" included. -->
            <queuePlacementPolicy>
              <rule name="default" queue="jobs"/>
            </queuePlacementPolicy>
          </allocations>
          """);
      conf.set(HadoopDaemons.SCHEDULER,
          "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler");
      conf.set("yarn.scheduler.fair.allocation.file", allocations.toString());
      conf.setBoolean("yarn.scheduler.rackwise.native.required", true);

      cluster.startHdfs();
      cluster.startYarn(true);

      assertEquals(0, cluster.runExample("pi", examples, "pi", "4", "200"),
          "pi failed; see " + cluster.log("pi"));

      try (FileSystem fs = FileSystem.newInstance(cluster.client())) {
        for (int i = 0; i < 4; i++) {
          try (FSDataOutputStream out =
                   fs.create(new org.apache.hadoop.fs.Path("/in/part-" + i))) {
            for (int line = 0; line < 20_000; line++) {
              out.write(("rack" + (line % 7) + " shuffle " + (line % 113) + "\n")
                  .getBytes(StandardCharsets.UTF_8));
            }
          }
        }
        assertEquals(0, cluster.runExample("wordcount", examples, "wordcount", "/in", "/out"),
            "wordcount failed; see " + cluster.log("wordcount"));
        assertTrue(fs.exists(new org.apache.hadoop.fs.Path("/out/_SUCCESS")));
      }

      JsonNode bean = rackwiseBean(cluster);
      assertEquals(1, bean.path("NativeActive").asInt(), "native core steering: " + bean);
      assertEquals(0, bean.path("NativeFailures").asLong(), bean.toString());
      assertEquals(0, bean.path("FallbackOffers").asLong(), bean.toString());
      assertTrue(bean.path("Offers").asLong() > 0, "the core decided offers: " + bean);
      assertTrue(bean.path("SteeredContainers").asLong() > 0,
          "containers placed on the core's plan: " + bean);
    }
  }

  /** The RackwiseMetrics bean, read from the RM's {@code /jmx} servlet. */
  private static JsonNode rackwiseBean(HadoopDaemons cluster) throws Exception {
    String query = "/jmx?qry=Hadoop:service=ResourceManager,name=RackwiseMetrics";
    JsonNode beans = cluster.rmWeb(query).path("beans");
    assertEquals(1, beans.size(), "one RackwiseMetrics bean at " + query + ": " + beans);
    return beans.get(0);
  }
}
