//! Messages the boundary tests send: an empty configuration and an offer of a node the engine
//! does not know.

use prost::Message;
use rackwise_wire::v1;

pub fn config() -> Vec<u8> {
    v1::EngineConfig {
        source: "test".into(),
        ..Default::default()
    }
    .encode_to_vec()
}

pub fn request() -> Vec<u8> {
    v1::OfferRequest {
        now_ms: Some(1),
        events: vec![],
        node: Some(v1::NodeOffer {
            node: "h1:1".into(),
            unallocated: Some(v1::Resources {
                memory_mb: Some(1024),
                vcores: Some(1),
            }),
            utilization: None,
        }),
    }
    .encode_to_vec()
}

/// The (level, message) of each log record a response carries.
pub fn logged(response: &[u8]) -> Vec<(String, String)> {
    v1::OfferResponse::decode(response)
        .expect("offer returns an OfferResponse")
        .logs
        .into_iter()
        .map(|record| {
            let level = v1::LogLevel::try_from(record.level)
                .expect("a known level")
                .as_str_name()
                .to_string();
            (level, record.message)
        })
        .collect()
}
