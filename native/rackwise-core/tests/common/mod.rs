//! The test environment shared by the scenario suites: a cluster of racks and nodes, a queue
//! `root.sw` steered by ShuffleWatcher, a queue `root.plain` left alone (and for the NAS suite
//! a queue `root.nas` under NAS), and helpers that queue the events the shim would send and
//! make one offer.
#![allow(dead_code)] // each suite uses a different part of it

use rackwise_core::mapreduce::{apply_plan, Placement};
use rackwise_core::policy::fresh::Fresh;
use rackwise_core::policy::nas::Nas;
use rackwise_core::policy::shufflewatcher::{JobPlacement, ShuffleWatcher};
use rackwise_core::policy::Registry;
use rackwise_core::protocol::*;
use rackwise_core::{CoreError, Engine};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const AM: i32 = rackwise_core::mapreduce::AM_PRIORITY.0;
pub const MAP: i32 = rackwise_core::mapreduce::MAP_PRIORITY.0;
pub const RERUN_MAP: i32 = rackwise_core::mapreduce::RERUN_MAP_PRIORITY.0;
pub const REDUCE: i32 = rackwise_core::mapreduce::REDUCE_PRIORITY.0;
pub const GIB: u64 = 1 << 30;
/// ShuffleWatcher's NASS categories across a user's jobs, as Figure 3 has them: the tests of
/// that order use it, since by default FairScheduler's app order decides between jobs.
pub const NASS_ORDER: (&str, &str) = ("jobOrder", "nass");

/// One ask of a test job: priority, containers, and the (rack, node) replicas of its splits.
pub type TestAsk<'a> = (i32, u32, &'a [(u32, u32)]);

/// A cluster of `racks` × `nodes_per_rack` nodes named `r<R>n<N>` on racks `/r<R>`, a queue
/// `root.sw` steered by ShuffleWatcher and a queue `root.plain` left alone.
pub struct TestEnv {
    pub engine: Engine,
    pub pending: Vec<Event>,
    pub now_ms: u64,
    containers: u32,
    /// Memory of every node: `CONTAINER_MB` per container it holds.
    node_memory_mb: u64,
}

/// Memory of the containers the helpers ask for and run.
pub const CONTAINER_MB: u64 = 1024;

/// Containers of `CONTAINER_MB` a node holds unless a suite says otherwise.
const CONTAINERS_PER_NODE: u64 = 8;

impl TestEnv {
    /// NAS's memory.
    pub fn nas_memory(&self) -> &Nas {
        self.engine.policy::<Nas>().expect("nas is built in")
    }

    /// FRESH's memory.
    pub fn fresh_memory(&self) -> &Fresh {
        self.engine.policy::<Fresh>().expect("fresh is built in")
    }

    /// ShuffleWatcher's SAMP and SARP decisions for a job.
    pub fn sw_job(&self, app: &str) -> Option<&JobPlacement> {
        self.engine
            .policy::<ShuffleWatcher>()
            .expect("shufflewatcher is built in")
            .job(&AppId(app.into()))
    }

    pub fn new(racks: u32, nodes_per_rack: u32, settings: &[(&str, &str)]) -> TestEnv {
        Self::with_queue(racks, nodes_per_rack, settings, &[])
    }

    /// As `new`, with extra `<rackwise>` elements for `root.sw` (its policy stays
    /// shufflewatcher).
    pub fn with_queue(
        racks: u32,
        nodes_per_rack: u32,
        settings: &[(&str, &str)],
        queue_elements: &[(&str, &str)],
    ) -> TestEnv {
        let mut elements = vec![("policy", "shufflewatcher")];
        elements.extend_from_slice(queue_elements);
        let queues = vec![queue("root.sw", &elements), plain_queue()];
        Self::with_queues(racks, nodes_per_rack, settings, queues)
    }

