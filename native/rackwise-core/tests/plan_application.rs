//! The plan-application rule (`mapreduce::apply_plan`) over the shared vectors in
//! `tests/vectors/plan_application.json`, which the Java shim's test reads too.

use rackwise_core::mapreduce::{apply_plan, Placement};
use rackwise_core::protocol::{AppId, Locality, Priority, QueuePlan};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Vectors {
    #[allow(dead_code)] // documentation for the reader of the file
    about: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    plan: QueuePlan,
    app: AppId,
    asks: BTreeMap<AppId, BTreeMap<i32, Locality>>,
    #[serde(default)]
    spent: Vec<usize>,
    expected: Expected,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Expected {
    Word(String),
    Place { priority: i32, cap: Locality },
}

impl Expected {
    fn placement(&self) -> Placement {
        match self {
            Expected::Word(word) if word == "stock" => Placement::Stock,
            Expected::Word(word) if word == "vetoed" => Placement::Vetoed,
            Expected::Word(other) => panic!("unknown expectation {other:?}"),
            Expected::Place { priority, cap } => Placement::Place {
                priority: Priority(*priority),
                cap: *cap,
            },
        }
    }
}

#[test]
fn the_core_applies_every_shared_vector_as_expected() {
    let text = include_str!("vectors/plan_application.json");
    let vectors: Vectors = serde_json::from_str(text).expect("the vector file parses");
    assert!(vectors.cases.len() >= 10, "the file lost its cases");
    let mut outcomes = std::collections::BTreeSet::new();
    for case in &vectors.cases {
        let got = apply_plan(
            &case.plan,
            &case.app,
            |position| case.spent.contains(&position),
            |app, priority| case.asks.get(app)?.get(&priority.0).copied(),
        );
        assert_eq!(got, case.expected.placement(), "case: {}", case.name);
        outcomes.insert(match got {
            Placement::Stock => "stock",
            Placement::Vetoed => "vetoed",
            Placement::Place { .. } => "place",
        });
    }
    assert_eq!(outcomes.len(), 3, "the cases cover stock, vetoed and place");
}
