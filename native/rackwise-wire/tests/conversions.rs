//! The wire's conversions: what a valid message becomes, and every refusal.

use prost::Message;
use rackwise_core::protocol::{self as p, AppId, Ask, Priority};
use rackwise_core::Engine;
use rackwise_wire::v1::{self, event::Kind};
use rackwise_wire::{decode_engine_config, decode_offer_request, offer_request, WireError};
use std::borrow::Cow;
use std::collections::BTreeMap;

const MAP: i32 = 20;
const REDUCE: i32 = 10;

fn resources(memory_mb: u64, vcores: u32) -> Option<v1::Resources> {
    Some(v1::Resources {
        memory_mb: Some(memory_mb),
        vcores: Some(vcores),
    })
}

fn event(kind: Kind) -> v1::Event {
    v1::Event { kind: Some(kind) }
}

fn row(priority: i32, any: u32, hosts: &[(&str, u32)], racks: &[(&str, u32)]) -> v1::AskRow {
    v1::AskRow {
        priority: Some(priority),
        any: Some(any),
        resources: resources(1024, 1),
        racks: racks.iter().map(|(r, _)| r.to_string()).collect(),
        rack_counts: racks.iter().map(|(_, c)| *c).collect(),
        hosts: hosts.iter().map(|(h, _)| h.to_string()).collect(),
        host_counts: hosts.iter().map(|(_, c)| *c).collect(),
    }
}

fn asks_changed(app: &str, rows: Vec<v1::AskRow>) -> v1::Event {
    event(Kind::AsksChanged(v1::AsksChanged {
        app: app.into(),
        rows,
    }))
}

fn node_added(node: &str, host: &str, rack: &str) -> v1::Event {
    event(Kind::NodeAdded(v1::NodeAdded {
        node: node.into(),
        host: host.into(),
        rack: rack.into(),
        capacity: resources(8192, 8),
    }))
}

fn app_added(app: &str, queue: &str) -> v1::Event {
    event(Kind::AppAdded(v1::AppAdded {
        app: app.into(),
        name: format!("job-{app}"),
        user: "alice".into(),
        app_type: "MAPREDUCE".into(),
        queue: queue.into(),
        tags: vec!["nightly".into()],
        submit_ms: Some(5),
    }))
}

/// A request with one event of every kind, each valid.
fn every_event() -> v1::OfferRequest {
    v1::OfferRequest {
        now_ms: Some(1_000),
        events: vec![
            node_added("h1:8041", "h1", "/r1"),
            event(Kind::NodeRemoved(v1::NodeRemoved {
                node: "h9:8041".into(),
            })),
            app_added("app_1", "root.sw"),
            asks_changed(
                "app_1",
                vec![row(MAP, 3, &[("h1", 2), ("h2", 1)], &[("/r1", 3)])],
            ),
            event(Kind::ContainerAllocated(v1::ContainerAllocated {
                app: "app_1".into(),
                container: "container_1".into(),
                node: "h1:8041".into(),
                priority: Some(MAP),
                locality: v1::Locality::NodeLocal as i32,
                resources: resources(1024, 1),
                time_ms: Some(900),
            })),
            event(Kind::ContainerFinished(v1::ContainerFinished {
                app: "app_1".into(),
                container: "container_1".into(),
                time_ms: Some(950),
                task_completed: Some(true),
            })),
            event(Kind::JobStats(v1::JobStats {
                app: "app_1".into(),
                maps_total: Some(10),
                maps_completed: Some(0),
                reduces_total: Some(2),
                map_input_bytes: Some(0),
                map_output_bytes: Some(0),
            })),
            event(Kind::RackLoad(v1::RackLoad {
                rack: "/r1".into(),
                utilization: Some(0.0),
                time_ms: Some(990),
            })),
            event(Kind::HostFigures(v1::HostFigures {
                host: "h1".into(),
                time_ms: Some(995),
                cross_rack_mbps: Some(120.5),
                disk_utilization: Some(0.25),
                ..Default::default()
            })),
            event(Kind::AppRemoved(v1::AppRemoved {
                app: "app_0".into(),
            })),
            event(Kind::Account(v1::Account {
                queue: "root.users.alice".into(),
                budget: Some(100.0),
                spending: Some(1.5),
            })),
        ],
        node: Some(v1::NodeOffer {
            node: "h1:8041".into(),
            unallocated: resources(4096, 4),
            utilization: Some(v1::Utilization {
                pmem_mb: Some(2048),
                cpu: Some(1.5),
            }),
        }),
    }
}

