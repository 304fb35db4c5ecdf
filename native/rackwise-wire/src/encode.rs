//! Protocol → wire: the core's answer to an offer.

use crate::error::WireError;
use crate::v1;
use prost::Message;
use rackwise_core::protocol::{Locality, LogRecord, OfferResponse, PerformanceClass};

/// The core's MapReduce priorities, encoded for the shim (`MapReduceFacts`).
pub fn encode_mapreduce_facts() -> Vec<u8> {
    use rackwise_core::mapreduce::{
        AM_PRIORITY, MAP_PRIORITY, OPPORTUNISTIC_MAP_PRIORITY, REDUCE_PRIORITY, RERUN_MAP_PRIORITY,
    };
    v1::MapReduceFacts {
        am_priority: Some(AM_PRIORITY.0),
        rerun_map_priority: Some(RERUN_MAP_PRIORITY.0),
        reduce_priority: Some(REDUCE_PRIORITY.0),
        opportunistic_map_priority: Some(OPPORTUNISTIC_MAP_PRIORITY.0),
        map_priority: Some(MAP_PRIORITY.0),
    }
    .encode_to_vec()
}

/// Converts and encodes an `OfferResponse`.
pub fn encode_offer_response(response: &OfferResponse) -> Result<Vec<u8>, WireError> {
    Ok(offer_response(response)?.encode_to_vec())
}

/// Converts the core's response to the wire message. Fails only on a log record whose level
/// is none of the five the wire knows.
pub fn offer_response(response: &OfferResponse) -> Result<v1::OfferResponse, WireError> {
    let plan = v1::Plan {
        queues: response
            .plan
            .queues
            .iter()
            .map(|queue| v1::QueuePlan {
                queue: queue.queue.to_string(),
                steered: queue.steered.iter().map(|app| app.0.to_string()).collect(),
                entries: queue
                    .entries
                    .iter()
                    .map(|entry| v1::PlanEntry {
                        app: entry.app.0.to_string(),
                        priority: Some(entry.priority.0),
                        locality: locality(entry.locality) as i32,
                        reason: entry.reason.to_string(),
                    })
                    .collect(),
                scheduler_orders_apps: queue.scheduler_orders_apps,
            })
            .collect(),
    };
    let diagnostics = &response.diagnostics;
    Ok(v1::OfferResponse {
        plan: Some(plan),
        learned: response
            .learned
            .iter()
            .map(|ratio| v1::LearnedRatio {
                job_name: ratio.job_name.clone(),
                ratio: Some(ratio.ratio),
                runs: Some(ratio.runs),
                map_ms: ratio.map_ms,
                reduce_ms: ratio.reduce_ms,
                profile_runs: Some(ratio.profile_runs),
            })
            .collect(),
        diagnostics: Some(v1::Diagnostics {
            rack: diagnostics.rack.as_ref().map(|rack| rack.0.to_string()),
            rack_utilization: diagnostics.rack_utilization,
            rack_saturated: Some(diagnostics.rack_saturated),
            starved: diagnostics
                .starved
                .iter()
                .map(|app| app.0.to_string())
                .collect(),
        }),
        logs: response
            .logs
            .iter()
            .enumerate()
            .map(|(i, record)| log_record(record, &format!("OfferResponse.logs[{i}]")))
            .collect::<Result<_, _>>()?,
        queue_weights: response
            .queue_weights
            .iter()
            .map(|weight| v1::QueueWeight {
                queue: weight.queue.clone(),
                weight: Some(weight.weight),
            })
            .collect(),
        intervals: response
            .intervals
            .iter()
            .map(|interval| v1::MarketInterval {
                market: interval.market.clone(),
                sequence: Some(interval.sequence),
                end_ms: Some(interval.end_ms),
                price: Some(interval.price),
                queues: interval
                    .queues
                    .iter()
                    .map(|line| v1::QueueAccount {
                        queue: line.queue.clone(),
                        budget: Some(line.budget),
                        spending: Some(line.spending),
                        used: Some(line.used),
                        charged_units: Some(line.charged_units),
                        charge: Some(line.charge),
                        share: Some(line.share),
                    })
                    .collect(),
            })
            .collect(),
        node_scores: response
            .node_scores
            .iter()
            .map(|score| v1::NodeScore {
                queue: score.queue.clone(),
                node: score.node.0.to_string(),
                cpu_speed: Some(score.cpu_speed),
                cpu_free: Some(score.cpu_free),
                disk: Some(score.disk),
                disk_from_feed: Some(score.disk_from_feed),
                net: Some(score.net),
                net_from_feed: Some(score.net_from_feed),
                map_influence: Some(score.map_influence),
                reduce_influence: Some(score.reduce_influence),
                map_score: Some(score.map_score),
                map_class: performance_class(score.map_class) as i32,
                reduce_score: Some(score.reduce_score),
                reduce_class: performance_class(score.reduce_class) as i32,
            })
            .collect(),
    })
}

fn locality(locality: Locality) -> v1::Locality {
    match locality {
        Locality::NodeLocal => v1::Locality::NodeLocal,
        Locality::RackLocal => v1::Locality::RackLocal,
        Locality::OffSwitch => v1::Locality::OffSwitch,
    }
}

fn performance_class(class: PerformanceClass) -> v1::PerformanceClass {
    match class {
        PerformanceClass::Low => v1::PerformanceClass::Low,
        PerformanceClass::Medium => v1::PerformanceClass::Medium,
        PerformanceClass::High => v1::PerformanceClass::High,
    }
}

/// Converts and encodes log records taken outside an offer (`LogRecords`).
pub fn encode_log_records(records: &[LogRecord]) -> Result<Vec<u8>, WireError> {
    let records = records
        .iter()
        .enumerate()
        .map(|(i, record)| log_record(record, &format!("LogRecords.records[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(v1::LogRecords { records }.encode_to_vec())
}

/// `at` names the record in its message, for the error on a level the wire cannot carry.
fn log_record(record: &LogRecord, at: &str) -> Result<v1::LogRecord, WireError> {
    let level = match record.level.as_str() {
        "error" => v1::LogLevel::Error,
        "warn" => v1::LogLevel::Warn,
        "info" => v1::LogLevel::Info,
        "debug" => v1::LogLevel::Debug,
        "trace" => v1::LogLevel::Trace,
        other => {
            return Err(WireError::new(
                format!("{at}.level"),
                format!("cannot carry '{other}' (one of error, warn, info, debug, trace)"),
            ))
        }
    };
    Ok(v1::LogRecord {
        level: level as i32,
        target: record.target.clone(),
        message: record.message.clone(),
    })
}
