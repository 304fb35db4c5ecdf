//! The capturing logger end to end. A test binary of its own: the logger and its queue are
//! process-wide, and offers in other tests would drain records this one waits for.

use rackwise::ops;

mod common;

use common::{config, request};

#[test]
fn records_ride_back_on_the_next_offer_and_are_not_repeated() {
    let handle = ops::create(&config()).unwrap();
    log::warn!(target: "rackwise_core::test", "rack /r1 looks saturated");
    log::debug!("below the default level");

    let first = common::logged(&ops::offer(handle, &request()).unwrap());
    assert!(
        first.contains(&(
            "LOG_LEVEL_WARN".to_string(),
            "rack /r1 looks saturated".to_string()
        )),
        "{first:?}"
    );
    assert!(!first.iter().any(|(_, m)| m == "below the default level"));

    let second = common::logged(&ops::offer(handle, &request()).unwrap());
    assert!(!second.iter().any(|(_, m)| m == "rack /r1 looks saturated"));
    ops::destroy(handle).unwrap();
}
