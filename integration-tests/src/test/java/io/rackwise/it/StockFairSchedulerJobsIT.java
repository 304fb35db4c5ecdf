package io.rackwise.it;

/** The job mix under stock FairScheduler: the baseline the Rackwise runs are compared with. */
class StockFairSchedulerJobsIT extends AbstractJobsIT {
  @Override
  MultiRackCluster.Builder configure(MultiRackCluster.Builder builder) {
    return builder
        .schedulerClass(MultiRackCluster.FAIR_SCHEDULER)
        .allocationResource("allocations/stock-fair-scheduler.xml");
  }
}