    /// As `new`, plus a queue `root.nas` under NAS with the given extra `<rackwise>` elements.
    pub fn nas(
        racks: u32,
        nodes_per_rack: u32,
        settings: &[(&str, &str)],
        nas_elements: &[(&str, &str)],
    ) -> TestEnv {
        let mut elements = vec![("policy", "nas")];
        elements.extend_from_slice(nas_elements);
        let queues = vec![
            queue("root.nas", &elements),
            queue("root.sw", &[("policy", "shufflewatcher")]),
            plain_queue(),
        ];
        Self::with_queues(racks, nodes_per_rack, settings, queues)
    }

    /// A queue `root.fresh` under FRESH with the given extra `<rackwise>` elements, and
    /// `root.plain`.
    pub fn fresh(racks: u32, nodes_per_rack: u32, fresh_elements: &[(&str, &str)]) -> TestEnv {
        Self::fresh_restarted(racks, nodes_per_rack, fresh_elements, vec![])
    }

    /// As `fresh`, on an engine started from a persisted learned history (a restarted RM).
    pub fn fresh_restarted(
        racks: u32,
        nodes_per_rack: u32,
        fresh_elements: &[(&str, &str)],
        learned: Vec<LearnedRatio>,
    ) -> TestEnv {
        let mut elements = vec![("policy", "fresh")];
        elements.extend_from_slice(fresh_elements);
        let queues = vec![queue("root.fresh", &elements), plain_queue()];
        let mut env = Self::with_queues(racks, nodes_per_rack, &[], queues.clone());
        let config = EngineConfig {
            queues,
            learned,
            source: "test".into(),
            ..EngineConfig::default()
        };
        env.engine = Engine::new(&config).expect("valid config");
        env
    }

    fn with_queues(
        racks: u32,
        nodes_per_rack: u32,
        settings: &[(&str, &str)],
        queues: Vec<QueueSettings>,
    ) -> TestEnv {
        Self::with_registry(racks, nodes_per_rack, settings, queues, Registry::builtin())
            .expect("valid config")
    }

    /// A cluster as `new` with the given queues, on an engine with the given policies.
    pub fn with_registry(
        racks: u32,
        nodes_per_rack: u32,
        settings: &[(&str, &str)],
        queues: Vec<QueueSettings>,
        policies: Registry,
    ) -> Result<TestEnv, CoreError> {
        Self::sized(
            racks,
            nodes_per_rack,
            CONTAINERS_PER_NODE,
            settings,
            queues,
            policies,
        )
    }

    /// As `with_queue`, on nodes of `containers_per_node` containers.
    pub fn with_node_containers(
        racks: u32,
        nodes_per_rack: u32,
        containers_per_node: u64,
        settings: &[(&str, &str)],
        queue_elements: &[(&str, &str)],
    ) -> TestEnv {
        let mut elements = vec![("policy", "shufflewatcher")];
        elements.extend_from_slice(queue_elements);
        let queues = vec![queue("root.sw", &elements), plain_queue()];
        Self::sized(
            racks,
            nodes_per_rack,
            containers_per_node,
            settings,
            queues,
            Registry::builtin(),
        )
        .expect("valid config")
    }

    fn sized(
        racks: u32,
        nodes_per_rack: u32,
        containers_per_node: u64,
        settings: &[(&str, &str)],
        queues: Vec<QueueSettings>,
        policies: Registry,
    ) -> Result<TestEnv, CoreError> {
        let config = EngineConfig {
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            queues,
            learned: vec![],
            source: "test".into(),
            ..EngineConfig::default()
        };
        let mut env = TestEnv {
            engine: Engine::with_registry(&config, policies)?,
            pending: vec![],
            now_ms: 1_000_000,
            containers: 0,
            node_memory_mb: containers_per_node * CONTAINER_MB,
        };
        env.pending
            .extend(nodes_added(racks, nodes_per_rack, env.node_memory_mb));
        Ok(env)
    }

    pub fn submit(&mut self, app: &str, queue: &str, submit_ms: u64, tags: &[&str]) {
        self.pending.push(Event::AppAdded {
            app: AppId(app.into()),
            name: format!("job-{app}"),
            user: "alice".into(),
            queue: queue.into(),
            app_type: "MAPREDUCE".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            submit_ms,
        });
    }

