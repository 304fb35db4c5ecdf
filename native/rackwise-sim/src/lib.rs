//! rackwise-sim: a trace-driven YARN cluster simulator that drives the Rackwise decision core
//! (`rackwise-core`) exactly as the ResourceManager shim does, so what it measures is what we
//! ship. See `docs/simulator.md` for the model and every constant.

pub mod cluster;
pub mod dp_metrics;
pub mod dp_workload;
pub mod fresh_static;
pub mod metrics;
pub mod network;
pub mod oracle;
pub mod plot;
pub mod rng;
pub mod sim;
pub mod sweep;
pub mod workload;

pub use cluster::Cluster;
pub use metrics::PolicyMetrics;
pub use sim::{Policy, RunCounters, Sim, SimOptions};
pub use workload::{JobSpec, WorkloadOptions};

/// Runs one policy over the jobs and returns its metrics, counters and raw observations; an
/// invalid setup or a run that stalls (the progress watchdog) is an error.
pub fn run_policy(
    cluster: &Cluster,
    jobs: &[JobSpec],
    policy: &str,
    options: &SimOptions,
    progress: &mut dyn FnMut(u64, usize),
) -> Result<(PolicyMetrics, RunCounters, metrics::Collector), String> {
    let sim = Sim::new(cluster, jobs, Policy::parse(policy), options)?;
    sim.run(progress)
}
