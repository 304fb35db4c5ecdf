//! The host (the JVM shim) sets the native log level at run time. A test binary of its own: the
//! level is process-wide, and would change what the other log tests capture.

use rackwise::ops;

mod common;

use common::{config, request};

fn logged_messages(response: &[u8]) -> Vec<String> {
    common::logged(response)
        .into_iter()
        .map(|(_, message)| message)
        .collect()
}

#[test]
fn the_host_sets_the_level_at_run_time() {
    let handle = ops::create(&config()).unwrap();
    ops::set_max_log_level(4).unwrap();
    log::debug!("debug while the host wants debug");
    ops::set_max_log_level(3).unwrap();
    log::debug!("debug while the host wants info");
    let messages = logged_messages(&ops::offer(handle, &request()).unwrap());
    assert!(
        messages
            .iter()
            .any(|m| m == "debug while the host wants debug"),
        "{messages:?}"
    );
    assert!(
        !messages
            .iter()
            .any(|m| m == "debug while the host wants info"),
        "{messages:?}"
    );
    ops::destroy(handle).unwrap();
}
