package io.rackwise.yarn.netsat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file an operator or a host agent rewrites, re-read by its own daemon thread whenever its
 * modification time changes, so that reading and parsing it never happens on the heartbeat path.
 * A missing file is reported once until it appears; what a version of the file means, and whether
 * it is good, is the subclass's {@link #read}.
 */
abstract class PolledFile implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PolledFile.class);

  protected final Path file;
  private final long pollIntervalMs;
  /** How the file is named in the log, e.g. "host-class file". */
  private final String what;
  /** What holds while the file is missing, for the log. */
  private final String whileMissing;
  private final Thread thread;
  private volatile boolean running = true;
  private FileTime lastRead;
  private boolean reportedMissing;
  private final AtomicLong filesSent = new AtomicLong();

  PolledFile(Path file, long pollIntervalMs, String threadName, String what,
      String whileMissing) {
    this.file = file;
    this.pollIntervalMs = pollIntervalMs;
    this.what = what;
    this.whileMissing = whileMissing;
    this.thread = new Thread(this::run, threadName);
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(pollIntervalMs + 5000);
  }

  private void run() {
    while (running) {
      readIfChanged();
      try {
        Thread.sleep(pollIntervalMs);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** How many versions of the file were read and sent to the core (counted once sent). */
  public long filesSent() {
    return filesSent.get();
  }

  /** Reads the file once if it changed since the last read; true when its figures were sent. */
  boolean readIfChanged() {
    FileTime modified;
    try {
      modified = Files.getLastModifiedTime(file);
    } catch (NoSuchFileException e) {
      if (!reportedMissing) {
        LOG.warn("{} {} does not exist (yet); {}", what, file, whileMissing);
        reportedMissing = true;
      }
      return false;
    } catch (IOException e) {
      LOG.warn("{} {} cannot be read: {}", what, file, e.toString());
      return false;
    }
    reportedMissing = false;
    if (modified.equals(lastRead)) {
      return false;
    }
    lastRead = modified;
    boolean sent = read(modified);
    if (sent) {
      filesSent.incrementAndGet();
    }
    return sent;
  }

  /**
   * Reads and sends one new version of the file, modified at {@code modified}; false when it
   * was refused (logged by the subclass, naming what is wrong), and the last good one stays.
   */
  protected abstract boolean read(FileTime modified);
}
