import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The only changes made to Hadoop's FairScheduler test sources before they are compiled here
 * (docs/upstream-suite.md lists them with their reasons). Each one is a literal text replacement
 * that must occur exactly as often as stated: when a Hadoop release changes the text, the build
 * fails naming the rewrite, rather than silently running the stock scheduler.
 *
 * <p>Every replacement calls {@code io.rackwise.upstream.UpstreamSuite}, which chooses the
 * scheduler (stock or Rackwise) and the suite's mode from system properties; in the stock
 * scheduler's pass-through mode each call returns what the original text did.
 *
 * <p>Run as a single-file program: {@code java RewriteUpstreamTests.java <from-dir> <to-dir>};
 * the originals in {@code from-dir} are never modified.
 */
public final class RewriteUpstreamTests {
  private static final String PACKAGE_DIR =
      "org/apache/hadoop/yarn/server/resourcemanager/scheduler/fair/";
  private static final String SUITE = "io.rackwise.upstream.UpstreamSuite";

  private record Rewrite(String why, String from, String to, int times) {
  }

  private static final Map<String, List<Rewrite>> REWRITES = new LinkedHashMap<>();

  static {
    REWRITES.put("FairSchedulerTestBase.java", List.of(
        new Rewrite("the configuration every test starts from carries the mode's settings",
            "conf = new YarnConfiguration();",
            "conf = " + SUITE + ".configuration();", 1),
        new Rewrite("the scheduler class the tests' ResourceManagers create",
            "conf.setClass(YarnConfiguration.RM_SCHEDULER, FairScheduler.class,",
            "conf.setClass(YarnConfiguration.RM_SCHEDULER, " + SUITE + ".schedulerClass(),", 1),
        new Rewrite("the priority of every ask the base class builds",
            "prio.setPriority(priority);",
            "prio.setPriority(" + SUITE + ".priority(priority));", 1),
        new Rewrite("the app exists in the RM before the scheduler adds it, as in a real RM",
            "    scheduler.addApplication(id.getApplicationId(), queueId, userId, false,",
            "    " + SUITE + ".beforeAppAdded(resourceManager, id);\n"
                + "    scheduler.addApplication(id.getApplicationId(), queueId, userId, false,",
            2),
        new Rewrite("the mocked RM apps carry the mode's application type",
            "RMApp rmApp = mock(RMApp.class);",
            "RMApp rmApp = " + SUITE + ".mockApp(RMApp.class);", 2),
        new Rewrite("the mocked RM apps carry the mode's application type",
            "RMApp app = mock(RMAppImpl.class);",
            "RMApp app = " + SUITE + ".mockApp(RMAppImpl.class);", 1),
        new Rewrite("the real RM apps carry the mode's application type",
            "false, false, 0, amResource,\n            null),",
            "false, false, 0, amResource,\n            " + SUITE + ".applicationType(null)),",
            1)));
    REWRITES.put("TestFairScheduler.java", List.of(
        new Rewrite("the scheduler the test drives directly",
            "new FairScheduler()", SUITE + ".newScheduler()", 1),
        new Rewrite("the RM app testNotAllowSubmitApplication builds carries the mode's type",
            "System.currentTimeMillis(), \"YARN\", null, null);",
            "System.currentTimeMillis(), " + SUITE + ".applicationType(\"YARN\"), null, null);",
            1),
        new Rewrite("the app testRefreshQueuesWhenRMHA submits through MockRM carries the "
            + "mode's type (MockRMAppSubmissionData's default is none, which the RM reads as YARN)",
            "            .withUnmanagedAM(false)\n            .build();",
            "            .withUnmanagedAM(false)\n            .withAppType(" + SUITE
                + ".applicationType(null))\n            .build();",
            1)));
    REWRITES.put("TestContinuousScheduling.java", List.of(
        new Rewrite("the scheduler the test drives directly",
            "new FairScheduler()", SUITE + ".newScheduler()", 2)));
    REWRITES.put("allocationfile/AllocationFileWriter.java", List.of(
        new Rewrite("every allocation file a test writes gets the mode's <rackwise> element",
            "    pw.close();\n  }",
            "    pw.close();\n    " + SUITE + ".allocationFileWritten(filename);\n  }", 1)));
  }

  private RewriteUpstreamTests() {
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: RewriteUpstreamTests <from-dir> <to-dir>");
    }
    Path from = Path.of(args[0]);
    Path to = Path.of(args[1]);
    List<String> problems = new ArrayList<>();
    try (var files = Files.walk(from)) {
      for (Path source : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        String relative = from.relativize(source).toString().replace('\\', '/');
        String text = Files.readString(source, StandardCharsets.UTF_8);
        String name = relative.startsWith(PACKAGE_DIR)
            ? relative.substring(PACKAGE_DIR.length()) : relative;
        for (Rewrite rewrite : REWRITES.getOrDefault(name, List.of())) {
          int found = occurrences(text, rewrite.from());
          if (found != rewrite.times()) {
            problems.add(name + ": expected " + rewrite.times() + " occurrence(s) of \""
                + rewrite.from() + "\" (" + rewrite.why() + "), found " + found);
          }
          text = text.replace(rewrite.from(), rewrite.to());
        }
        Path target = to.resolve(relative);
        Files.createDirectories(target.getParent());
        Files.writeString(target, text, StandardCharsets.UTF_8);
      }
    }
    for (String name : REWRITES.keySet()) {
      if (!Files.isRegularFile(from.resolve(PACKAGE_DIR + name))) {
        problems.add(name + ": not among the unpacked upstream sources in " + from);
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException("the upstream test sources changed; rewrites that no "
          + "longer apply:\n  " + String.join("\n  ", problems));
    }
  }

  private static int occurrences(String text, String literal) {
    int count = 0;
    for (int at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + 1)) {
      count++;
    }
    return count;
  }
}
