//! What one offer costs on the Rust side of the boundary, JSON (the encoding the boundary used
//! before the typed wire, kept here as the comparison) against protobuf: decoding a typical
//! `OfferRequest` and encoding a typical `OfferResponse`. docs/wire.md has the figures of both
//! sides from when the choice was made (the Java program went with the JSON path).
//!
//! Run: `cargo run --release -p rackwise-wire --example wire_cost`
//!
//! Two scenarios. Typical: 20 events, one of them an app's ask table whose map row names 300
//! hosts on 15 racks (a job reading a large input), answered by 3 steered queues of 10 entries
//! each. Small: the common heartbeat once asks travel as changes, one container allocated and
//! one finished, answered by one queue of 3 entries.

use prost::Message;
use rackwise_core::protocol::*;
use rackwise_wire::v1;
use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counts allocations, so that each way's allocations per message can be reported.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const HOSTS: usize = 300;
const RACKS: usize = 15;

fn host(i: usize) -> String {
    format!("worker-{i:04}.dc1.example.com")
}

fn rack(i: usize) -> String {
    format!("/dc1/rack{:02}", i % RACKS)
}

fn app(i: usize) -> String {
    format!("application_1700000000000_{i:04}")
}

fn container(i: usize) -> String {
    format!("container_e01_1700000000000_0001_01_{i:06}")
}

fn task() -> Resources {
    Resources {
        memory_mb: 2048,
        vcores: 1,
    }
}

/// The request in the core's protocol types (one app's rows of every priority).
fn protocol_request() -> OfferRequest {
    let mut events = vec![Event::AppAdded {
        app: AppId(app(2).into()),
        name: "nightly-etl".into(),
        user: "etl".into(),
        queue: "root.batch".into(),
        app_type: "MAPREDUCE".into(),
        tags: vec!["rackwise.shuffle-ratio=0.4".into()],
        submit_ms: 1_700_000_000_000,
    }];
    events.push(Event::AsksChanged {
        app: AppId(app(1).into()),
        // In priority order, as the core keeps a table.
        rows: vec![
            Ask {
                priority: Priority(10),
                any: 20,
                resources: task(),
                racks: Default::default(),
                hosts: Default::default(),
            },
            Ask {
                priority: Priority(20),
                any: 600,
                resources: task(),
                racks: (0..RACKS).map(|r| (RackName(rack(r).into()), 40)).collect(),
                hosts: (0..HOSTS).map(|h| (host(h).into(), 6)).collect(),
            },
        ],
    });
    for i in 0..8 {
        events.push(Event::ContainerAllocated {
            app: AppId(app(1).into()),
            container: ContainerId(container(100 + i)),
            node: NodeId(format!("{}:8041", host(i)).into()),
            priority: Priority(20),
            locality: Locality::NodeLocal,
            resources: task(),
            time_ms: 1_700_000_100_000 + i as u64,
        });
    }
    for i in 0..8 {
        events.push(Event::ContainerFinished {
            app: AppId(app(1).into()),
            container: ContainerId(container(i)),
            time_ms: 1_700_000_100_000 + i as u64,
            task_completed: true,
        });
    }
    events.push(Event::JobStats {
        app: AppId(app(1).into()),
        maps_total: 1200,
        maps_completed: 600,
        reduces_total: 20,
        map_input_bytes: 80 << 30,
        map_output_bytes: 30 << 30,
    });
    events.push(Event::HostFigures {
        host: host(7),
        time_ms: 1_700_000_100_000,
        cross_rack_mbps: Some(420.5),
        disk_utilization: None,
        network_utilization: None,
        cpu_speed: None,
    });
    assert_eq!(events.len(), 20);
    OfferRequest {
        now_ms: 1_700_000_100_500,
        events,
        node: NodeOffer {
            node: NodeId(format!("{}:8041", host(3)).into()),
            unallocated: Resources {
                memory_mb: 16384,
                vcores: 8,
            },
            utilization: Some(Utilization {
                pmem_mb: 40000,
                cpu: 11.5,
            }),
        },
    }
}

fn wire_resources(r: Resources) -> Option<v1::Resources> {
    Some(v1::Resources {
        memory_mb: Some(r.memory_mb),
        vcores: Some(r.vcores),
    })
}

