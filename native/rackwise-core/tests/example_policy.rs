//! A policy that lives only here, outside the crate: registering it is all it takes for queues
//! to name it in `<policy>`, for its parameters to be checked with the same messages as the
//! built-in ones, and for it to see the observations and set queue weights.
//!
//! `slownode` keeps each node's mean finished-map latency (from `TaskFinished`) and the latest
//! NodeManager CPU report (the state's per-node utilization). On a node whose maps ran slower
//! than `slowMapMs`, or whose CPU is busier than `maxCpu`, a queue's maps are vetoed and only
//! its reduces are offered; elsewhere every ask is offered, reduces first. Every
//! `yarn.scheduler.rackwise.slownode.weight-interval-ms` it sets each steered queue's weight to
//! its number of apps in the map phase plus one.

mod common;

use common::*;
use rackwise_core::mapreduce::TaskKind;
use rackwise_core::policy::{Context, Policy, Registry, Turn};
use rackwise_core::protocol::*;
use rackwise_core::settings::{Declaration, Param, ParamProblem, ParamValues};
use rackwise_core::state::{JobPhase, Observation};
use rackwise_core::CoreError;
use std::collections::BTreeMap;

const SLOW_MAP_MS: &str = "slowMapMs";
const MAX_CPU: &str = "maxCpu";
const WEIGHT_INTERVAL_MS: &str = "yarn.scheduler.rackwise.slownode.weight-interval-ms";

const QUEUE_PARAMS: &[Param] = &[
    Param::number(
        SLOW_MAP_MS,
        60_000.0,
        (0.0, true),
        86_400_000.0,
        "mean map latency on a node above which its maps are vetoed",
    ),
    Param::whole(
        MAX_CPU,
        8.0,
        0.0,
        1024.0,
        "busiest NodeManager CPU (vcores) still given maps",
    ),
];

const CLUSTER_PARAMS: &[Param] = &[Param::number(
    WEIGHT_INTERVAL_MS,
    10_000.0,
    (0.0, false),
    3_600_000.0,
    "how often queue weights are recomputed",
)];

/// `maxCpu` 0 would veto maps on any node reporting CPU at all.
fn check(values: &ParamValues) -> Vec<ParamProblem> {
    if values.number(MAX_CPU) == 0.0 {
        return vec![ParamProblem {
            element: MAX_CPU,
            reason: "must be above 0: a node reporting any CPU would never get a map".into(),
        }];
    }
    Vec::new()
}

#[derive(Default)]
struct SlowNode {
    /// Per node: finished maps and their summed latency.
    map_latency: BTreeMap<NodeId, (u32, u64)>,
    weights_at_ms: Option<u64>,
}

impl Policy for SlowNode {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "slownode",
            queue_params: QUEUE_PARAMS,
            cluster_params: CLUSTER_PARAMS,
            check,
            steers: true,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, _context: &Context, observation: &Observation) {
        if let Observation::TaskFinished {
            node,
            kind: TaskKind::Map,
            start_ms,
            finish_ms,
            ..
        } = observation
        {
            let (count, sum) = self.map_latency.entry(node.clone()).or_default();
            *count += 1;
            *sum += finish_ms - start_ms;
        }
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let slow = self
            .map_latency
            .get(turn.offer.node_id)
            .is_some_and(|(count, sum)| {
                *sum as f64 / *count as f64 > turn.params.number(SLOW_MAP_MS)
            });
        let busy = turn
            .offer
            .node
            .utilization
            .is_some_and(|u| u.cpu > turn.params.number(MAX_CPU));
        for kind in [TaskKind::Reduce, TaskKind::Map] {
            if kind == TaskKind::Map && (slow || busy) {
                continue;
            }
            for candidate in turn.candidates {
                for ask in candidate.app.asks.values() {
                    if TaskKind::of_mapreduce_priority(ask.priority) == kind {
                        entries.push(PlanEntry {
                            app: candidate.id.clone(),
                            priority: ask.priority,
                            locality: Locality::OffSwitch,
                            reason: "slownode".into(),
                        });
                    }
                }
            }
        }
    }

    fn queue_weights(&mut self, context: &Context, now_ms: u64) -> Vec<QueueWeight> {
        let interval = context.keys.number(WEIGHT_INTERVAL_MS) as u64;
        if self
            .weights_at_ms
            .is_some_and(|at| now_ms.saturating_sub(at) < interval)
        {
            return Vec::new();
        }
        self.weights_at_ms = Some(now_ms);
        let mut mapping: BTreeMap<String, f64> = BTreeMap::new();
        for app in context.state.apps.values() {
            if context.steered(&app.queue).is_some() {
                let weight = mapping.entry(app.queue.clone()).or_insert(1.0);
                if app.phase() == JobPhase::Map {
                    *weight += 1.0;
                }
            }
        }
        mapping
            .into_iter()
            .map(|(queue, weight)| QueueWeight { queue, weight })
            .collect()
    }
}