fn convert(request: v1::OfferRequest) -> Result<p::OfferRequest, WireError> {
    offer_request(request)
}

fn ask(priority: i32, any: u32, hosts: &[(&str, u32)], racks: &[(&str, u32)]) -> Ask {
    Ask {
        priority: Priority(priority),
        any,
        resources: p::Resources {
            memory_mb: 1024,
            vcores: 1,
        },
        racks: racks
            .iter()
            .map(|(r, c)| (p::RackName((*r).into()), *c))
            .collect(),
        hosts: hosts.iter().map(|(h, c)| ((*h).into(), *c)).collect(),
    }
}

#[test]
fn every_event_kind_becomes_the_protocol_event() {
    let converted = decode_offer_request(&every_event().encode_to_vec()).unwrap();
    let app = || AppId("app_1".into());
    let expected = p::OfferRequest {
        now_ms: 1_000,
        events: vec![
            p::Event::NodeAdded {
                node: p::NodeId("h1:8041".into()),
                host: "h1".into(),
                rack: p::RackName("/r1".into()),
                capacity: p::Resources {
                    memory_mb: 8192,
                    vcores: 8,
                },
            },
            p::Event::NodeRemoved {
                node: p::NodeId("h9:8041".into()),
            },
            p::Event::AppAdded {
                app: app(),
                name: "job-app_1".into(),
                user: "alice".into(),
                queue: "root.sw".into(),
                app_type: "MAPREDUCE".into(),
                tags: vec!["nightly".into()],
                submit_ms: 5,
            },
            p::Event::AsksChanged {
                app: app(),
                rows: vec![ask(MAP, 3, &[("h1", 2), ("h2", 1)], &[("/r1", 3)])],
            },
            p::Event::ContainerAllocated {
                app: app(),
                container: p::ContainerId("container_1".into()),
                node: p::NodeId("h1:8041".into()),
                priority: Priority(MAP),
                locality: p::Locality::NodeLocal,
                resources: p::Resources {
                    memory_mb: 1024,
                    vcores: 1,
                },
                time_ms: 900,
            },
            p::Event::ContainerFinished {
                app: app(),
                container: p::ContainerId("container_1".into()),
                time_ms: 950,
                task_completed: true,
            },
            p::Event::JobStats {
                app: app(),
                maps_total: 10,
                maps_completed: 0,
                reduces_total: 2,
                map_input_bytes: 0,
                map_output_bytes: 0,
            },
            p::Event::RackLoad {
                rack: p::RackName("/r1".into()),
                utilization: 0.0,
                time_ms: 990,
            },
            p::Event::HostFigures {
                host: "h1".into(),
                time_ms: 995,
                cross_rack_mbps: Some(120.5),
                disk_utilization: Some(0.25),
                network_utilization: None,
                cpu_speed: None,
            },
            p::Event::AppRemoved {
                app: AppId("app_0".into()),
            },
            p::Event::Account {
                queue: "root.users.alice".into(),
                budget: 100.0,
                spending: 1.5,
            },
        ],
        node: p::NodeOffer {
            node: p::NodeId("h1:8041".into()),
            unallocated: p::Resources {
                memory_mb: 4096,
                vcores: 4,
            },
            utilization: Some(p::Utilization {
                pmem_mb: 2048,
                cpu: 1.5,
            }),
        },
    };
    assert_eq!(converted, expected);
}

#[test]
fn host_figures_without_cross_rack_traffic_reach_the_core_as_sent() {
    let mut request = every_event();
    request.events = vec![event(Kind::HostFigures(v1::HostFigures {
        host: "h1".into(),
        time_ms: Some(1),
        network_utilization: Some(0.5),
        cpu_speed: Some(1.2),
        ..Default::default()
    }))];
    assert_eq!(
        convert(request).unwrap().events,
        vec![p::Event::HostFigures {
            host: "h1".into(),
            time_ms: 1,
            cross_rack_mbps: None,
            disk_utilization: None,
            network_utilization: Some(0.5),
            cpu_speed: Some(1.2),
        }]
    );
}

