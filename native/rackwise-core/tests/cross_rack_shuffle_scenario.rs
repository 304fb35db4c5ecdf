//! `CrossRackShuffleIT` (integration-tests) at the core level, in seconds instead of ten minutes:
//! the same cluster (2 racks × 2 nodes of four task containers), the same jobs (WordCount's 48
//! maps, then TeraSort's 12 once WordCount runs a task, one queue under ShuffleWatcher), the
//! same block placement (HDFS at replication 2 puts a block's second replica on the other rack,
//! so every split of either job has one replica on each rack) and the same offers (each node
//! heartbeats once a second and takes at most one container per heartbeat, Hadoop 3.4's
//! default). TeraSort's cross-rack shuffle follows where its maps ran: the IT passes only if
//! they stay on one rack.

mod common;

use common::*;
use rackwise_core::protocol::*;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

const RACKS: u32 = 2;
const NODES_PER_RACK: u32 = 2;
const CONTAINERS_PER_NODE: u64 = 4;
const WORD_COUNT_MAPS: u32 = 48;
const TERASORT_MAPS: u32 = 12;
/// Map run times (WordCount's, TeraSort's) on the IT's loaded 2-core machine, where task JVM
/// start-up dominates: as recorded, and faster and slower, so no one timing decides.
const MAP_RUN_MS: [(u64, u64); 3] = [(6_000, 15_000), (3_000, 8_000), (12_000, 40_000)];
const HEARTBEAT_MS: u64 = 1_000;
/// The IT's `starvation-guard-ms`: the scenario ends before it.
const STARVATION_GUARD_MS: u64 = 180_000;

/// One job's pending maps: per map, the (rack, node) of its two replicas.
struct Job {
    app: &'static str,
    pending: Vec<[(u32, u32); 2]>,
    placed_on_rack: BTreeMap<u32, u32>,
}

impl Job {
    /// `maps` splits whose replicas sit one on each rack, spread evenly over each rack's nodes.
    fn new(app: &'static str, maps: u32) -> Job {
        let pending = (0..maps)
            .map(|i| [(1, i % 2 + 1), (2, (i / 2) % 2 + 1)])
            .collect();
        Job {
            app,
            pending,
            placed_on_rack: BTreeMap::new(),
        }
    }

    /// The ask table the MapReduce AM sends for the pending maps: per host and per rack, how
    /// many pending splits have a replica there.
    fn asks(&self) -> Event {
        let mut hosts: BTreeMap<Arc<str>, u32> = BTreeMap::new();
        let mut racks: BTreeMap<RackName, u32> = BTreeMap::new();
        for replicas in &self.pending {
            for (r, n) in replicas {
                *hosts.entry(host(*r, *n).into()).or_insert(0) += 1;
                *racks.entry(rack(*r)).or_insert(0) += 1;
            }
        }
        Event::AsksChanged {
            app: AppId(self.app.into()),
            rows: vec![Ask {
                priority: Priority(MAP),
                any: self.pending.len() as u32,
                resources: Resources {
                    memory_mb: CONTAINER_MB,
                    vcores: 1,
                },
                hosts,
                racks,
            }],
        }
    }

    /// Takes the split the placement on node (r, n) at `locality` reads: one with a replica on
    /// that node, else on its rack, else any.
    fn take(&mut self, r: u32, n: u32, locality: Locality) {
        let on_node = |s: &[(u32, u32); 2]| s.contains(&(r, n));
        let on_rack = |s: &[(u32, u32); 2]| s.iter().any(|(sr, _)| *sr == r);
        let index = match locality {
            Locality::NodeLocal => self.pending.iter().position(on_node),
            Locality::RackLocal => self.pending.iter().position(on_rack),
            Locality::OffSwitch => Some(0),
        }
        .expect("the core ranked a placement no pending split allows");
        self.pending.remove(index);
        *self.placed_on_rack.entry(r).or_insert(0) += 1;
    }
}

/// Where TeraSort's maps ran, and the free-container offers that placed nothing while a job
/// still had maps pending.
struct Outcome {
    terasort_maps_by_rack: BTreeMap<u32, u32>,
    terasort_preferred: Vec<String>,
    word_count_preferred: Vec<String>,
    idle_offers: u32,
}

