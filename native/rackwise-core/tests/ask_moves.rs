//! `AsksMoved` leaves the state as the whole rows it stands for would: a map row's locations
//! changed by moves (a host taken to zero, a new host, a rack count down) and its `any`, next to
//! a reduce row replaced whole in the same event, give the app the ask table, pending counts and
//! candidate listing that `AsksChanged` with the final tables gives; a move with `any == 0`
//! removes the row, and a move of a row the app does not hold changes nothing.

mod common;

use common::{host, node, nodes_added, queue, rack};
use rackwise_core::mapreduce::TaskKind;
use rackwise_core::protocol::*;
use rackwise_core::Engine;
use std::collections::BTreeMap;
use std::sync::Arc;

const MAP: i32 = 20;
const REDUCE: i32 = 10;
const APP: &str = "app_1";

fn engine() -> Engine {
    let config = EngineConfig {
        queues: vec![queue("root.nas", &[("policy", "nas")])],
        source: "test".into(),
        ..EngineConfig::default()
    };
    let mut engine = Engine::new(&config).expect("valid config");
    let mut events = nodes_added(2, 3, 8192);
    events.push(Event::AppAdded {
        app: app(),
        name: "job".into(),
        user: "u".into(),
        queue: "root.nas".into(),
        app_type: "MAPREDUCE".into(),
        tags: vec![],
        submit_ms: 1_000,
    });
    offer(&mut engine, events);
    engine
}

fn app() -> AppId {
    AppId(APP.into())
}

fn offer(engine: &mut Engine, events: Vec<Event>) {
    engine.offer(OfferRequest {
        now_ms: 2_000,
        events,
        node: NodeOffer {
            node: node(1, 1),
            unallocated: Resources {
                memory_mb: 8192,
                vcores: 8,
            },
            utilization: None,
        },
    });
}

fn row(priority: i32, any: u32, hosts: &[((u32, u32), u32)], racks: &[(u32, u32)]) -> Ask {
    Ask {
        priority: Priority(priority),
        any,
        resources: Resources {
            memory_mb: 1024,
            vcores: 1,
        },
        racks: racks.iter().map(|&(r, c)| (rack(r), c)).collect(),
        hosts: hosts
            .iter()
            .map(|&((r, n), c)| (Arc::from(host(r, n)), c))
            .collect(),
    }
}

fn host_key(r: u32, n: u32) -> Arc<str> {
    host(r, n).into()
}

/// The app's ask table, pending maps and reduces, and whether it is a candidate.
fn seen(engine: &Engine) -> (BTreeMap<Priority, Ask>, u32, u32, bool) {
    let state = engine.state();
    let known = state.apps.get(&app()).expect("the app is known");
    let listed = state
        .candidates_by_queue()
        .any(|(_, mut apps)| apps.any(|(_, _, id, _)| *id == app()));
    (
        known.asks.clone(),
        known.pending(TaskKind::Map),
        known.pending(TaskKind::Reduce),
        listed,
    )
}

fn first_rows() -> Vec<Ask> {
    vec![
        row(REDUCE, 2, &[], &[]),
        row(
            MAP,
            4,
            &[((1, 1), 2), ((1, 2), 1), ((2, 1), 1)],
            &[(1, 3), (2, 1)],
        ),
    ]
}

#[test]
fn moves_leave_the_table_the_whole_rows_would() {
    let mut whole = engine();
    offer(&mut whole, vec![asks_changed(first_rows())]);
    offer(
        &mut whole,
        vec![asks_changed(vec![
            row(REDUCE, 1, &[], &[]),
            row(
                MAP,
                3,
                &[((1, 1), 1), ((2, 1), 1), ((2, 2), 1)],
                &[(1, 1), (2, 2)],
            ),
        ])],
    );

    let mut moved = engine();
    offer(&mut moved, vec![asks_changed(first_rows())]);
    offer(
        &mut moved,
        vec![Event::AsksMoved {
            app: app(),
            rows: vec![row(REDUCE, 1, &[], &[])],
            moves: vec![AskMove {
                priority: Priority(MAP),
                any: 3,
                hosts: vec![
                    (host_key(1, 1), -1),
                    (host_key(1, 2), -1),
                    (host_key(2, 2), 1),
                ],
                racks: vec![(rack(1), -1), (rack(1), -1), (rack(2), 1)],
            }],
        }],
    );

    let (asks, maps, reduces, listed) = seen(&moved);
    assert_eq!((maps, reduces, listed), (3, 1, true));
    assert!(!asks[&Priority(MAP)].hosts.contains_key("r1n2"));
    assert_eq!(seen(&moved), seen(&whole));
}

#[test]
fn a_move_to_zero_removes_the_row_and_a_move_of_no_row_changes_nothing() {
    let mut engine = engine();
    offer(&mut engine, vec![asks_changed(first_rows())]);
    let before = seen(&engine);
    offer(
        &mut engine,
        vec![one_move(AskMove {
            priority: Priority(5),
            any: 7,
            hosts: vec![(host_key(1, 1), 3)],
            racks: vec![],
        })],
    );
    assert_eq!(seen(&engine), before);

    offer(
        &mut engine,
        vec![one_move(AskMove {
            priority: Priority(MAP),
            any: 0,
            hosts: vec![],
            racks: vec![],
        })],
    );
    let (asks, maps, reduces, listed) = seen(&engine);
    assert!(!asks.contains_key(&Priority(MAP)));
    assert_eq!((maps, reduces, listed), (0, 2, true));
}

/// `AsksMoved` with one move and no whole row.
fn one_move(one: AskMove) -> Event {
    Event::AsksMoved {
        app: app(),
        rows: vec![],
        moves: vec![one],
    }
}

fn asks_changed(rows: Vec<Ask>) -> Event {
    Event::AsksChanged { app: app(), rows }
}
