package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's view of a jar whose native library is missing: with native required the
 * ResourceManager refuses to start and says why; without, it starts, logs the failure, counts it,
 * and schedules as stock FairScheduler. Runs {@link FallbackProbe} in child JVMs whose classpath
 * holds our classes without {@code io/rackwise/native/}, because the library, once loaded, stays
 * loaded for the life of a JVM.
 */
class NativeFallbackTest {
  @TempDir
  Path workDir;

  @Test
  void withoutTheLibraryARequiredCoreRefusesToStartAndAnOptionalOneFallsBack() throws Exception {
    String classpath = classpathWithoutNativeLibrary();

    Result required = probe(classpath, "true");
    assertEquals(2, required.exitCode, required.output);
    assertTrue(required.output.contains("Rackwise native library"), required.output);
    assertTrue(required.output.contains("not found"), required.output);

    Result optional = probe(classpath, "false");
    assertEquals(0, optional.exitCode, optional.output);
    assertTrue(optional.output.contains("SCHEDULED containers=1 nativeActive=false "
        + "nativeFailures=1"), optional.output);
    // Every offer is counted as a fallback: the AM's launch took at least one, and each of the
    // three heartbeats after it exactly one.
    assertTrue(optional.output.matches("(?s).*fallbackOffersBefore=[1-9].*"), optional.output);
    assertTrue(optional.output.contains("fallbackOffersForThreeHeartbeats=3"), optional.output);
    assertTrue(optional.output.contains("scheduling falls back to stock FairScheduler"),
        "the failure is logged loudly: " + optional.output);
  }

  /** The test classpath with our main classes replaced by a copy lacking the library. */
  private String classpathWithoutNativeLibrary() throws IOException {
    Path classes = Paths.get("target", "classes").toAbsolutePath();
    Path stripped = workDir.resolve("classes");
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path file : files.collect(Collectors.toList())) {
        Path relative = classes.relativize(file);
        if (relative.toString().startsWith("io/rackwise/native")) {
          continue;
        }
        Path target = stripped.resolve(relative.toString());
        if (Files.isDirectory(file)) {
          Files.createDirectories(target);
        } else {
          Files.copy(file, target);
        }
      }
    }
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      boolean ours = Paths.get(entry).toAbsolutePath().equals(classes);
      entries.add(ours ? stripped.toString() : entry);
    }
    return String.join(File.pathSeparator, entries);
  }

  private static final class Result {
    final int exitCode;
    final String output;

    Result(int exitCode, String output) {
      this.exitCode = exitCode;
      this.output = output;
    }
  }

  private Result probe(String classpath, String required) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    // The same JDK 17 opens surefire gave this JVM.
    for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (argument.startsWith("--add-") || argument.startsWith("-XX:+IgnoreUnrecognized")) {
        command.add(argument);
      }
    }
    // The tests' yarn-site.xml keeps the RM's node-attribute store under this directory.
    command.add("-Dtest.build.data=" + workDir);
    command.add("-cp");
    command.add(classpath);
    command.add(FallbackProbe.class.getName());
    command.add(required);
    Path log = workDir.resolve("probe-" + required + ".log");
    Process process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    if (!process.waitFor(3, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("probe did not finish: " + Files.readString(log));
    }
    return new Result(process.exitValue(),
        new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
  }
}
