package io.rackwise.yarn.dp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;

/** Runs the command line in-process for tests in other packages. */
public final class DpCliAccess {
  private DpCliAccess() {
  }

  public static int run(String[] args, ByteArrayOutputStream out, ByteArrayOutputStream err)
      throws IOException {
    out.reset();
    err.reset();
    return DpCli.run(args, new Configuration(false),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }
}
