//! The capturing logger end to end. A test binary of its own: the logger and its queue are
//! process-wide, and offers in other tests would drain records this one waits for.

use rackwise::ops;

const CONFIG: &[u8] = br#"{"settings":{},"queues":[],"learned":[],"source":"test"}"#;
const REQUEST: &[u8] =
    br#"{"now_ms":1,"events":[],"node":{"node":"h1:1","unallocated":{"memory_mb":1024,"vcores":1}}}"#;

fn logged_messages(response: &[u8]) -> Vec<(String, String)> {
    let response: serde_json::Value = serde_json::from_slice(response).unwrap();
    response["logs"]
        .as_array()
        .expect("logs is an array")
        .iter()
        .map(|r| {
            let field = |name: &str| r[name].as_str().unwrap_or_default().to_string();
            (field("level"), field("message"))
        })
        .collect()
}

#[test]
fn records_ride_back_on_the_next_offer_and_are_not_repeated() {
    let handle = ops::create(CONFIG).unwrap();
    log::warn!(target: "rackwise_core::test", "rack /r1 looks saturated");
    log::debug!("below the default level");

    let first = logged_messages(&ops::offer(handle, REQUEST).unwrap());
    assert!(
        first.contains(&("warn".to_string(), "rack /r1 looks saturated".to_string())),
        "{first:?}"
    );
    assert!(!first.iter().any(|(_, m)| m == "below the default level"));

    let second = logged_messages(&ops::offer(handle, REQUEST).unwrap());
    assert!(!second.iter().any(|(_, m)| m == "rack /r1 looks saturated"));
    ops::destroy(handle).unwrap();
}
