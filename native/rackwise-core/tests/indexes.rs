//! The cluster state's indexes agree with a scan after each request: running containers
//! (indexed by app and by node, also once an app goes, and counted per app by rack), the
//! candidate apps of each queue, the per-kind pending counts and each job's finished maps.

mod common;

use common::{host, node, nodes_added, queue};
use rackwise_core::mapreduce::TaskKind;
use rackwise_core::protocol::*;
use rackwise_core::state::ClusterState;
use rackwise_core::Engine;
use std::collections::BTreeMap;

fn engine() -> Engine {
    let config = EngineConfig {
        settings: BTreeMap::new(),
        queues: vec![
            queue("root.sw", &[("policy", "shufflewatcher")]),
            queue("root.nas", &[("policy", "nas")]),
        ],
        learned: vec![],
        source: "test".into(),
        ..EngineConfig::default()
    };
    Engine::new(&config).expect("valid config")
}

fn ask(priority: i32, any: u32, hosts: &[(u32, u32)]) -> Ask {
    Ask {
        priority: Priority(priority),
        any,
        resources: Resources {
            memory_mb: 1024,
            vcores: 1,
        },
        racks: hosts
            .iter()
            .map(|(r, _)| (RackName(format!("/r{r}").into()), 1))
            .collect(),
        hosts: hosts
            .iter()
            .map(|(r, n)| (host(*r, *n).into(), 1))
            .collect(),
    }
}

fn requests() -> Vec<OfferRequest> {
    let mut first = nodes_added(2, 3, 8192);
    for (a, q) in [(1, "root.sw"), (2, "root.nas"), (3, "root.sw")] {
        first.push(Event::AppAdded {
            app: AppId(format!("app_{a}").into()),
            name: format!("job {a}"),
            user: "u".into(),
            queue: q.into(),
            app_type: "MAPREDUCE".into(),
            tags: vec![],
            submit_ms: 1_000,
        });
        first.push(Event::AsksChanged {
            app: AppId(format!("app_{a}").into()),
            rows: vec![ask(0, 0, &[]), ask(20, 4, &[(1, 1), (2, 2), (1, 3)])],
        });
    }
    let allocated = |app: u32, c: u32, r: u32, n: u32, p: i32| Event::ContainerAllocated {
        app: AppId(format!("app_{app}").into()),
        container: ContainerId(format!("c{c}")),
        node: node(r, n),
        priority: Priority(p),
        locality: Locality::NodeLocal,
        resources: Resources {
            memory_mb: 1024,
            vcores: 1,
        },
        time_ms: 2_000,
    };
    let second = vec![
        allocated(1, 1, 1, 1, 20),
        allocated(1, 2, 2, 2, 20),
        allocated(2, 3, 1, 3, 20),
        allocated(3, 4, 2, 1, 20),
        Event::AsksChanged {
            app: AppId("app_1".into()),
            rows: vec![ask(20, 2, &[(1, 3)]), ask(10, 2, &[])],
        },
        Event::RackLoad {
            rack: RackName("/r1".into()),
            utilization: 0.9,
            time_ms: 2_000,
        },
    ];
    let third = vec![
        Event::ContainerFinished {
            app: AppId("app_1".into()),
            container: ContainerId("c1".into()),
            time_ms: 3_000,
            task_completed: true,
        },
        Event::JobStats {
            app: AppId("app_1".into()),
            maps_total: 4,
            maps_completed: 1,
            reduces_total: 2,
            map_input_bytes: 128 << 20,
            map_output_bytes: 256 << 20,
        },
        allocated(1, 5, 1, 2, 10),
        // A container id reused by another app moves to that app.
        allocated(3, 2, 2, 3, 20),
        Event::AppRemoved {
            app: AppId("app_1".into()),
        },
        Event::AsksChanged {
            app: AppId("app_9".into()),
            rows: vec![ask(20, 1, &[(1, 1)])],
        },
        // A re-added app starts over without asks, here in another queue.
        Event::AppAdded {
            app: AppId("app_2".into()),
            name: "job 2 again".into(),
            user: "u".into(),
            queue: "root.sw".into(),
            app_type: "MAPREDUCE".into(),
            tags: vec![],
            submit_ms: 500,
        },
        Event::AppAdded {
            app: AppId("app_4".into()),
            name: "not MapReduce".into(),
            user: "u".into(),
            queue: "root.sw".into(),
            app_type: "SPARK".into(),
            tags: vec![],
            submit_ms: 100,
        },
        Event::AsksChanged {
            app: AppId("app_4".into()),
            rows: vec![ask(20, 3, &[])],
        },
        Event::ContainerFinished {
            app: AppId("app_3".into()),
            container: ContainerId("c4".into()),
            time_ms: 3_000,
            task_completed: true,
        },
    ];
    [first, second, third]
        .into_iter()
        .enumerate()
        .map(|(i, events)| OfferRequest {
            now_ms: 1_000 * (i as u64 + 1),
            events,
            node: NodeOffer {
                node: node(1, 1 + i as u32),
                unallocated: Resources {
                    memory_mb: 4096,
                    vcores: 4,
                },
                utilization: None,
            },
        })
        .collect()
}

