//! Wire → protocol: what the core receives, with every required field checked.

use crate::error::WireError;
use crate::v1;
use prost::Message;
use rackwise_core::protocol::{
    AppId, Ask, ContainerId, EngineConfig, Event, LearnedRatio, Locality, NodeId, NodeOffer,
    OfferRequest, Priority, QueueSettings, RackName, Resources, Utilization,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Decodes and checks an `EngineConfig` message.
pub fn decode_engine_config(bytes: &[u8]) -> Result<EngineConfig, WireError> {
    engine_config(decode_bytes(bytes, "EngineConfig")?)
}

/// Decodes and checks an `OfferRequest` message.
pub fn decode_offer_request(bytes: &[u8]) -> Result<OfferRequest, WireError> {
    offer_request(decode_bytes(bytes, "OfferRequest")?)
}

fn decode_bytes<M: Message + Default>(bytes: &[u8], name: &str) -> Result<M, WireError> {
    M::decode(bytes).map_err(|e| WireError::new(name, format!("cannot be decoded: {e}")))
}

/// Checks an `EngineConfig` and converts it to the protocol's.
pub fn engine_config(message: v1::EngineConfig) -> Result<EngineConfig, WireError> {
    let at = At::root("EngineConfig");
    let queues = message
        .queues
        .into_iter()
        .enumerate()
        .map(|(i, queue)| {
            let at = at.item("queues", i);
            Ok(QueueSettings {
                queue: non_empty(queue.queue, at, "queue")?,
                rackwise: queue.rackwise.map(|element| element.children),
            })
        })
        .collect::<Result<_, WireError>>()?;
    let learned = message
        .learned
        .into_iter()
        .enumerate()
        .map(|(i, ratio)| learned_ratio(ratio, at.item("learned", i)))
        .collect::<Result<_, WireError>>()?;
    Ok(EngineConfig {
        settings: message.settings,
        queues,
        learned,
        learned_max_entries: (message.learned_max_entries > 0)
            .then_some(message.learned_max_entries as usize),
        source: message.source,
        minimum_allocation: message
            .minimum_allocation
            .map(|m| resources(m, at.field("minimum_allocation")))
            .transpose()?
            .unwrap_or_default(),
    })
}

fn learned_ratio(message: v1::LearnedRatio, at: At<'_>) -> Result<LearnedRatio, WireError> {
    Ok(LearnedRatio {
        job_name: non_empty(message.job_name, at, "job_name")?,
        ratio: required(message.ratio, at, "ratio")?,
        runs: required(message.runs, at, "runs")?,
        map_ms: message.map_ms,
        reduce_ms: message.reduce_ms,
        profile_runs: message.profile_runs.unwrap_or_default(),
    })
}

/// Checks an `OfferRequest` and converts it to the protocol's.
pub fn offer_request(message: v1::OfferRequest) -> Result<OfferRequest, WireError> {
    let at = At::root("OfferRequest");
    let now_ms = required(message.now_ms, at, "now_ms")?;
    let node = node_offer(required(message.node, at, "node")?, at.field("node"))?;
    let events = message
        .events
        .into_iter()
        .enumerate()
        .map(|(i, wire_event)| {
            let at = at.item("events", i);
            match wire_event.kind {
                Some(kind) => event(kind, at),
                None => Err(
                    at.error("has no kind set (required; an event kind newer than this library?)")
                ),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(OfferRequest {
        now_ms,
        events,
        node,
    })
}

fn node_offer(message: v1::NodeOffer, at: At<'_>) -> Result<NodeOffer, WireError> {
    Ok(NodeOffer {
        node: NodeId(non_empty(message.node, at, "node")?.into()),
        unallocated: resources(
            required(message.unallocated, at, "unallocated")?,
            at.field("unallocated"),
        )?,
        utilization: message
            .utilization
            .map(|u| {
                let at = at.field("utilization");
                Ok::<_, WireError>(Utilization {
                    pmem_mb: required(u.pmem_mb, at, "pmem_mb")?,
                    cpu: required(u.cpu, at, "cpu")?,
                })
            })
            .transpose()?,
    })
}

fn resources(message: v1::Resources, at: At<'_>) -> Result<Resources, WireError> {
    Ok(Resources {
        memory_mb: required(message.memory_mb, at, "memory_mb")?,
        vcores: required(message.vcores, at, "vcores")?,
    })
}

/// Converts one event.
fn event(kind: v1::event::Kind, at: At<'_>) -> Result<Event, WireError> {
    use v1::event::Kind;
    Ok(match kind {
        Kind::NodeAdded(m) => {
            let at = at.field("node_added");
            Event::NodeAdded {
                node: NodeId(non_empty(m.node, at, "node")?.into()),
                host: non_empty(m.host, at, "host")?,
                rack: RackName(non_empty(m.rack, at, "rack")?.into()),
                capacity: resources(required(m.capacity, at, "capacity")?, at.field("capacity"))?,
            }
        }
        Kind::NodeRemoved(m) => Event::NodeRemoved {
            node: NodeId(non_empty(m.node, at.field("node_removed"), "node")?.into()),
        },
        Kind::AppAdded(m) => {
            let at = at.field("app_added");
            Event::AppAdded {
                app: AppId(non_empty(m.app, at, "app")?.into()),
                name: m.name,
                user: m.user,
                queue: non_empty(m.queue, at, "queue")?,
                app_type: m.app_type,
                tags: m.tags,
                submit_ms: required(m.submit_ms, at, "submit_ms")?,
            }
        }
        Kind::AppRemoved(m) => Event::AppRemoved {
            app: AppId(non_empty(m.app, at.field("app_removed"), "app")?.into()),
        },
        Kind::AsksChanged(m) => {
            let at = at.field("asks_changed");
            Event::AsksChanged {
                app: AppId(non_empty(m.app, at, "app")?.into()),
                rows: ask_rows(m.rows, at)?,
            }
        }
        Kind::ContainerAllocated(m) => {
            let at = at.field("container_allocated");
            Event::ContainerAllocated {
                app: AppId(non_empty(m.app, at, "app")?.into()),
                container: ContainerId(non_empty(m.container, at, "container")?),
                node: NodeId(non_empty(m.node, at, "node")?.into()),
                priority: Priority(required(m.priority, at, "priority")?),
                locality: locality(m.locality, at, "locality")?,
                resources: resources(
                    required(m.resources, at, "resources")?,
                    at.field("resources"),
                )?,
                time_ms: required(m.time_ms, at, "time_ms")?,
            }
        }
        Kind::ContainerFinished(m) => {
            let at = at.field("container_finished");
            Event::ContainerFinished {
                app: AppId(non_empty(m.app, at, "app")?.into()),
                container: ContainerId(non_empty(m.container, at, "container")?),
                time_ms: required(m.time_ms, at, "time_ms")?,
                task_completed: required(m.task_completed, at, "task_completed")?,
            }
        }
        Kind::JobStats(m) => {
            let at = at.field("job_stats");
            Event::JobStats {
                app: AppId(non_empty(m.app, at, "app")?.into()),
                maps_total: required(m.maps_total, at, "maps_total")?,
                maps_completed: required(m.maps_completed, at, "maps_completed")?,
                reduces_total: required(m.reduces_total, at, "reduces_total")?,
                map_input_bytes: required(m.map_input_bytes, at, "map_input_bytes")?,
                map_output_bytes: required(m.map_output_bytes, at, "map_output_bytes")?,
            }
        }
        Kind::RackLoad(m) => {
            let at = at.field("rack_load");
            Event::RackLoad {
                rack: RackName(non_empty(m.rack, at, "rack")?.into()),
                utilization: required(m.utilization, at, "utilization")?,
                time_ms: required(m.time_ms, at, "time_ms")?,
            }
        }
        Kind::HostFigures(m) => {
            let at = at.field("host_figures");
            let host = non_empty(m.host, at, "host")?;
            let time_ms = required(m.time_ms, at, "time_ms")?;
            if m.cross_rack_mbps.is_none()
                && m.disk_utilization.is_none()
                && m.network_utilization.is_none()
                && m.cpu_speed.is_none()
            {
                return Err(at.error("carries no figure (at least one is required)"));
            }
            Event::HostFigures {
                host,
                time_ms,
                cross_rack_mbps: m.cross_rack_mbps,
                disk_utilization: m.disk_utilization,
                network_utilization: m.network_utilization,
                cpu_speed: m.cpu_speed,
            }
        }
        Kind::Account(m) => {
            let at = at.field("account");
            Event::Account {
                queue: non_empty(m.queue, at, "queue")?,
                budget: credits(required(m.budget, at, "budget")?, at, "budget")?,
                spending: credits(required(m.spending, at, "spending")?, at, "spending")?,
            }
        }
    })
}

/// A budget or spending rate: finite and not negative.
fn credits(value: f64, at: At<'_>, field: &'static str) -> Result<f64, WireError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(at
            .field(field)
            .error(format!("is {value} (required: finite and >= 0)")))
    }
}

/// One `AsksChanged`'s rows, each priority at most once. A row with `any == 0` removes its
/// priority's row and needs nothing else.
fn ask_rows(rows: Vec<v1::AskRow>, at: At<'_>) -> Result<Vec<Ask>, WireError> {
    let mut converted: Vec<Ask> = Vec::with_capacity(rows.len());
    for (i, row) in rows.into_iter().enumerate() {
        let at = at.item("rows", i);
        let priority = Priority(required(row.priority, at, "priority")?);
        if converted.iter().any(|earlier| earlier.priority == priority) {
            return Err(at.field("priority").error(format!(
                "{} appears in an earlier row of the same change (each priority at most once)",
                priority.0
            )));
        }
        let any = required(row.any, at, "any")?;
        if any == 0 {
            converted.push(Ask {
                priority,
                any,
                resources: Resources::default(),
                racks: BTreeMap::new(),
                hosts: BTreeMap::new(),
            });
            continue;
        }
        let resources = resources(
            required(row.resources, at, "resources")?,
            at.field("resources"),
        )?;
        let racks = located_counts(row.racks, row.rack_counts, at, ("racks", "rack_counts"))?
            .into_iter()
            .map(|(rack, count)| (RackName(rack), count))
            .collect();
        let hosts = located_counts(row.hosts, row.host_counts, at, ("hosts", "host_counts"))?;
        converted.push(Ask {
            priority,
            any,
            resources,
            racks,
            hosts,
        });
    }
    Ok(converted)
}

/// One row's locations and their counts (parallel lists) as a map, every name checked
/// non-empty and named once.
fn located_counts(
    names: Vec<String>,
    counts: Vec<u32>,
    at: At<'_>,
    (names_field, counts_field): (&'static str, &'static str),
) -> Result<BTreeMap<Arc<str>, u32>, WireError> {
    if names.len() != counts.len() {
        return Err(at.field(counts_field).error(format!(
            "has {} counts for {} {names_field} (required: one count per name)",
            counts.len(),
            names.len()
        )));
    }
    if names.iter().any(String::is_empty) {
        return Err(at
            .field(names_field)
            .error("has an empty name (a location name is required)"));
    }
    let mut located: Vec<(Arc<str>, u32)> = names
        .into_iter()
        .map(Arc::<str>::from)
        .zip(counts)
        .collect();
    located.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if let Some(twice) = located.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(at.field(names_field).error(format!(
            "names '{}' twice (each location at most once)",
            twice[0].0
        )));
    }
    // Sorted, so the map is built in one pass.
    Ok(located.into_iter().collect())
}

fn locality(value: i32, at: At<'_>, field: &'static str) -> Result<Locality, WireError> {
    match v1::Locality::try_from(value) {
        Ok(v1::Locality::NodeLocal) => Ok(Locality::NodeLocal),
        Ok(v1::Locality::RackLocal) => Ok(Locality::RackLocal),
        Ok(v1::Locality::OffSwitch) => Ok(Locality::OffSwitch),
        Ok(v1::Locality::Unspecified) => Err(at
            .field(field)
            .error("is missing (LOCALITY_UNSPECIFIED; required)")),
        Err(_) => Err(at
            .field(field)
            .error(format!("has unknown value {value} (not a Locality)"))),
    }
}

fn required<T>(value: Option<T>, at: At<'_>, field: &'static str) -> Result<T, WireError> {
    value.ok_or_else(|| at.field(field).error("is missing (required)"))
}

fn non_empty(value: String, at: At<'_>, field: &'static str) -> Result<String, WireError> {
    if value.is_empty() {
        Err(at
            .field(field)
            .error("is empty (required: a non-empty name or id)"))
    } else {
        Ok(value)
    }
}

/// Where a check is, from the message root; rendered only when a check fails, so the checks
/// cost no allocation on the offer path.
#[derive(Clone, Copy)]
struct At<'a> {
    parent: Option<&'a At<'a>>,
    name: &'static str,
    index: Option<usize>,
}

impl<'a> At<'a> {
    fn root(name: &'static str) -> At<'static> {
        At {
            parent: None,
            name,
            index: None,
        }
    }

    fn field(&'a self, name: &'static str) -> At<'a> {
        At {
            parent: Some(self),
            name,
            index: None,
        }
    }

    fn item(&'a self, name: &'static str, index: usize) -> At<'a> {
        At {
            parent: Some(self),
            name,
            index: Some(index),
        }
    }

    fn error(&self, reason: impl Into<String>) -> WireError {
        WireError::new(self.render(), reason)
    }

    fn render(&self) -> String {
        let mut path = self.parent.map(|p| p.render() + ".").unwrap_or_default();
        path.push_str(self.name);
        if let Some(index) = self.index {
            path.push_str(&format!("[{index}]"));
        }
        path
    }
}