#[test]
fn an_ask_change_carries_only_the_rows_it_names() {
    let mut request = every_event();
    request.events = vec![asks_changed(
        "app_1",
        vec![
            row(MAP, 4, &[("h2", 4)], &[("/r1", 4)]),
            row(REDUCE, 2, &[], &[]),
        ],
    )];
    assert_eq!(
        convert(request).unwrap().events,
        vec![p::Event::AsksChanged {
            app: AppId("app_1".into()),
            rows: vec![
                ask(MAP, 4, &[("h2", 4)], &[("/r1", 4)]),
                ask(REDUCE, 2, &[], &[]),
            ],
        }]
    );
}

/// Applies `break_it` to a valid request and expects a refusal naming `field` with a reason
/// containing `reason`.
fn refused(field: &str, reason: &str, break_it: impl FnOnce(&mut v1::OfferRequest)) {
    let mut request = every_event();
    break_it(&mut request);
    let error = decode_offer_request(&request.encode_to_vec())
        .expect_err(&format!("{field} should be refused"));
    assert_eq!(error.field, field, "{error}");
    assert!(error.reason.contains(reason), "{error}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("rackwise.wire.v1.{field} ")),
        "{error}"
    );
}

/// The `index`th event of the request, which must be of the kind `pick` extracts.
fn kind_at<T>(
    request: &mut v1::OfferRequest,
    index: usize,
    pick: impl FnOnce(&mut Kind) -> Option<&mut T>,
) -> &mut T {
    pick(request.events[index].kind.as_mut().unwrap()).expect("event of the expected kind")
}

const MISSING: &str = "is missing (required)";
const EMPTY: &str = "is empty (required";

#[test]
fn an_account_needs_a_queue_and_credits_that_are_finite_and_not_negative() {
    fn account(r: &mut v1::OfferRequest) -> &mut v1::Account {
        let last = r.events.len() - 1;
        kind_at(r, last, |k| match k {
            Kind::Account(m) => Some(m),
            _ => None,
        })
    }
    let last = every_event().events.len() - 1;
    let at = format!("OfferRequest.events[{last}].account");
    refused(&format!("{at}.queue"), EMPTY, |r| account(r).queue.clear());
    refused(&format!("{at}.budget"), MISSING, |r| {
        account(r).budget = None
    });
    refused(&format!("{at}.spending"), MISSING, |r| {
        account(r).spending = None
    });
    refused(
        &format!("{at}.budget"),
        "is -1 (required: finite and >= 0)",
        |r| account(r).budget = Some(-1.0),
    );
    refused(&format!("{at}.spending"), "is NaN (required", |r| {
        account(r).spending = Some(f64::NAN)
    });
}

#[test]
fn the_request_and_node_fields_are_required() {
    refused("OfferRequest.now_ms", MISSING, |r| r.now_ms = None);
    refused("OfferRequest.node", MISSING, |r| r.node = None);
    fn node(r: &mut v1::OfferRequest) -> &mut v1::NodeOffer {
        r.node.as_mut().unwrap()
    }
    refused("OfferRequest.node.node", EMPTY, |r| node(r).node.clear());
    refused("OfferRequest.node.unallocated", MISSING, |r| {
        node(r).unallocated = None
    });
    refused("OfferRequest.node.unallocated.memory_mb", MISSING, |r| {
        node(r).unallocated.as_mut().unwrap().memory_mb = None
    });
    refused("OfferRequest.node.unallocated.vcores", MISSING, |r| {
        node(r).unallocated.as_mut().unwrap().vcores = None
    });
    refused("OfferRequest.node.utilization.pmem_mb", MISSING, |r| {
        node(r).utilization.as_mut().unwrap().pmem_mb = None
    });
    refused("OfferRequest.node.utilization.cpu", MISSING, |r| {
        node(r).utilization.as_mut().unwrap().cpu = None
    });
    refused("OfferRequest.events[4]", "has no kind set", |r| {
        r.events[4].kind = None
    });
}

