//! The Dynamic Priority market through the engine: a `dp` parent's children get weights at the
//! opening, are charged at each interval's close (reported for the ledger), and nothing moves
//! between closes; bad `<rackwise>` elements are refused naming element, value and reason.

use rackwise_core::policy::dp::Dp;
use rackwise_core::protocol::*;
use rackwise_core::{CoreError, Engine};
use std::collections::BTreeMap;

const NODE: &str = "h1:8041";
const UNIT: Resources = Resources {
    memory_mb: 1024,
    vcores: 1,
};

fn config(elements: &[(&str, &str)]) -> EngineConfig {
    let mut rackwise: BTreeMap<String, String> = [("policy", "dp")]
        .iter()
        .chain(elements)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    rackwise.insert("policy".into(), "dp".into());
    EngineConfig {
        queues: vec![QueueSettings {
            queue: "root.users".into(),
            rackwise: Some(rackwise),
        }],
        source: "fair-scheduler.xml".into(),
        minimum_allocation: UNIT,
        ..EngineConfig::default()
    }
}

fn offer(engine: &mut Engine, now_ms: u64, events: Vec<Event>) -> OfferResponse {
    engine.offer(OfferRequest {
        now_ms,
        events,
        node: NodeOffer {
            node: NodeId(NODE.into()),
            unallocated: UNIT,
            utilization: None,
        },
    })
}

fn user(name: &str, budget: f64, spending: f64, asks: u32) -> Vec<Event> {
    let app = AppId(format!("app_{name}").into());
    vec![
        Event::Account {
            queue: format!("root.users.{name}"),
            budget,
            spending,
        },
        Event::AppAdded {
            app: app.clone(),
            name: format!("job of {name}"),
            user: name.into(),
            queue: format!("root.users.{name}"),
            app_type: "MAPREDUCE".into(),
            tags: vec![],
            submit_ms: 0,
        },
        Event::AsksChanged {
            app,
            rows: vec![Ask {
                priority: Priority(20),
                any: asks,
                resources: UNIT,
                racks: BTreeMap::new(),
                hosts: BTreeMap::new(),
            }],
        },
    ]
}

fn containers(name: &str, count: u32, memory_mb: u64) -> Vec<Event> {
    (0..count)
        .map(|i| Event::ContainerAllocated {
            app: AppId(format!("app_{name}").into()),
            container: ContainerId(format!("c_{name}_{i}")),
            node: NodeId(NODE.into()),
            priority: Priority(20),
            locality: Locality::OffSwitch,
            resources: Resources {
                memory_mb,
                vcores: 1,
            },
            time_ms: 1_000,
        })
        .collect()
}

fn weights(response: &OfferResponse) -> Vec<(&str, f64)> {
    response
        .queue_weights
        .iter()
        .map(|w| (w.queue.as_str(), w.weight))
        .collect()
}

#[test]
fn children_are_weighted_at_the_opening_and_charged_at_each_close() {
    let mut engine = Engine::new(&config(&[])).unwrap();
    let mut events = vec![Event::NodeAdded {
        node: NodeId(NODE.into()),
        host: "h1".into(),
        rack: RackName("/r1".into()),
        capacity: Resources {
            memory_mb: 9 * 1024,
            vcores: 9,
        },
    }];
    events.extend(user("alice", 100.0, 1.0, 5));
    events.extend(user("bob", 100.0, 2.0, 5));
    let opening = offer(&mut engine, 1_000, events);
    assert_eq!(
        weights(&opening),
        [
            ("root.users.alice", 1.0 / 3.0),
            ("root.users.bob", 2.0 / 3.0)
        ]
    );
    assert!(opening.intervals.is_empty(), "the opening charges nothing");

    // Within the 20 s interval nothing is recomputed.
    let mut held = containers("alice", 2, 1024);
    held.extend(containers("bob", 3, 1024));
    let quiet = offer(&mut engine, 20_999, held);
    assert!(quiet.queue_weights.is_empty() && quiet.intervals.is_empty());

    let close = offer(&mut engine, 21_000, vec![]);
    assert_eq!(close.intervals.len(), 1);
    let interval = &close.intervals[0];
    assert_eq!(
        (interval.market.as_str(), interval.sequence),
        ("root.users", 1)
    );
    assert_eq!(interval.price, 3.0);
    let charged: Vec<(f64, f64, f64)> = interval
        .queues
        .iter()
        .map(|q| (q.charge, q.budget, q.share))
        .collect();
    assert_eq!(
        charged,
        [(2.0, 98.0, 1.0 / 3.0), (6.0, 94.0, 2.0 / 3.0)],
        "the contrib example through the engine"
    );
    let dp = engine.policy::<Dp>().unwrap();
    assert_eq!(dp.account("root.users.bob").unwrap().budget, 94.0);
    assert_eq!(dp.price("root.users"), Some(3.0));
}

#[test]
fn a_container_of_two_units_costs_two() {
    let mut engine = Engine::new(&config(&[("intervalMs", "1000")])).unwrap();
    let mut events = vec![Event::NodeAdded {
        node: NodeId(NODE.into()),
        host: "h1".into(),
        rack: RackName("/r1".into()),
        capacity: Resources {
            memory_mb: 8 * 1024,
            vcores: 8,
        },
    }];
    events.extend(user("alice", 10.0, 1.0, 1));
    offer(&mut engine, 0, events);
    let close = offer(&mut engine, 1_000, containers("alice", 1, 2048));
    let line = &close.intervals[0].queues[0];
    assert_eq!((line.used, line.charge, line.budget), (2.0, 2.0, 8.0));
}

#[test]
fn bad_dp_elements_are_refused_naming_element_value_and_reason() {
    let Err(CoreError::Config(problems)) = Engine::new(&config(&[
        ("intervalMs", "500"),
        ("spending", "-1"),
        ("unitMemoryMb", "1.5"),
        ("shuffleHeavyRatio", "2"),
    ])) else {
        panic!("the configuration was accepted");
    };
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let expect = [
        "queue root.users <rackwise><intervalMs>: value '500' is out of range [1000, 3600000]",
        "queue root.users <rackwise><spending>: value '-1' is out of range [0, 1000000000000]",
        "queue root.users <rackwise><unitMemoryMb>: value '1.5' must be a whole number",
        // Checked after the dp elements: another policy's element would be ignored here.
        "queue root.users <rackwise><shuffleHeavyRatio>: value '2' applies only to \
         <policy>shufflewatcher</policy>",
    ];
    assert_eq!(text.len(), expect.len(), "{text:#?}");
    for (found, expected) in text.iter().zip(expect) {
        assert!(found.contains(expected), "{found}\n  lacks {expected}");
    }
}