#[test]
fn the_state_indexes_agree_with_a_scan_after_every_request() {
    let mut engine = engine();
    for request in requests() {
        engine.offer(request);
        check_indexes(engine.state());
    }
    let state = engine.state();
    assert!(state.containers.values().all(|c| &*c.app.0 != "app_1"));
    assert_eq!(
        state.containers[&ContainerId("c2".into())].app.0,
        "app_3".into()
    );
    assert_eq!(state.containers.len(), 2);
    assert_eq!(state.apps[&AppId("app_3".into())].job.finished_maps(), 1);
    assert_eq!(
        state.running_by_rack(&AppId("app_3".into()), TaskKind::Map),
        BTreeMap::from([(RackName("/r2".into()), 1)])
    );
    // The per-node index agrees with a scan, after a finish, an id reused on another node and
    // an app's removal.
    for id in state.nodes.keys() {
        let scanned: Vec<(&ContainerId, &AppId, TaskKind)> = state
            .containers
            .iter()
            .filter(|(_, c)| &c.node == id)
            .map(|(container, c)| (container, &c.app, c.kind))
            .collect();
        assert_eq!(
            state.containers_on(id).collect::<Vec<_>>(),
            scanned,
            "{}",
            id.0
        );
    }
    assert_eq!(state.containers_on(&node(2, 2)).count(), 0);
    assert_eq!(state.containers_on(&node(2, 3)).count(), 1);
}

/// The candidate index, the per-kind pending counts and the finished maps against a scan of
/// every app.
fn check_indexes(state: &ClusterState) {
    let kinds = [
        TaskKind::ApplicationMaster,
        TaskKind::Map,
        TaskKind::Reduce,
        TaskKind::Other,
    ];
    for (id, app) in state.apps.iter() {
        let finished: u32 = app.job.finished_maps_by_rack.values().sum();
        assert_eq!(app.job.finished_maps(), finished, "{}", id.0);
        for kind in kinds {
            let mut running = BTreeMap::new();
            for c in state.containers.values() {
                if &c.app == id && c.kind == kind {
                    *running.entry(c.rack.clone()).or_insert(0) += 1;
                }
            }
            assert_eq!(
                state.running_by_rack(id, kind),
                running,
                "{} {kind:?}",
                id.0
            );
            let summed: u32 = app
                .asks
                .values()
                .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == kind)
                .map(|ask| ask.any)
                .sum();
            assert_eq!(app.pending(kind), summed, "{} {kind:?}", id.0);
        }
    }
    let mut scanned: Vec<(&str, u64, &AppId)> = state
        .apps
        .iter()
        .filter(|(_, app)| {
            app.is_mapreduce
                && !app.awaits_application_master()
                && app.pending(TaskKind::Map) + app.pending(TaskKind::Reduce) > 0
        })
        .map(|(id, app)| (app.queue.as_str(), app.submit_ms, id))
        .collect();
    scanned.sort();
    let indexed: Vec<(&str, u64, &AppId)> = state
        .candidates_by_queue()
        .flat_map(|(queue, apps)| {
            apps.map(move |(submit, slot, id, app)| {
                assert_eq!(state.apps.slot_of(id), Some(slot));
                // The index's slot holds the app of that id.
                assert!(std::ptr::eq(app, &state.apps[id]), "{}", id.0);
                (&**queue, submit, id)
            })
        })
        .collect();
    assert_eq!(indexed, scanned);
}
