//! The typed wire between the ResourceManager shim and the core: protobuf messages generated
//! from `proto/rackwise.proto` (the schema the Java side generates from too), and the checked
//! conversions between them and `rackwise_core::protocol`, whose types the engine runs on.
//!
//! The core itself knows nothing of the wire. What crosses it:
//! - in: an `EngineConfig` on create and reload ([`decode_engine_config`]) and an
//!   `OfferRequest` per node offer ([`decode_offer_request`]);
//! - out: the `OfferResponse` ([`encode_offer_response`]), and once, the MapReduce priorities
//!   the core defines ([`encode_mapreduce_facts`]).
//!
//! proto3 has no required fields, so decoding refuses a message that lacks a field the
//! protocol needs, with a [`WireError`] naming the message, the field and why (see
//! `docs/wire.md`, "Required fields").

mod decode;
mod encode;
mod error;

/// The generated wire types, package `rackwise.wire.v1`.
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/rackwise.wire.v1.rs"));
}

pub use decode::{decode_engine_config, decode_offer_request, engine_config, offer_request};
pub use encode::{
    encode_log_records, encode_mapreduce_facts, encode_offer_response, offer_response,
};
pub use error::WireError;
