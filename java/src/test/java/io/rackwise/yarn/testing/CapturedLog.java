package io.rackwise.yarn.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/**
 * Records what one logger (and its children) writes while a test runs; optionally throws on a
 * record containing a marker, as a broken appender would. Close it to detach.
 */
public final class CapturedLog extends AppenderSkeleton implements AutoCloseable {
  private final Logger logger;
  private final String throwOn;
  private final List<LoggingEvent> events = new CopyOnWriteArrayList<>();

  private CapturedLog(String loggerName, String throwOn) {
    this.logger = Logger.getLogger(loggerName);
    this.throwOn = throwOn;
    logger.addAppender(this);
  }

  public static CapturedLog of(String loggerName) {
    return new CapturedLog(loggerName, null);
  }

  /** An appender that throws on any record whose message contains {@code marker}. */
  public static CapturedLog throwingOn(String loggerName, String marker) {
    return new CapturedLog(loggerName, marker);
  }

  @Override
  protected void append(LoggingEvent event) {
    String message = event.getRenderedMessage();
    if (throwOn != null && message != null && message.contains(throwOn)) {
      throw new IllegalStateException("appender refused a record (injected): " + message);
    }
    events.add(event);
  }

  /** Messages logged at exactly {@code level}. */
  public List<String> messages(Level level) {
    return events.stream().filter(e -> e.getLevel().equals(level))
        .map(LoggingEvent::getRenderedMessage).collect(Collectors.toList());
  }

  @Override
  public void close() {
    logger.removeAppender(this);
  }

  @Override
  public boolean requiresLayout() {
    return false;
  }
}