fn registry() -> Registry {
    Registry::builtin().with(Box::new(SlowNode::default()))
}

fn env(elements: &[(&str, &str)], settings: &[(&str, &str)]) -> Result<TestEnv, CoreError> {
    let mut all = vec![("policy", "slownode")];
    all.extend_from_slice(elements);
    TestEnv::with_registry(2, 2, settings, vec![queue("root.slow", &all)], registry())
}

fn problems(result: Result<TestEnv, CoreError>) -> Vec<String> {
    match result {
        Err(CoreError::Config(problems)) => problems.iter().map(|p| p.to_string()).collect(),
        Ok(_) => panic!("expected a config error, got an engine"),
    }
}

#[test]
fn its_parameters_are_checked_with_the_derived_messages() {
    let found = problems(env(
        &[
            ("slowMapMs", "0"),
            ("maxCpu", "2.5"),
            ("shuffleHeavyRatio", "2"),
        ],
        &[(WEIGHT_INTERVAL_MS, "soon")],
    ));
    let expected = [
        "yarn.scheduler.rackwise.slownode.weight-interval-ms: value 'soon' is not a number",
        "test: queue root.slow <rackwise><maxCpu>: value '2.5' must be a whole number: busiest \
         NodeManager CPU (vcores) still given maps",
        "test: queue root.slow <rackwise><slowMapMs>: value '0' is out of range (0, 86400000]: \
         mean map latency on a node above which its maps are vetoed",
        "test: queue root.slow <rackwise><shuffleHeavyRatio>: value '2' applies only to \
         <policy>shufflewatcher</policy>",
    ];
    assert_eq!(found, expected);

    let zero_cpu = problems(env(&[("maxCpu", "0")], &[]));
    assert_eq!(
        zero_cpu,
        [
            "test: queue root.slow <rackwise><maxCpu>: value '0' must be above 0: a node \
          reporting any CPU would never get a map"
        ]
    );

    // The built-in policies' queues cannot use its elements, and an unknown name lists it.
    let misplaced = problems(TestEnv::with_registry(
        1,
        1,
        &[],
        vec![
            queue(
                "root.sw",
                &[("policy", "shufflewatcher"), ("slowMapMs", "5")],
            ),
            queue("root.typo", &[("policy", "slow")]),
        ],
        registry(),
    ));
    // The built-in names come from the registry, so adding a built-in policy keeps this true.
    let names: Vec<&str> = registry().declarations().iter().map(|d| d.name).collect();
    assert_eq!(
        misplaced,
        [
            "test: queue root.sw <rackwise><slowMapMs>: value '5' applies only to \
             <policy>slownode</policy>"
                .to_string(),
            format!(
                "test: queue root.typo <rackwise><policy>: value 'slow' is not a policy; \
                 expected one of: {}",
                names.join(", ")
            ),
        ]
    );
    // Without it registered, the name is unknown to the core.
    let builtin = Registry::builtin();
    assert!(builtin.declarations().iter().all(|d| d.name != "slownode"));
}

