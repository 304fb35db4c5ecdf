package io.rackwise.yarn.testing;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system under the scheme {@value #SCHEME}, whose appends a test can hold (an
 * HDFS pipeline recovering, an NFS mount hanging) or fail (a full disk). State is static: the
 * file system is instantiated by Hadoop from the configuration, not by the test.
 */
public class StallingFileSystem extends RawLocalFileSystem {
  public static final String SCHEME = "stall";
  /** Configuration entries that make {@value #SCHEME} paths use this file system. */
  public static final Map<String, String> CONF = Map.of(
      "fs." + SCHEME + ".impl", StallingFileSystem.class.getName(),
      "fs." + SCHEME + ".impl.disable.cache", "true");

  private static volatile CountDownLatch gate = new CountDownLatch(0);
  private static final AtomicInteger failuresLeft = new AtomicInteger();
  private static final AtomicInteger appendsHeld = new AtomicInteger();

  /** A configuration with {@link #CONF}. */
  public static Configuration configuration() {
    Configuration conf = new Configuration();
    CONF.forEach(conf::set);
    return conf;
  }

  /** The {@value #SCHEME} URI of a local directory. */
  public static Path path(java.nio.file.Path local) {
    return new Path(SCHEME + "://" + local.toAbsolutePath());
  }

  /** Holds every append from now on until {@link #release}. */
  public static void hold() {
    gate = new CountDownLatch(1);
  }

  /** Lets held and later appends through; also resets failures (call it in a finally). */
  public static void release() {
    failuresLeft.set(0);
    gate.countDown();
  }

  /** Fails the next {@code count} appends with an IOException. */
  public static void failNext(int count) {
    failuresLeft.set(count);
  }

  /** Appends waiting at the gate now. */
  public static int appendsHeld() {
    return appendsHeld.get();
  }

  @Override
  public URI getUri() {
    return URI.create(SCHEME + ":///");
  }

  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress)
      throws IOException {
    appendsHeld.incrementAndGet();
    try {
      gate.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while held", e);
    } finally {
      appendsHeld.decrementAndGet();
    }
    if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IOException("injected failure: no space left on device");
    }
    return super.append(f, bufferSize, progress);
  }
}
