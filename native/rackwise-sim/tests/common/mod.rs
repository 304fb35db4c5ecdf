//! Helpers shared by the simulator's integration tests.

use rackwise_sim::sim::AmOptions;
use rackwise_sim::SimOptions;

/// The AM as the simulator modelled it before the allocate round-trip: asks reach the RM and
/// granted containers launch the moment they change. Hand-computed scenarios use it to check
/// one model (tasks and network, or the scheduler) without the AM's heartbeats in the sums.
pub fn instant_am() -> SimOptions {
    SimOptions {
        am: AmOptions {
            round_trip: false,
            ..AmOptions::default()
        },
        ..SimOptions::default()
    }
}