#[test]
fn it_steers_by_the_latencies_and_utilization_it_observes_and_sets_weights() {
    // The starvation guard would lift every veto after 30 s of waiting; this test waits 40 s.
    let guard = ("yarn.scheduler.rackwise.starvation-guard-ms", "3600000");
    let mut env = env(&[("slowMapMs", "30000"), ("maxCpu", "6")], &[guard]).expect("valid");
    env.submit("job", "root.slow", 1, &[]);
    env.asks("job", &[(MAP, 4, &[(1, 1)]), (REDUCE, 1, &[])]);
    // Two maps on r1n1 take 40 s each; one on r1n2 takes 10 s.
    let started = env.now_ms;
    let slow: Vec<ContainerId> = (0..2)
        .map(|_| env.run("job", MAP, 1, 1, Locality::NodeLocal))
        .collect();
    let fast = env.run("job", MAP, 1, 2, Locality::RackLocal);
    env.now_ms = started + 10_000;
    env.finish("job", fast);
    env.now_ms = started + 40_000;
    for container in slow {
        env.finish("job", container);
    }

    let on_slow_node = env.offer(1, 1);
    assert_eq!(ranking(&on_slow_node, "root.slow"), ["job:10:any"]);
    // Every steered queue's weight: one app in its map phase.
    assert_eq!(
        on_slow_node.queue_weights,
        [QueueWeight {
            queue: "root.slow".into(),
            weight: 2.0
        }]
    );

    let on_fast_node = env.offer(1, 2);
    assert_eq!(
        ranking(&on_fast_node, "root.slow"),
        ["job:10:any", "job:20:any"]
    );
    // Within its interval it leaves the weights alone.
    assert!(on_fast_node.queue_weights.is_empty());

    // A busy NodeManager on a node without history: maps vetoed there too.
    let busy = Utilization {
        pmem_mb: 4096,
        cpu: 7.5,
    };
    let on_busy_node = env.offer_reporting(2, 1, Some(busy));
    assert_eq!(ranking(&on_busy_node, "root.slow"), ["job:10:any"]);
    assert_eq!(
        env.engine.state().nodes[&node(2, 1)].utilization,
        Some(busy)
    );
    // The report stays the node's fact until the next one.
    assert_eq!(ranking(&env.offer(2, 1), "root.slow"), ["job:10:any"]);
    let calm = Utilization {
        pmem_mb: 1024,
        cpu: 1.0,
    };
    assert_eq!(
        ranking(&env.offer_reporting(2, 1, Some(calm)), "root.slow"),
        ["job:10:any", "job:20:any"]
    );
}

/// Records the calls the engine makes, to pin down the documented call order.
struct Recorder {
    calls: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Policy for Recorder {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "recorder",
            queue_params: &[],
            cluster_params: &[],
            check: |_| Vec::new(),
            steers: true,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, _context: &Context, observation: &Observation) {
        let what = match observation {
            Observation::NodeAdded { .. } => return,
            Observation::AppAdded { app } => format!("observe added {}", app.0),
            Observation::AsksChanged { app } => format!("observe asks {}", app.0),
            other => format!("observe {other:?}"),
        };
        self.calls.lock().unwrap().push(what);
    }

    fn begin_offer(&mut self, _context: &Context, _offer: &rackwise_core::policy::Offer) {
        self.calls.lock().unwrap().push("begin".into());
    }

    fn rank(&mut self, turn: &Turn, _entries: &mut Vec<PlanEntry>) {
        self.calls
            .lock()
            .unwrap()
            .push(format!("rank {}", turn.queue));
    }

    fn end_offer(&mut self) {
        self.calls.lock().unwrap().push("end".into());
    }

    fn queue_weights(&mut self, _context: &Context, _now_ms: u64) -> Vec<QueueWeight> {
        self.calls.lock().unwrap().push("weights".into());
        Vec::new()
    }
}

#[test]
fn the_engine_calls_a_policy_in_the_documented_order() {
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let registry = Registry::builtin().with(Box::new(Recorder {
        calls: calls.clone(),
    }));
    let queues = vec![
        queue("root.a", &[("policy", "recorder")]),
        queue("root.b", &[("policy", "recorder")]),
    ];
    let mut env = TestEnv::with_registry(1, 1, &[], queues, registry).expect("valid");
    let take = || std::mem::take(&mut *calls.lock().unwrap());

    // No queue with candidates: no begin_offer, no rank; end_offer and weights still.
    env.offer(1, 1);
    assert_eq!(take(), ["end", "weights"]);

    env.submit("x", "root.b", 1, &[]);
    env.submit("y", "root.a", 2, &[]);
    env.asks("x", &[(MAP, 1, &[(1, 1)])]);
    env.asks("y", &[(MAP, 1, &[(1, 1)])]);
    env.offer(1, 1);
    assert_eq!(
        take(),
        [
            "observe added x",
            "observe added y",
            "observe asks x",
            "observe asks y",
            "begin",
            "rank root.a",
            "rank root.b",
            "end",
            "weights",
        ]
    );
}