    /// Sets `app`'s ask table to exactly these rows: (priority, count, hosts with a replica of
    /// the splits). MapReduce priorities not named are removed (sent with `any == 0`).
    pub fn asks(&mut self, app: &str, asks: &[TestAsk]) {
        let removed = [AM, RERUN_MAP, REDUCE, MAP]
            .into_iter()
            .filter(|priority| asks.iter().all(|(named, _, _)| named != priority))
            .map(|priority| Ask {
                priority: Priority(priority),
                any: 0,
                resources: Resources::default(),
                hosts: Default::default(),
                racks: Default::default(),
            });
        let rows = asks
            .iter()
            .map(|(priority, count, replicas)| Ask {
                priority: Priority(*priority),
                any: *count,
                resources: Resources {
                    memory_mb: CONTAINER_MB,
                    vcores: 1,
                },
                hosts: replicas
                    .iter()
                    .map(|(r, n)| (host(*r, *n).into(), *count))
                    .collect(),
                racks: replicas.iter().map(|(r, _)| (rack(*r), *count)).collect(),
            })
            .chain(removed)
            .collect();
        self.pending.push(Event::AsksChanged {
            app: AppId(app.into()),
            rows,
        });
    }

    /// Sets `app`'s map asks to maps whose splits each have one replica: `(rack, node, maps)`
    /// names how many sit on each node.
    pub fn map_asks_on(&mut self, app: &str, splits: &[(u32, u32, u32)]) {
        let mut racks = BTreeMap::new();
        for (r, _, maps) in splits {
            *racks.entry(rack(*r)).or_insert(0) += maps;
        }
        let hosts = splits
            .iter()
            .map(|(r, n, maps)| (host(*r, *n).into(), *maps))
            .collect();
        let any = splits.iter().map(|(_, _, maps)| maps).sum();
        self.set_map_asks(app, any, hosts, racks);
    }

    /// Sets `app`'s map asks to `count` maps whose splits name `hosts` and `racks` as they are,
    /// cluster nodes or not: with storage without locality (`file:///`, object stores) splits
    /// name `localhost` and `/default-rack`.
    pub fn map_asks_naming(&mut self, app: &str, count: u32, hosts: &[&str], racks: &[&str]) {
        let hosts = hosts.iter().map(|h| (Arc::from(*h), count)).collect();
        let racks = racks
            .iter()
            .map(|r| (RackName(Arc::from(*r)), count))
            .collect();
        self.set_map_asks(app, count, hosts, racks);
    }

    /// Sets `app`'s asks to one map row of `any` maps with these per-host and per-rack counts.
    fn set_map_asks(
        &mut self,
        app: &str,
        any: u32,
        hosts: BTreeMap<Arc<str>, u32>,
        racks: BTreeMap<RackName, u32>,
    ) {
        self.pending.push(Event::AsksChanged {
            app: AppId(app.into()),
            rows: vec![Ask {
                priority: Priority(MAP),
                any,
                resources: Resources {
                    memory_mb: CONTAINER_MB,
                    vcores: 1,
                },
                hosts,
                racks,
            }],
        });
    }

    pub fn run(
        &mut self,
        app: &str,
        priority: i32,
        r: u32,
        n: u32,
        locality: Locality,
    ) -> ContainerId {
        self.containers += 1;
        let container = ContainerId(format!("container_{}", self.containers));
        self.pending.push(Event::ContainerAllocated {
            app: AppId(app.into()),
            container: container.clone(),
            node: node(r, n),
            priority: Priority(priority),
            locality,
            resources: Resources {
                memory_mb: CONTAINER_MB,
                vcores: 1,
            },
            time_ms: self.now_ms,
        });
        container
    }

    pub fn finish(&mut self, app: &str, container: ContainerId) {
        self.end(app, container, true);
    }

