package org.apache.hadoop.yarn.sls.scheduler;

import java.lang.reflect.Field;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.QueueManager;
import org.apache.hadoop.yarn.sls.SLSRunner;

/**
 * Everything the SLS wrappers of both schedulers do, in one place, so that stock FairScheduler
 * and Rackwise run inside the same code: {@link StockSlsScheduler} and
 * {@link RackwiseSlsScheduler} differ only in their superclass.
 *
 * <p>It does what SLS's own {@code SLSFairScheduler} does (SLS's bookkeeping through
 * {@link SLSSchedulerCommons}, which it reaches from this package), and two things more: it times
 * every NODE_UPDATE the scheduler handles ({@link NodeUpdateTimes}), and it types every app
 * MAPREDUCE when the scheduler first hears of it. SLS 3.4.3 submits its simulated MapReduce jobs
 * without a type (so YARN's default, {@code YARN}), and Rackwise steers only MapReduce apps; a
 * real MapReduce client sets the type, so this makes the simulated jobs look like real ones. The
 * RMApp keeps the type in a final field set at submission and SLS offers no hook before it, so
 * the field is set by reflection.
 */
final class SlsWrapperHooks {
  private static final String MAPREDUCE = "MAPREDUCE";
  private static final Field APPLICATION_TYPE = applicationTypeField();

  final SLSSchedulerCommons commons;
  private final FairScheduler scheduler;
  private SLSRunner runner;

  SlsWrapperHooks(FairScheduler scheduler) {
    this.scheduler = scheduler;
    this.commons = new SLSSchedulerCommons(scheduler);
    NodeUpdateTimes.RECORDED.recordScheduler(scheduler);
  }

  private static Field applicationTypeField() {
    try {
      Field field = RMAppImpl.class.getDeclaredField("applicationType");
      field.setAccessible(true);
      return field;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("RMAppImpl has no field applicationType: this wrapper "
          + "follows Hadoop 3.4.x, adapt it to this Hadoop version", e);
    }
  }

  void setConf(Configuration conf) {
    // FairScheduler.class selects SLS's FairSchedulerMetrics, as in SLSFairScheduler.
    commons.initMetrics(FairScheduler.class, conf);
  }

  /** Before the scheduler sees {@code event}: the app it adds becomes a MapReduce app. */
  void typeNewApps(SchedulerEvent event, RMContext context) {
    if (event.getType() != SchedulerEventType.APP_ADDED) {
      return;
    }
    RMApp app = context.getRMApps().get(((AppAddedSchedulerEvent) event).getApplicationId());
    if (app instanceof RMAppImpl && !MAPREDUCE.equals(app.getApplicationType())) {
      try {
        APPLICATION_TYPE.set(app, MAPREDUCE);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot type " + app.getApplicationId()
            + " MAPREDUCE: " + e.getMessage(), e);
      }
    }
  }

  /** The scheduler's own handling of {@code event}, a NODE_UPDATE timed. */
  void propagate(SchedulerEvent event, Consumer<SchedulerEvent> schedulerHandle) {
    if (event.getType() != SchedulerEventType.NODE_UPDATE) {
      schedulerHandle.accept(event);
      if (event.getType() == SchedulerEventType.APP_REMOVED) {
        NodeUpdateTimes.RECORDED.appRemoved();
      }
      return;
    }
    long started = System.nanoTime();
    schedulerHandle.accept(event);
    NodeUpdateTimes.RECORDED.record(started, System.nanoTime() - started);
  }

  void stop() {
    commons.stopMetrics();
  }

  String realQueueName(String queue) throws YarnException {
    QueueManager queues = scheduler.getQueueManager();
    if (!queues.exists(queue)) {
      throw new YarnException("SLS trace names queue " + queue
          + ", which the allocation file does not define");
    }
    return queues.getQueue(queue).getQueueName();
  }

  void setRunner(SLSRunner runner) {
    this.runner = runner;
  }

  SLSRunner runner() {
    return runner;
  }
}
