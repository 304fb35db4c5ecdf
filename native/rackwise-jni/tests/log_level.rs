//! The host (the JVM shim) sets the native log level at run time. A test binary of its own: the
//! level is process-wide, and would change what the other log tests capture.

use rackwise::ops;

const CONFIG: &[u8] = br#"{"settings":{},"queues":[],"learned":[],"source":"test"}"#;
const REQUEST: &[u8] =
    br#"{"now_ms":1,"events":[],"node":{"node":"h1:1","unallocated":{"memory_mb":1024,"vcores":1}}}"#;

fn logged_messages(response: &[u8]) -> Vec<String> {
    let response: serde_json::Value = serde_json::from_slice(response).unwrap();
    response["logs"]
        .as_array()
        .expect("logs is an array")
        .iter()
        .map(|r| r["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_host_sets_the_level_at_run_time() {
    let handle = ops::create(CONFIG).unwrap();
    ops::set_max_log_level(4).unwrap();
    log::debug!("debug while the host wants debug");
    ops::set_max_log_level(3).unwrap();
    log::debug!("debug while the host wants info");
    let messages = logged_messages(&ops::offer(handle, REQUEST).unwrap());
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
