//! What the state derives for the policies: task start and finish with node, rack, kind and
//! times; each job's phase from its counts; the feed's per-host figures, validated.

use rackwise_core::mapreduce::TaskKind;
use rackwise_core::policy::Registry;
use rackwise_core::protocol::*;
use rackwise_core::settings::Settings;
use rackwise_core::state::{ClusterState, JobPhase, MeasuredLoad, Observation};

struct Fixture {
    state: ClusterState,
    settings: Settings,
}

impl Fixture {
    fn new() -> Fixture {
        let settings =
            Settings::from_config(&EngineConfig::default(), Registry::builtin().declarations())
                .unwrap();
        let mut fixture = Fixture {
            state: ClusterState::default(),
            settings,
        };
        fixture.apply(Event::NodeAdded {
            node: NodeId("n1:1".into()),
            host: "n1".into(),
            rack: RackName("/r1".into()),
            capacity: Resources {
                memory_mb: 8192,
                vcores: 8,
            },
        });
        fixture.apply(Event::AppAdded {
            app: AppId("app".into()),
            name: "job".into(),
            user: "u".into(),
            queue: "root.q".into(),
            app_type: "MAPREDUCE".into(),
            tags: vec![],
            submit_ms: 0,
        });
        fixture
    }

    fn apply(&mut self, event: Event) -> Vec<Observation> {
        let mut observed = Vec::new();
        self.state
            .apply(event, 0, &self.settings, &mut Vec::new(), &mut observed);
        observed
    }

    /// Changed rows of the app's ask table: (priority, any), `any == 0` removing the row.
    fn asks(&mut self, rows: &[(i32, u32)]) {
        self.apply(Event::AsksChanged {
            app: AppId("app".into()),
            rows: rows
                .iter()
                .map(|(priority, any)| Ask {
                    priority: Priority(*priority),
                    any: *any,
                    resources: Resources::default(),
                    racks: Default::default(),
                    hosts: Default::default(),
                })
                .collect(),
        });
    }

    fn allocate(&mut self, container: &str, priority: i32, time_ms: u64) -> Vec<Observation> {
        self.apply(Event::ContainerAllocated {
            app: AppId("app".into()),
            container: ContainerId(container.into()),
            node: NodeId("n1:1".into()),
            priority: Priority(priority),
            locality: Locality::NodeLocal,
            resources: Resources::default(),
            time_ms,
        })
    }

    fn finish(&mut self, container: &str, time_ms: u64) -> Vec<Observation> {
        self.end(container, time_ms, true)
    }

    fn end(&mut self, container: &str, time_ms: u64, task_completed: bool) -> Vec<Observation> {
        self.apply(Event::ContainerFinished {
            app: AppId("app".into()),
            container: ContainerId(container.into()),
            time_ms,
            task_completed,
        })
    }

    fn phase(&self) -> JobPhase {
        self.state.apps[&AppId("app".into())].phase()
    }
}

#[test]
fn tasks_start_and_finish_with_their_node_rack_kind_and_times() {
    let mut f = Fixture::new();
    f.asks(&[(20, 1)]);
    let started = f.allocate("c1", 20, 1_000);
    assert_eq!(
        started,
        [Observation::TaskStarted {
            app: AppId("app".into()),
            node: NodeId("n1:1".into()),
            rack: RackName("/r1".into()),
            kind: TaskKind::Map,
            priority: Priority(20),
            locality: Locality::NodeLocal,
            time_ms: 1_000,
        }]
    );
    let finished = f.finish("c1", 4_500);
    assert_eq!(
        finished,
        [Observation::TaskFinished {
            app: AppId("app".into()),
            node: NodeId("n1:1".into()),
            rack: RackName("/r1".into()),
            kind: TaskKind::Map,
            locality: Locality::NodeLocal,
            start_ms: 1_000,
            finish_ms: 4_500,
        }]
    );
    // A container finishing twice, or never started, tells nothing.
    assert!(f.finish("c1", 5_000).is_empty());
    assert!(f.finish("c9", 5_000).is_empty());
}

#[test]
fn a_container_that_ends_without_its_task_frees_the_slot_and_finishes_nothing() {
    let mut f = Fixture::new();
    f.asks(&[(20, 2)]);
    f.allocate("c1", 20, 1_000);
    f.allocate("c2", 20, 1_000);
    // Preempted (or released unused) after 0.5 s: a finished map would teach a 0.5 s map time
    // and a map output on /r1 that does not exist.
    assert!(f.end("c1", 1_500, false).is_empty());
    let job = &f.state.apps[&AppId("app".into())].job;
    assert_eq!(job.running_maps, 1);
    assert_eq!(job.finished_maps(), 0);
    assert!(job.finished_maps_by_rack.is_empty());
    assert_eq!(f.finish("c2", 9_000).len(), 1);
    let job = &f.state.apps[&AppId("app".into())].job;
    assert_eq!((job.running_maps, job.finished_maps()), (0, 1));
}

