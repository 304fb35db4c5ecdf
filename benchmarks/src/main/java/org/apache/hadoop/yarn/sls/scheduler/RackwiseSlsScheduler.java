package org.apache.hadoop.yarn.sls.scheduler;

import java.util.List;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler;
import org.apache.hadoop.yarn.sls.SLSRunner;

/**
 * Rackwise inside SLS. SLS casts its scheduler to {@link SchedulerWrapper} and wraps only
 * {@code FairScheduler} itself; this class and its twin (Stock/RackwiseSlsScheduler, which differ
 * in their superclass only) delegate everything to {@link SlsWrapperHooks}, so both schedulers
 * run inside the same wrapper code.
 */
public class RackwiseSlsScheduler extends RackwiseFairScheduler implements SchedulerWrapper, Configurable {
  private final SlsWrapperHooks hooks = new SlsWrapperHooks(this);

  @Override
  public void setConf(Configuration conf) {
    super.setConfig(conf);
    hooks.setConf(conf);
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> asks,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> releases,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updates) {
    return hooks.commons.allocate(attemptId, asks, schedulingRequests, releases,
        blacklistAdditions, blacklistRemovals, updates);
  }

  @Override
  public Allocation allocatePropagated(ApplicationAttemptId attemptId,
      List<ResourceRequest> asks, List<SchedulingRequest> schedulingRequests,
      List<ContainerId> releases, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updates) {
    return super.allocate(attemptId, asks, schedulingRequests, releases, blacklistAdditions,
        blacklistRemovals, updates);
  }

  @Override
  public void handle(SchedulerEvent event) {
    hooks.typeNewApps(event, rmContext);
    hooks.commons.handle(event);
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    hooks.propagate(event, super::handle);
  }

  @Override
  public void serviceStop() throws Exception {
    hooks.stop();
    super.serviceStop();
  }

  @Override
  public String getRealQueueName(String queue) throws YarnException {
    return hooks.realQueueName(queue);
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return hooks.commons.getSchedulerMetrics();
  }

  @Override
  public Tracker getTracker() {
    return hooks.commons.getTracker();
  }

  @Override
  public void setSLSRunner(SLSRunner runner) {
    hooks.setRunner(runner);
  }

  @Override
  public SLSRunner getSLSRunner() {
    return hooks.runner();
  }
}
