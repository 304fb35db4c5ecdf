import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;

/**
 * Runs one upstream test method many times in one JVM and prints how often it failed: how the
 * flake rates of the racing TestContinuousScheduling tests in docs/upstream-suite.md were
 * measured (the command is there). The scheduler and mode come from the same system properties
 * as in the surefire executions.
 *
 * <p>{@code java -cp <test classpath> RepeatUpstreamTest.java <class> <method> <runs>}
 */
public final class RepeatUpstreamTest {
  private RepeatUpstreamTest() {
  }

  public static void main(String[] args) throws ClassNotFoundException {
    Class<?> testClass = Class.forName(args[0]);
    int runs = Integer.parseInt(args[2]);
    int failed = 0;
    for (int i = 0; i < runs; i++) {
      Result result = new JUnitCore().run(Request.method(testClass, args[1]));
      if (!result.wasSuccessful()) {
        failed++;
        System.out.println("run " + i + ": " + result.getFailures().get(0).getTrace());
      }
    }
    System.out.printf("%s#%s scheduler=%s mode=%s: %d of %d runs failed%n", args[0], args[1],
        System.getProperty("rackwise.upstream.scheduler"),
        System.getProperty("rackwise.upstream.mode"), failed, runs);
    // The upstream tests leave non-daemon timers running (MockRM's node-removal timer).
    System.exit(0);
  }
}