/// The same request on the typed wire; the ask table travels as the rows that changed, here
/// both of them (the map row with its 300 hosts).
fn wire_request(request: &OfferRequest) -> v1::OfferRequest {
    use v1::event::Kind;
    let events = request
        .events
        .iter()
        .map(|event| {
            let kind = match event {
                Event::AppAdded {
                    app,
                    name,
                    user,
                    queue,
                    app_type,
                    tags,
                    submit_ms,
                } => Kind::AppAdded(v1::AppAdded {
                    app: app.0.to_string(),
                    name: name.clone(),
                    user: user.clone(),
                    app_type: app_type.clone(),
                    queue: queue.clone(),
                    tags: tags.clone(),
                    submit_ms: Some(*submit_ms),
                }),
                Event::AsksChanged { app, rows } => Kind::AsksChanged(v1::AsksChanged {
                    app: app.0.to_string(),
                    rows: rows
                        .iter()
                        .map(|ask| v1::AskRow {
                            priority: Some(ask.priority.0),
                            any: Some(ask.any),
                            resources: wire_resources(ask.resources),
                            racks: ask.racks.keys().map(|r| r.0.to_string()).collect(),
                            rack_counts: ask.racks.values().copied().collect(),
                            hosts: ask.hosts.keys().map(|h| h.to_string()).collect(),
                            host_counts: ask.hosts.values().copied().collect(),
                        })
                        .collect(),
                }),
                Event::ContainerAllocated {
                    app,
                    container,
                    node,
                    priority,
                    resources,
                    time_ms,
                    ..
                } => Kind::ContainerAllocated(v1::ContainerAllocated {
                    app: app.0.to_string(),
                    container: container.0.clone(),
                    node: node.0.to_string(),
                    priority: Some(priority.0),
                    locality: v1::Locality::NodeLocal as i32,
                    resources: wire_resources(*resources),
                    time_ms: Some(*time_ms),
                }),
                Event::ContainerFinished {
                    app,
                    container,
                    time_ms,
                    task_completed,
                } => Kind::ContainerFinished(v1::ContainerFinished {
                    app: app.0.to_string(),
                    container: container.0.clone(),
                    time_ms: Some(*time_ms),
                    task_completed: Some(*task_completed),
                }),
                Event::JobStats {
                    app,
                    maps_total,
                    maps_completed,
                    reduces_total,
                    map_input_bytes,
                    map_output_bytes,
                } => Kind::JobStats(v1::JobStats {
                    app: app.0.to_string(),
                    maps_total: Some(*maps_total),
                    maps_completed: Some(*maps_completed),
                    reduces_total: Some(*reduces_total),
                    map_input_bytes: Some(*map_input_bytes),
                    map_output_bytes: Some(*map_output_bytes),
                }),
                Event::HostFigures {
                    host,
                    time_ms,
                    cross_rack_mbps,
                    disk_utilization,
                    network_utilization,
                    cpu_speed,
                } => Kind::HostFigures(v1::HostFigures {
                    host: host.clone(),
                    time_ms: Some(*time_ms),
                    cross_rack_mbps: *cross_rack_mbps,
                    disk_utilization: *disk_utilization,
                    network_utilization: *network_utilization,
                    cpu_speed: *cpu_speed,
                }),
                other => unreachable!("the measured request holds no {other:?}"),
            };
            v1::Event { kind: Some(kind) }
        })
        .collect();
    let node = &request.node;
    v1::OfferRequest {
        now_ms: Some(request.now_ms),
        events,
        node: Some(v1::NodeOffer {
            node: node.node.0.to_string(),
            unallocated: wire_resources(node.unallocated),
            utilization: node.utilization.map(|u| v1::Utilization {
                pmem_mb: Some(u.pmem_mb),
                cpu: Some(u.cpu),
            }),
        }),
    }
}

/// The common heartbeat once asks travel as changes: one container allocated and one
/// finished since the previous offer.
fn small_request() -> OfferRequest {
    let typical = protocol_request();
    let first_of = |wanted: fn(&Event) -> bool| {
        typical
            .events
            .iter()
            .find(|event| wanted(event))
            .cloned()
            .expect("the typical request has one")
    };
    OfferRequest {
        events: vec![
            first_of(|e| matches!(e, Event::ContainerAllocated { .. })),
            first_of(|e| matches!(e, Event::ContainerFinished { .. })),
        ],
        ..typical.clone()
    }
}

/// A response steering `queues` queues of `entries` apps each.
fn response(queues: usize, entries: usize) -> OfferResponse {
    let reasons = [
        "nass:node-local-map",
        "sarp:reduce-in-quota",
        "nass:saturated:defer",
    ];
    OfferResponse {
        plan: Plan {
            queues: (0..queues)
                .map(|q| QueuePlan {
                    queue: format!("root.queue{q}").into(),
                    steered: (0..entries)
                        .map(|a| AppId(app(q * entries + a).into()))
                        .collect(),
                    entries: (0..entries)
                        .map(|a| PlanEntry {
                            app: AppId(app(q * entries + a).into()),
                            priority: Priority(if a % 3 == 0 { 10 } else { 20 }),
                            locality: Locality::RackLocal,
                            reason: Cow::Borrowed(reasons[a % 3]),
                        })
                        .collect(),
                    scheduler_orders_apps: q % 2 == 0,
                })
                .collect(),
        },
        learned: vec![],
        queue_weights: vec![],
        intervals: vec![],
        node_scores: vec![],
        diagnostics: Diagnostics {
            rack: Some(RackName(rack(3).into())),
            rack_utilization: Some(0.62),
            rack_saturated: false,
            starved: vec![],
        },
        logs: vec![],
    }
}