fn run_it_mix((word_count_map_ms, terasort_map_ms): (u64, u64)) -> Outcome {
    let guard = STARVATION_GUARD_MS.to_string();
    let mut env = TestEnv::with_node_containers(
        RACKS,
        NODES_PER_RACK,
        CONTAINERS_PER_NODE,
        &[("yarn.scheduler.rackwise.starvation-guard-ms", &guard)],
        &[],
    );
    let start = env.now_ms;
    let mut free: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for r in 1..=RACKS {
        for n in 1..=NODES_PER_RACK {
            free.insert((r, n), CONTAINERS_PER_NODE);
        }
    }
    // (finish time, app, container, node), in finish order.
    let mut running: Vec<(u64, &'static str, ContainerId, (u32, u32))> = Vec::new();
    let start_task = |env: &mut TestEnv,
                      free: &mut BTreeMap<(u32, u32), u64>,
                      running: &mut Vec<_>,
                      app: &'static str,
                      priority: i32,
                      (r, n): (u32, u32),
                      locality: Locality,
                      run_ms: u64| {
        *free.get_mut(&(r, n)).unwrap() -= 1;
        let container = env.run(app, priority, r, n, locality);
        running.push((env.now_ms + run_ms, app, container, (r, n)));
    };

    // WordCount's AM on r1n1, then its 48 maps.
    env.submit("wordcount", "root.sw", 1, &[]);
    let mut jobs = vec![Job::new("wordcount", WORD_COUNT_MAPS)];
    let forever = u64::MAX / 2;
    start_task(
        &mut env,
        &mut free,
        &mut running,
        "wordcount",
        AM,
        (1, 1),
        Locality::OffSwitch,
        forever,
    );
    env.pending.push(jobs[0].asks());
    let mut terasort_submitted = false;
    let mut idle_offers = 0;
    let mut heartbeats: VecDeque<(u32, u32)> = free.keys().copied().collect();
    while env.now_ms - start < STARVATION_GUARD_MS {
        // Tasks that finished by now free their containers.
        running.sort_by_key(|(at, ..)| *at);
        while running.first().is_some_and(|(at, ..)| *at <= env.now_ms) {
            let (_, app, container, node) = running.remove(0);
            env.finish(app, container);
            *free.get_mut(&node).unwrap() += 1;
        }
        // TeraSort goes in once WordCount runs a task; its AM takes the first free container.
        if !terasort_submitted && jobs[0].placed_on_rack.values().sum::<u32>() > 0 {
            terasort_submitted = true;
            env.submit("terasort", "root.sw", 2, &["rackwise.shuffle-ratio=1.04"]);
            jobs.push(Job::new("terasort", TERASORT_MAPS));
        }
        if terasort_submitted && running.iter().all(|(_, app, ..)| *app != "terasort") {
            if let Some((&node, _)) = free.iter().find(|(_, slots)| **slots > 0) {
                start_task(
                    &mut env,
                    &mut free,
                    &mut running,
                    "terasort",
                    AM,
                    node,
                    Locality::OffSwitch,
                    forever,
                );
                env.pending.push(jobs[1].asks());
            }
        }
        // Each node heartbeats once per second, and takes at most one container per heartbeat.
        for _ in 0..heartbeats.len() {
            let node = heartbeats.pop_front().unwrap();
            heartbeats.push_back(node);
            if free[&node] == 0 {
                continue;
            }
            let response = env.offer(node.0, node.1);
            let placed = ranking(&response, "root.sw").into_iter().find_map(|entry| {
                let mut parts = entry.split(':');
                let app = parts.next()?.to_string();
                let priority: i32 = parts.next()?.parse().ok()?;
                let locality = match parts.next()? {
                    "node" => Locality::NodeLocal,
                    "rack" => Locality::RackLocal,
                    _ => Locality::OffSwitch,
                };
                (priority == MAP).then_some((app, locality))
            });
            match placed {
                Some((app, locality)) => {
                    let job = jobs.iter_mut().find(|j| j.app == app).unwrap();
                    job.take(node.0, node.1, locality);
                    let (name, run_ms) = if job.app == "terasort" {
                        ("terasort", terasort_map_ms)
                    } else {
                        ("wordcount", word_count_map_ms)
                    };
                    let asks = job.asks();
                    start_task(
                        &mut env,
                        &mut free,
                        &mut running,
                        name,
                        MAP,
                        node,
                        locality,
                        run_ms,
                    );
                    env.pending.push(asks);
                }
                None if jobs.iter().any(|j| !j.pending.is_empty()) => idle_offers += 1,
                None => {}
            }
        }
        if jobs.len() == 2 && jobs.iter().all(|j| j.pending.is_empty()) {
            break;
        }
        env.now_ms += HEARTBEAT_MS;
    }
    let preferred = |env: &TestEnv, app: &str| {
        env.sw_job(app)
            .and_then(|job| job.samp.as_ref())
            .map(|samp| samp.preferred.iter().map(|r| r.0.to_string()).collect())
            .unwrap_or_default()
    };
    Outcome {
        terasort_maps_by_rack: jobs[1].placed_on_rack.clone(),
        terasort_preferred: preferred(&env, "terasort"),
        word_count_preferred: preferred(&env, "wordcount"),
        idle_offers,
    }
}

#[test]
fn terasort_beside_wordcount_keeps_its_maps_on_one_rack() {
    for run_ms in MAP_RUN_MS {
        let outcome = run_it_mix(run_ms);
        let placed: u32 = outcome.terasort_maps_by_rack.values().sum();
        let most = outcome
            .terasort_maps_by_rack
            .values()
            .copied()
            .max()
            .unwrap_or(0);
        let seen = format!(
            "map run times {run_ms:?}: wordcount prefers {:?}, terasort prefers {:?}; terasort \
             maps by rack {:?}; {} offers placed nothing while maps were pending",
            outcome.word_count_preferred,
            outcome.terasort_preferred,
            outcome.terasort_maps_by_rack,
            outcome.idle_offers
        );
        println!("{seen}");
        assert_eq!(placed, TERASORT_MAPS, "all placed before the guard: {seen}");
        assert_eq!(outcome.terasort_preferred.len(), 1, "one rack: {seen}");
        assert_eq!(most, TERASORT_MAPS, "all on one rack: {seen}");
    }
}