#[test]
fn a_preempted_reduce_gives_its_rack_back_for_its_rerun() {
    let mut f = Fixture::new();
    let rack = RackName("/r1".into());
    f.asks(&[(10, 2)]);
    f.allocate("r1", 10, 1_000);
    f.allocate("r2", 10, 1_000);
    assert_eq!(f.state.apps[&AppId("app".into())].job.reduces_on(&rack), 2);
    // Preempted: its rerun is asked again and must find /r1's quota free, or SARP and NAS's
    // ReduceNum would send it to a rack without the job's output.
    f.end("r1", 2_000, false);
    f.finish("r2", 9_000);
    let job = &f.state.apps[&AppId("app".into())].job;
    assert_eq!(job.reduces_on(&rack), 1);
    assert_eq!((job.running_reduces, job.finished_reduces), (0, 1));
}

#[test]
fn a_job_goes_through_its_phases_by_its_counts() {
    let mut f = Fixture::new();
    f.asks(&[(0, 1)]);
    assert_eq!(f.phase(), JobPhase::Starting);
    f.allocate("am", 0, 0);
    f.asks(&[(0, 0), (20, 2)]);
    assert_eq!(f.phase(), JobPhase::Map);
    f.allocate("m1", 20, 1);
    f.asks(&[(20, 1), (10, 1)]);
    assert_eq!(f.phase(), JobPhase::Map, "a map pending with a reduce");
    f.allocate("m2", 20, 2);
    f.asks(&[(20, 0)]);
    assert_eq!(f.phase(), JobPhase::Map, "maps still running");
    f.finish("m1", 3);
    f.finish("m2", 4);
    assert_eq!(f.phase(), JobPhase::Reduce);
    f.allocate("r1", 10, 5);
    f.asks(&[(10, 0)]);
    assert_eq!(f.phase(), JobPhase::Reduce, "the reduce runs");
    f.finish("r1", 6);
    assert_eq!(f.phase(), JobPhase::Idle);
}

#[test]
fn the_ams_map_count_wins_over_an_ask_that_lags_a_placed_map() {
    let mut f = Fixture::new();
    let known = |f: &Fixture| {
        let app = &f.state.apps[&AppId("app".into())];
        (
            app.job.known_maps(app.pending(TaskKind::Map)),
            app.job.known_reduces(app.pending(TaskKind::Reduce)),
        )
    };
    f.asks(&[(20, 3), (10, 1)]);
    f.allocate("m1", 20, 1_000);
    f.allocate("m2", 20, 1_000);
    // The AM's next allocate call still asks 3 maps: it has not yet seen m1 and m2 placed.
    f.asks(&[(20, 3)]);
    assert_eq!(known(&f), (5, 1), "before counters: what was seen");
    f.apply(Event::JobStats {
        app: AppId("app".into()),
        maps_total: 3,
        maps_completed: 0,
        reduces_total: 2,
        map_input_bytes: 0,
        map_output_bytes: 0,
    });
    assert_eq!(known(&f), (3, 2), "the AM's own counts");
    // A reduce the AM preempted looks finished to the RM and its rerun is asked again: the
    // reduce count keeps room for it.
    f.allocate("r1", 10, 2_000);
    f.finish("r1", 3_000);
    f.asks(&[(10, 2)]);
    assert_eq!(known(&f), (3, 3));
}

#[test]
fn host_figures_keep_the_latest_valid_figure_each() {
    let event =
        |host: &str, time_ms, cross_rack_mbps, disk_utilization, network_utilization, cpu_speed| {
            Event::HostFigures {
                host: String::from(host),
                time_ms,
                cross_rack_mbps,
                disk_utilization,
                network_utilization,
                cpu_speed,
            }
        };
    let full = event("node17", 1, Some(312.5), Some(0.4), Some(0.3), Some(1.5));
    let mut f = Fixture::new();
    assert_eq!(
        f.apply(full),
        [Observation::HostFigures {
            host: "node17".into()
        }]
    );
    // Only some figures, one of them invalid: the valid one replaces its figure, the invalid
    // one is dropped and the rest stay as they were.
    let partial = event("node17", 9, None, Some(0.9), None, Some(-1.0));
    f.apply(partial);
    let figures = f.state.host_figures["node17"];
    let at = |value, time_ms| Some(MeasuredLoad { value, time_ms });
    assert_eq!(figures.cross_rack_mbps, at(312.5, 1));
    assert_eq!(figures.disk_utilization, at(0.9, 9));
    assert_eq!(figures.network_utilization, at(0.3, 1));
    assert_eq!(figures.cpu_speed, at(1.5, 1));
    // Nothing valid: nothing kept, nothing observed.
    let invalid = event("node18", 9, Some(-3.0), None, None, None);
    assert!(f.apply(invalid).is_empty());
    assert!(!f.state.host_figures.contains_key("node18"));
}