#[test]
fn node_and_app_events_require_their_fields() {
    fn node_added(r: &mut v1::OfferRequest) -> &mut v1::NodeAdded {
        kind_at(r, 0, |k| match k {
            Kind::NodeAdded(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[0].node_added";
    refused(&format!("{at}.node"), EMPTY, |r| node_added(r).node.clear());
    refused(&format!("{at}.host"), EMPTY, |r| node_added(r).host.clear());
    refused(&format!("{at}.rack"), EMPTY, |r| node_added(r).rack.clear());
    refused(&format!("{at}.capacity"), MISSING, |r| {
        node_added(r).capacity = None
    });
    refused("OfferRequest.events[1].node_removed.node", EMPTY, |r| {
        kind_at(r, 1, |k| match k {
            Kind::NodeRemoved(m) => Some(m),
            _ => None,
        })
        .node
        .clear()
    });
    fn app_added(r: &mut v1::OfferRequest) -> &mut v1::AppAdded {
        kind_at(r, 2, |k| match k {
            Kind::AppAdded(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[2].app_added";
    refused(&format!("{at}.app"), EMPTY, |r| app_added(r).app.clear());
    refused(&format!("{at}.queue"), EMPTY, |r| {
        app_added(r).queue.clear()
    });
    refused(&format!("{at}.submit_ms"), MISSING, |r| {
        app_added(r).submit_ms = None
    });
    refused("OfferRequest.events[9].app_removed.app", EMPTY, |r| {
        kind_at(r, 9, |k| match k {
            Kind::AppRemoved(m) => Some(m),
            _ => None,
        })
        .app
        .clear()
    });
}

#[test]
fn an_app_may_lack_a_name_user_and_type() {
    let mut request = every_event();
    if let Some(Kind::AppAdded(added)) = request.events[2].kind.as_mut() {
        added.name.clear();
        added.user.clear();
        added.app_type.clear();
    }
    assert!(convert(request).is_ok());
}

#[test]
fn ask_changes_require_their_fields() {
    fn change(r: &mut v1::OfferRequest) -> &mut v1::AsksChanged {
        kind_at(r, 3, |k| match k {
            Kind::AsksChanged(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[3].asks_changed";
    refused(&format!("{at}.app"), EMPTY, |r| change(r).app.clear());
    refused(&format!("{at}.rows[0].priority"), MISSING, |r| {
        change(r).rows[0].priority = None
    });
    refused(&format!("{at}.rows[0].any"), MISSING, |r| {
        change(r).rows[0].any = None
    });
    refused(&format!("{at}.rows[0].resources"), MISSING, |r| {
        change(r).rows[0].resources = None
    });
    refused(&format!("{at}.rows[0].resources.vcores"), MISSING, |r| {
        change(r).rows[0].resources.as_mut().unwrap().vcores = None
    });
    refused(
        &format!("{at}.rows[1].priority"),
        "20 appears in an earlier row",
        |r| {
            let again = change(r).rows[0].clone();
            change(r).rows.push(again)
        },
    );
    refused(&format!("{at}.rows[0].racks"), "has an empty name", |r| {
        let row = &mut change(r).rows[0];
        row.racks.push(String::new());
        row.rack_counts.push(1);
    });
    refused(&format!("{at}.rows[0].hosts"), "has an empty name", |r| {
        let row = &mut change(r).rows[0];
        row.hosts.push(String::new());
        row.host_counts.push(1);
    });
    refused(&format!("{at}.rows[0].hosts"), "names 'h1' twice", |r| {
        let row = &mut change(r).rows[0];
        row.hosts.push("h1".into());
        row.host_counts.push(1);
    });
    refused(
        &format!("{at}.rows[0].host_counts"),
        "has 1 counts for 2 hosts",
        |r| {
            change(r).rows[0].host_counts.pop();
        },
    );
    refused(
        &format!("{at}.rows[0].rack_counts"),
        "has 2 counts for 1 racks",
        |r| change(r).rows[0].rack_counts.push(4),
    );
}

#[test]
fn a_removing_row_needs_no_resources() {
    let mut request = every_event();
    request.events = vec![asks_changed(
        "app_1",
        vec![v1::AskRow {
            priority: Some(MAP),
            any: Some(0),
            ..Default::default()
        }],
    )];
    let converted = convert(request).unwrap();
    assert_eq!(
        converted.events,
        vec![p::Event::AsksChanged {
            app: AppId("app_1".into()),
            rows: vec![Ask {
                priority: Priority(MAP),
                any: 0,
                resources: p::Resources::default(),
                racks: BTreeMap::new(),
                hosts: BTreeMap::new(),
            }],
        }]
    );
}

#[test]
fn container_events_require_their_fields() {
    fn allocated(r: &mut v1::OfferRequest) -> &mut v1::ContainerAllocated {
        kind_at(r, 4, |k| match k {
            Kind::ContainerAllocated(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[4].container_allocated";
    refused(&format!("{at}.app"), EMPTY, |r| allocated(r).app.clear());
    refused(&format!("{at}.container"), EMPTY, |r| {
        allocated(r).container.clear()
    });
    refused(&format!("{at}.node"), EMPTY, |r| allocated(r).node.clear());
    refused(&format!("{at}.priority"), MISSING, |r| {
        allocated(r).priority = None
    });
    refused(&format!("{at}.locality"), "LOCALITY_UNSPECIFIED", |r| {
        allocated(r).locality = v1::Locality::Unspecified as i32
    });
    refused(&format!("{at}.locality"), "unknown value 7", |r| {
        allocated(r).locality = 7
    });
    refused(&format!("{at}.resources"), MISSING, |r| {
        allocated(r).resources = None
    });
    refused(&format!("{at}.time_ms"), MISSING, |r| {
        allocated(r).time_ms = None
    });
    fn finished(r: &mut v1::OfferRequest) -> &mut v1::ContainerFinished {
        kind_at(r, 5, |k| match k {
            Kind::ContainerFinished(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[5].container_finished";
    refused(&format!("{at}.app"), EMPTY, |r| finished(r).app.clear());
    refused(&format!("{at}.container"), EMPTY, |r| {
        finished(r).container.clear()
    });
    refused(&format!("{at}.time_ms"), MISSING, |r| {
        finished(r).time_ms = None
    });
    refused(&format!("{at}.task_completed"), MISSING, |r| {
        finished(r).task_completed = None
    });
}

#[test]
fn job_stats_require_every_counter() {
    fn stats(r: &mut v1::OfferRequest) -> &mut v1::JobStats {
        kind_at(r, 6, |k| match k {
            Kind::JobStats(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[6].job_stats";
    refused(&format!("{at}.app"), EMPTY, |r| stats(r).app.clear());
    refused(&format!("{at}.maps_total"), MISSING, |r| {
        stats(r).maps_total = None
    });
    refused(&format!("{at}.maps_completed"), MISSING, |r| {
        stats(r).maps_completed = None
    });
    refused(&format!("{at}.reduces_total"), MISSING, |r| {
        stats(r).reduces_total = None
    });
    refused(&format!("{at}.map_input_bytes"), MISSING, |r| {
        stats(r).map_input_bytes = None
    });
    refused(&format!("{at}.map_output_bytes"), MISSING, |r| {
        stats(r).map_output_bytes = None
    });
}

#[test]
fn feed_events_require_their_fields() {
    fn rack_load(r: &mut v1::OfferRequest) -> &mut v1::RackLoad {
        kind_at(r, 7, |k| match k {
            Kind::RackLoad(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[7].rack_load";
    refused(&format!("{at}.rack"), EMPTY, |r| rack_load(r).rack.clear());
    refused(&format!("{at}.utilization"), MISSING, |r| {
        rack_load(r).utilization = None
    });
    refused(&format!("{at}.time_ms"), MISSING, |r| {
        rack_load(r).time_ms = None
    });
    fn figures(r: &mut v1::OfferRequest) -> &mut v1::HostFigures {
        kind_at(r, 8, |k| match k {
            Kind::HostFigures(m) => Some(m),
            _ => None,
        })
    }
    let at = "OfferRequest.events[8].host_figures";
    refused(&format!("{at}.host"), EMPTY, |r| figures(r).host.clear());
    refused(&format!("{at}.time_ms"), MISSING, |r| {
        figures(r).time_ms = None
    });
    refused(at, "carries no figure", |r| {
        let figures = figures(r);
        figures.cross_rack_mbps = None;
        figures.disk_utilization = None;
    });
}

#[test]
fn bytes_that_are_no_message_are_refused() {
    let error = decode_offer_request(b"\xff\xff\xff not protobuf").unwrap_err();
    assert_eq!(error.field, "OfferRequest");
    assert!(error.reason.starts_with("cannot be decoded"), "{error}");
    // A length-delimited field claiming 5 bytes where 2 follow.
    let error = decode_engine_config(b"\x0a\x05ab").unwrap_err();
    assert_eq!(error.field, "EngineConfig");
    assert!(error.reason.starts_with("cannot be decoded"), "{error}");
}

fn config() -> v1::EngineConfig {
    v1::EngineConfig {
        settings: [(
            "yarn.scheduler.rackwise.netsat.threshold".into(),
            "0.7".into(),
        )]
        .into_iter()
        .collect(),
        queues: vec![
            v1::QueueSettings {
                queue: "root.sw".into(),
                rackwise: Some(v1::RackwiseElement {
                    children: [("policy".into(), "shufflewatcher".into())]
                        .into_iter()
                        .collect(),
                }),
            },
            v1::QueueSettings {
                queue: "root.plain".into(),
                rackwise: None,
            },
        ],
        // As written before task times were kept: none, and no `profile_runs`.
        learned: vec![v1::LearnedRatio {
            job_name: "nightly-etl".into(),
            ratio: Some(0.4),
            runs: Some(3),
            ..v1::LearnedRatio::default()
        }],
        learned_max_entries: 10_000,
        source: "fair-scheduler.xml".into(),
        minimum_allocation: resources(1024, 1),
    }
}

#[test]
fn an_engine_config_becomes_the_protocol_config() {
    let converted = decode_engine_config(&config().encode_to_vec()).unwrap();
    assert_eq!(
        converted,
        p::EngineConfig {
            settings: [(
                "yarn.scheduler.rackwise.netsat.threshold".into(),
                "0.7".into()
            )]
            .into_iter()
            .collect(),
            queues: vec![
                p::QueueSettings {
                    queue: "root.sw".into(),
                    rackwise: Some(
                        [("policy".into(), "shufflewatcher".into())]
                            .into_iter()
                            .collect()
                    ),
                },
                p::QueueSettings {
                    queue: "root.plain".into(),
                    rackwise: None,
                },
            ],
            learned: vec![p::LearnedRatio {
                job_name: "nightly-etl".into(),
                ratio: 0.4,
                runs: 3,
                map_ms: None,
                reduce_ms: None,
                profile_runs: 0,
            }],
            learned_max_entries: Some(10_000),
            source: "fair-scheduler.xml".into(),
            minimum_allocation: p::Resources {
                memory_mb: 1024,
                vcores: 1,
            },
        }
    );
}

#[test]
fn an_engine_config_without_a_history_bound_keeps_every_name() {
    let message = v1::EngineConfig {
        learned_max_entries: 0,
        ..config()
    };
    let converted = decode_engine_config(&message.encode_to_vec()).unwrap();
    assert_eq!(converted.learned_max_entries, None);
}

#[test]
fn the_engine_config_requires_queue_names_and_whole_ratios() {
    let refused = |field: &str, reason: &str, break_it: fn(&mut v1::EngineConfig)| {
        let mut message = config();
        break_it(&mut message);
        let error = decode_engine_config(&message.encode_to_vec()).unwrap_err();
        assert_eq!(error.field, field, "{error}");
        assert!(error.reason.contains(reason), "{error}");
    };
    refused("EngineConfig.queues[1].queue", EMPTY, |m| {
        m.queues[1].queue.clear()
    });
    refused("EngineConfig.learned[0].job_name", EMPTY, |m| {
        m.learned[0].job_name.clear()
    });
    refused("EngineConfig.learned[0].ratio", MISSING, |m| {
        m.learned[0].ratio = None
    });
    refused("EngineConfig.learned[0].runs", MISSING, |m| {
        m.learned[0].runs = None
    });
}

#[test]
fn the_response_carries_plan_diagnostics_learned_logs_queue_weights_intervals_and_scores() {
    let response = p::OfferResponse {
        plan: p::Plan {
            queues: vec![p::QueuePlan {
                queue: "root.sw".into(),
                steered: vec![AppId("app_1".into()), AppId("app_2".into())],
                entries: vec![p::PlanEntry {
                    app: AppId("app_1".into()),
                    priority: Priority(MAP),
                    locality: p::Locality::RackLocal,
                    reason: Cow::Borrowed("nass:saturated:node-local-map"),
                }],
                scheduler_orders_apps: true,
            }],
        },
        learned: vec![p::LearnedRatio {
            job_name: "etl".into(),
            ratio: 0.25,
            runs: 2,
            map_ms: Some(20_000.0),
            reduce_ms: None,
            profile_runs: 2,
        }],
        diagnostics: p::Diagnostics {
            rack: Some(p::RackName("/r1".into())),
            rack_utilization: Some(0.75),
            rack_saturated: true,
            starved: vec![AppId("app_2".into())],
        },
        logs: vec![p::LogRecord {
            level: "warn".into(),
            target: "rackwise_core::state".into(),
            message: "feed figure ignored".into(),
        }],
        queue_weights: vec![
            p::QueueWeight {
                queue: "root.sw".into(),
                weight: 2.5,
            },
            p::QueueWeight {
                queue: "root.adhoc".into(),
                weight: 0.0,
            },
        ],
        intervals: vec![p::MarketInterval {
            market: "root.users".into(),
            sequence: 7,
            end_ms: 140_000,
            price: 3.0,
            queues: vec![p::QueueAccount {
                queue: "root.users.bob".into(),
                budget: 94.0,
                spending: 2.0,
                used: 4.0,
                charged_units: 3.0,
                charge: 6.0,
                share: 2.0 / 3.0,
            }],
        }],
        node_scores: vec![p::NodeScoreReport {
            queue: "root.dr".into(),
            node: p::NodeId("h4:8041".into()),
            cpu_speed: 0.5,
            cpu_free: 0.25,
            disk: 0.2,
            disk_from_feed: false,
            net: 0.9,
            net_from_feed: true,
            map_influence: 0.2,
            reduce_influence: 1.0,
            map_score: 0.3,
            map_class: p::PerformanceClass::Low,
            reduce_score: 0.8,
            reduce_class: p::PerformanceClass::Medium,
        }],
    };
    let bytes = rackwise_wire::encode_offer_response(&response).unwrap();
    let decoded = v1::OfferResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        decoded,
        v1::OfferResponse {
            plan: Some(v1::Plan {
                queues: vec![v1::QueuePlan {
                    queue: "root.sw".into(),
                    steered: vec!["app_1".into(), "app_2".into()],
                    entries: vec![v1::PlanEntry {
                        app: "app_1".into(),
                        priority: Some(MAP),
                        locality: v1::Locality::RackLocal as i32,
                        reason: "nass:saturated:node-local-map".into(),
                    }],
                    scheduler_orders_apps: true,
                }],
            }),
            learned: vec![v1::LearnedRatio {
                job_name: "etl".into(),
                ratio: Some(0.25),
                runs: Some(2),
                map_ms: Some(20_000.0),
                reduce_ms: None,
                profile_runs: Some(2),
            }],
            diagnostics: Some(v1::Diagnostics {
                rack: Some("/r1".into()),
                rack_utilization: Some(0.75),
                rack_saturated: Some(true),
                starved: vec!["app_2".into()],
            }),
            logs: vec![v1::LogRecord {
                level: v1::LogLevel::Warn as i32,
                target: "rackwise_core::state".into(),
                message: "feed figure ignored".into(),
            }],
            queue_weights: vec![
                v1::QueueWeight {
                    queue: "root.sw".into(),
                    weight: Some(2.5),
                },
                v1::QueueWeight {
                    queue: "root.adhoc".into(),
                    weight: Some(0.0),
                },
            ],
            intervals: vec![v1::MarketInterval {
                market: "root.users".into(),
                sequence: Some(7),
                end_ms: Some(140_000),
                price: Some(3.0),
                queues: vec![v1::QueueAccount {
                    queue: "root.users.bob".into(),
                    budget: Some(94.0),
                    spending: Some(2.0),
                    used: Some(4.0),
                    charged_units: Some(3.0),
                    charge: Some(6.0),
                    share: Some(2.0 / 3.0),
                }],
            }],
            node_scores: vec![v1::NodeScore {
                queue: "root.dr".into(),
                node: "h4:8041".into(),
                cpu_speed: Some(0.5),
                cpu_free: Some(0.25),
                disk: Some(0.2),
                disk_from_feed: Some(false),
                net: Some(0.9),
                net_from_feed: Some(true),
                map_influence: Some(0.2),
                reduce_influence: Some(1.0),
                map_score: Some(0.3),
                map_class: v1::PerformanceClass::Low as i32,
                reduce_score: Some(0.8),
                reduce_class: v1::PerformanceClass::Medium as i32,
            }],
        }
    );
}

#[test]
fn a_log_level_the_wire_cannot_carry_is_refused() {
    let response = p::OfferResponse {
        logs: vec![
            p::LogRecord {
                level: "info".into(),
                target: "t".into(),
                message: "fine".into(),
            },
            p::LogRecord {
                level: "loud".into(),
                target: "t".into(),
                message: "m".into(),
            },
        ],
        ..Default::default()
    };
    let error = rackwise_wire::encode_offer_response(&response).unwrap_err();
    assert_eq!(error.field, "OfferResponse.logs[1].level");
    assert!(error.reason.contains("'loud'"), "{error}");
}

#[test]
fn log_records_taken_outside_an_offer_travel_alone() {
    let record = |level: &str, message: &str| p::LogRecord {
        level: level.into(),
        target: "rackwise_core::settings".into(),
        message: message.into(),
    };
    let bytes = rackwise_wire::encode_log_records(&[record("warn", "unknown setting")]).unwrap();
    let decoded = v1::LogRecords::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        decoded.records,
        vec![v1::LogRecord {
            level: v1::LogLevel::Warn as i32,
            target: "rackwise_core::settings".into(),
            message: "unknown setting".into(),
        }]
    );
    let error =
        rackwise_wire::encode_log_records(&[record("info", "a"), record("loud", "b")]).unwrap_err();
    assert_eq!(error.field, "LogRecords.records[1].level");
}

/// Ask changes applied by the core give it the same tables, and so the same decisions, as
/// every app's whole table sent every time: the reference engine gets every row of each
/// changed app, the other only the rows that changed.
#[test]
fn an_engine_fed_changes_decides_as_one_fed_whole_tables() {
    let engine_config = decode_engine_config(&config().encode_to_vec()).unwrap();
    let mut whole = Engine::new(&engine_config).unwrap();
    let mut changes = Engine::new(&engine_config).unwrap();

    let mut setup = vec![];
    for r in 1..=2 {
        for n in 1..=3 {
            setup.push(node_added(
                &format!("r{r}n{n}:8041"),
                &format!("r{r}n{n}"),
                &format!("/r{r}"),
            ));
        }
    }
    setup.push(app_added("app_1", "root.sw"));
    setup.push(app_added("app_2", "root.sw"));
    let app_1_maps = row(
        MAP,
        4,
        &[("r1n1", 2), ("r2n1", 2)],
        &[("/r1", 2), ("/r2", 2)],
    );
    let app_1_reduces = row(REDUCE, 2, &[], &[]);
    let app_1_fewer_maps = row(MAP, 1, &[("r2n2", 1)], &[("/r2", 1)]);
    setup.push(asks_changed(
        "app_1",
        vec![app_1_maps, app_1_reduces.clone()],
    ));
    setup.push(asks_changed(
        "app_2",
        vec![row(MAP, 2, &[("r1n2", 2)], &[("/r1", 2)])],
    ));
    let app_2_done = asks_changed("app_2", vec![row(MAP, 0, &[], &[])]);
    // (events sent as changes, the same offer's events as whole tables, node offered)
    let offers = vec![
        (setup.clone(), setup, "r1n1:8041"),
        (
            // app_1's maps shrink and move; its reduces are not named and stay.
            vec![asks_changed("app_1", vec![app_1_fewer_maps.clone()])],
            vec![asks_changed("app_1", vec![app_1_fewer_maps, app_1_reduces])],
            "r2n2:8041",
        ),
        (vec![app_2_done.clone()], vec![app_2_done], "r1n2:8041"),
    ];
    let mut steered_offers = 0;
    for (i, (changed, whole_tables, node)) in offers.into_iter().enumerate() {
        let request = |events| v1::OfferRequest {
            now_ms: Some(10_000 + i as u64),
            events,
            node: Some(v1::NodeOffer {
                node: node.into(),
                unallocated: resources(8192, 8),
                utilization: None,
            }),
        };
        let bytes = request(changed).encode_to_vec();
        let converted = decode_offer_request(&bytes).unwrap();
        let from_changes = changes.offer(converted);
        let reference = whole.offer(convert(request(whole_tables)).unwrap());
        assert_eq!(from_changes, reference, "offer {i}");
        if !from_changes.plan.queues.is_empty() {
            steered_offers += 1;
        }
    }
    assert!(steered_offers > 0, "the scenario must steer at least once");
    let table = |engine: &Engine| -> Vec<Ask> {
        let app = engine.state().apps.get(&AppId("app_1".into())).unwrap();
        app.asks.values().cloned().collect()
    };
    assert_eq!(
        table(&changes),
        vec![
            ask(REDUCE, 2, &[], &[]),
            ask(MAP, 1, &[("r2n2", 1)], &[("/r2", 1)])
        ]
    );
}