    /// A container's end; `task_completed` false as the shim reports a preempted, unused or
    /// lost one.
    pub fn end(&mut self, app: &str, container: ContainerId, task_completed: bool) {
        self.pending.push(Event::ContainerFinished {
            app: AppId(app.into()),
            container,
            time_ms: self.now_ms,
            task_completed,
        });
    }

    pub fn stats(
        &mut self,
        app: &str,
        maps: u32,
        done: u32,
        reduces: u32,
        input: u64,
        output: u64,
    ) {
        self.pending.push(Event::JobStats {
            app: AppId(app.into()),
            maps_total: maps,
            maps_completed: done,
            reduces_total: reduces,
            map_input_bytes: input,
            map_output_bytes: output,
        });
    }

    pub fn offer(&mut self, r: u32, n: u32) -> OfferResponse {
        self.offer_reporting(r, n, None)
    }

    /// An offer whose NodeManager reports `utilization`.
    pub fn offer_reporting(
        &mut self,
        r: u32,
        n: u32,
        utilization: Option<Utilization>,
    ) -> OfferResponse {
        let request = OfferRequest {
            now_ms: self.now_ms,
            events: std::mem::take(&mut self.pending),
            node: NodeOffer {
                node: node(r, n),
                unallocated: Resources {
                    memory_mb: self.node_memory_mb,
                    vcores: 8,
                },
                utilization,
            },
        };
        self.engine.offer(request)
    }
}

/// A queue with a `<rackwise>` element holding `elements`.
pub fn queue(name: &str, elements: &[(&str, &str)]) -> QueueSettings {
    QueueSettings {
        queue: name.into(),
        rackwise: Some(
            elements
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
    }
}

/// `root.plain`: no `<rackwise>` element, so stock FairScheduler.
fn plain_queue() -> QueueSettings {
    QueueSettings {
        queue: "root.plain".into(),
        rackwise: None,
    }
}

/// `NodeAdded` for `racks` × `nodes_per_rack` nodes `r<R>n<N>` on racks `/r<R>`, each with
/// `memory_mb` and 8 vcores.
pub fn nodes_added(racks: u32, nodes_per_rack: u32, memory_mb: u64) -> Vec<Event> {
    (1..=racks)
        .flat_map(|r| (1..=nodes_per_rack).map(move |n| (r, n)))
        .map(|(r, n)| Event::NodeAdded {
            node: node(r, n),
            host: host(r, n),
            rack: rack(r),
            capacity: Resources {
                memory_mb,
                vcores: 8,
            },
        })
        .collect()
}

pub fn node(r: u32, n: u32) -> NodeId {
    NodeId(format!("{}:8041", host(r, n)).into())
}
pub fn host(r: u32, n: u32) -> String {
    format!("r{r}n{n}")
}
pub fn rack(r: u32) -> RackName {
    RackName(format!("/r{r}").into())
}

/// The plan of `queue` in the response, if the queue was planned.
pub fn queue_plan<'a>(response: &'a OfferResponse, queue: &str) -> Option<&'a QueuePlan> {
    response.plan.queues.iter().find(|q| &*q.queue == queue)
}

/// What the plan of `queue` lets `app` do when FairScheduler offers it the node, every app
/// having an ask at every priority here (`mapreduce::apply_plan`, the shim's rule).
pub fn placement_of(response: &OfferResponse, queue: &str, app: &str) -> Placement {
    let plan = queue_plan(response, queue).expect("the queue is planned");
    apply_plan(
        plan,
        &AppId(app.into()),
        |_| false,
        |_, _| Some(Locality::NodeLocal),
    )
}

/// The plan of `queue` as "app:priority:locality" strings, in rank order.
pub fn ranking(response: &OfferResponse, queue: &str) -> Vec<String> {
    queue_plan(response, queue)
        .map(|q| {
            q.entries
                .iter()
                .map(|e| {
                    let locality = match e.locality {
                        Locality::NodeLocal => "node",
                        Locality::RackLocal => "rack",
                        Locality::OffSwitch => "any",
                    };
                    format!("{}:{}:{locality}", e.app.0, e.priority.0)
                })
                .collect()
        })
        .unwrap_or_default()
}