fn way<'a>(name: String, bytes: usize, work: Box<dyn FnMut() + 'a>) -> Way<'a> {
    Way {
        name,
        bytes,
        work,
        micros: Vec::new(),
        allocations: 0,
        allocated_bytes: 0,
    }
}

/// One way of doing one message's work, with what it measured.
struct Way<'a> {
    name: String,
    bytes: usize,
    work: Box<dyn FnMut() + 'a>,
    micros: Vec<f64>,
    allocations: u64,
    allocated_bytes: u64,
}

const BATCH: u32 = 1_000;
const ROUNDS: usize = 31;

/// Runs every way in batches, the ways interleaved round by round so that the machine's load
/// (other builds share its two cores) weighs on all of them alike.
fn measure(ways: &mut [Way<'_>]) {
    for way in ways.iter_mut() {
        for _ in 0..BATCH {
            (way.work)();
        }
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        let bytes = ALLOCATED_BYTES.load(Ordering::Relaxed);
        (way.work)();
        way.allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
        way.allocated_bytes = ALLOCATED_BYTES.load(Ordering::Relaxed) - bytes;
    }
    for _ in 0..ROUNDS {
        for way in ways.iter_mut() {
            let start = Instant::now();
            for _ in 0..BATCH {
                (way.work)();
            }
            way.micros
                .push(start.elapsed().as_secs_f64() * 1e6 / f64::from(BATCH));
        }
    }
}

fn report(ways: &mut [Way<'_>]) {
    for way in ways {
        way.micros.sort_by(f64::total_cmp);
        println!(
            "{:<52} {:>9.2} {:>9.2} {:>8} {:>8} {:>11}",
            way.name,
            way.micros[0],
            way.micros[way.micros.len() / 2],
            way.bytes,
            way.allocations,
            way.allocated_bytes
        );
    }
}

/// One scenario's messages in both encodings.
struct Messages {
    json_request: Vec<u8>,
    proto_request: Vec<u8>,
    response: OfferResponse,
    json_response: usize,
    proto_response: usize,
}

impl Messages {
    fn new(request: &OfferRequest, response: OfferResponse) -> Messages {
        let proto_request = wire_request(request).encode_to_vec();
        // Both ways must carry the same request, or the comparison says nothing.
        let decoded = rackwise_wire::decode_offer_request(&proto_request).expect("valid");
        assert_eq!(&decoded, request);
        Messages {
            json_request: serde_json::to_vec(request).expect("the request serializes"),
            proto_request,
            json_response: serde_json::to_vec(&response).expect("serializes").len(),
            proto_response: rackwise_wire::encode_offer_response(&response)
                .expect("encodes")
                .len(),
            response,
        }
    }

    fn ways(&self, scenario: &'static str) -> [Way<'_>; 4] {
        let name = |what: &str| format!("{scenario} {what}");
        [
            way(
                name("(a) JSON: decode request"),
                self.json_request.len(),
                Box::new(|| {
                    let decoded: OfferRequest =
                        serde_json::from_slice(black_box(&self.json_request)).unwrap();
                    black_box(decoded);
                }),
            ),
            way(
                name("(b) protobuf: decode + check request"),
                self.proto_request.len(),
                Box::new(|| {
                    let decoded =
                        rackwise_wire::decode_offer_request(black_box(&self.proto_request))
                            .unwrap();
                    black_box(decoded);
                }),
            ),
            way(
                name("(a) JSON: encode response"),
                self.json_response,
                Box::new(|| {
                    black_box(serde_json::to_vec(black_box(&self.response)).unwrap());
                }),
            ),
            way(
                name("(b) protobuf: convert + encode response"),
                self.proto_response,
                Box::new(|| {
                    black_box(
                        rackwise_wire::encode_offer_response(black_box(&self.response)).unwrap(),
                    );
                }),
            ),
        ]
    }
}

fn main() {
    let typical = Messages::new(&protocol_request(), response(3, 10));
    let small = Messages::new(&small_request(), response(1, 3));
    println!("Rust side, per offer: {ROUNDS} interleaved rounds of {BATCH} calls; release build");
    println!(
        "{:<52} {:>9} {:>9} {:>8} {:>8} {:>11}",
        "", "min µs", "median µs", "bytes", "allocs", "alloc bytes"
    );
    let mut ways: Vec<Way<'_>> = typical
        .ways("typical")
        .into_iter()
        .chain(small.ways("small"))
        .collect();
    measure(&mut ways);
    report(&mut ways);
}
