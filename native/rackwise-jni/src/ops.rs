//! The entry points both ABIs share. `jni_exports` and `c_abi` only convert arguments and
//! results; each of them calls exactly these functions, inside `guard::run`.

use crate::guard::BoundaryError;
use crate::logcapture;
use crate::registry::{self, Handle};
use rackwise_core::Engine;

// Every payload is a protobuf message of `proto/rackwise.proto` (docs/wire.md); rackwise-wire
// checks its required fields while converting it to the core's protocol types.

/// Builds an engine from an `EngineConfig` message and registers it.
pub fn create(config: &[u8]) -> Result<Handle, BoundaryError> {
    let config = rackwise_wire::decode_engine_config(config)?;
    // Before the first engine exists, so that what it logs while building is kept.
    logcapture::install();
    let engine = Engine::new(&config)?;
    registry::insert(engine)
}

/// Runs one offer (an `OfferRequest` message) and returns the encoded `OfferResponse`.
pub fn offer(handle: Handle, request: &[u8]) -> Result<Vec<u8>, BoundaryError> {
    let engine = registry::get(handle)?;
    // Decoded before taking the engine's lock, which is then held for the engine call only.
    let request = rackwise_wire::decode_offer_request(request)?;
    let mut response = engine.lock()?.offer(request);
    // Carries this offer's records and any logged by create/reconfigure since the last offer.
    response.logs.extend(logcapture::drain());
    Ok(rackwise_wire::encode_offer_response(&response)?)
}

/// The records logged since the last drain (a `LogRecords` message): the shim takes them right
/// after `create` and `reconfigure`, so that what building a configuration logged (an unknown
/// key, say) reaches the RM's log at start or reload, not with the next offer.
pub fn drain_logs() -> Result<Vec<u8>, BoundaryError> {
    Ok(rackwise_wire::encode_log_records(&logcapture::drain())?)
}

/// Replaces an engine's configuration (an `EngineConfig` message); on error the engine keeps
/// its previous one.
pub fn reconfigure(handle: Handle, config: &[u8]) -> Result<(), BoundaryError> {
    let engine = registry::get(handle)?;
    let config = rackwise_wire::decode_engine_config(config)?;
    engine.lock()?.reconfigure(&config)?;
    Ok(())
}

/// Drops an engine; its handle is refused from now on.
pub fn destroy(handle: Handle) -> Result<(), BoundaryError> {
    registry::remove(handle)
}

/// Sets the most verbose native log level captured (see [`logcapture::set_max_level`]).
pub fn set_max_log_level(level: i32) -> Result<(), BoundaryError> {
    logcapture::set_max_level(level);
    Ok(())
}

/// The MapReduce priorities the core defines, as a `MapReduceFacts` message: the shim takes
/// them from here rather than defining its own.
pub fn mapreduce_facts() -> Vec<u8> {
    rackwise_wire::encode_mapreduce_facts()
}

/// The library's version, which the Java loader compares with the version it was built for.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Panics on purpose. The loader calls it once (through the guard) before trusting the library
/// on the heartbeat path: if the panic does not come back as an error, the library was built
/// or linked in a way that would take the JVM down with it.
pub fn deliberate_panic() -> Result<(), BoundaryError> {
    panic!("deliberate panic to verify the guard (verifyPanicGuard)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{self, ErrorKind};

    use prost::Message;
    use rackwise_wire::v1;

    fn config() -> Vec<u8> {
        v1::EngineConfig {
            source: "test".into(),
            ..Default::default()
        }
        .encode_to_vec()
    }

    fn request(node: &str) -> Vec<u8> {
        v1::OfferRequest {
            now_ms: Some(1),
            events: vec![],
            node: Some(v1::NodeOffer {
                node: node.into(),
                unallocated: Some(v1::Resources {
                    memory_mb: Some(1024),
                    vcores: Some(1),
                }),
                utilization: None,
            }),
        }
        .encode_to_vec()
    }

    #[test]
    fn the_whole_lifecycle_works_and_ends_with_the_handle_refused() {
        let handle = create(&config()).unwrap();
        let response =
            v1::OfferResponse::decode(offer(handle, &request("h1:1")).unwrap().as_slice())
                .expect("offer returns an OfferResponse");
        assert!(response.plan.is_some(), "{response:?}");
        // The engine knows no node h1:1, so it names no rack.
        let diagnostics = response.diagnostics.expect("diagnostics are always sent");
        assert_eq!(diagnostics.rack, None);
        assert_eq!(diagnostics.rack_saturated, Some(false));
        reconfigure(handle, &config()).unwrap();
        destroy(handle).unwrap();
        assert_eq!(
            offer(handle, &request("h1:1")).unwrap_err().kind,
            ErrorKind::Handle
        );
        assert_eq!(destroy(handle).unwrap_err().kind, ErrorKind::Handle);
    }

    #[test]
    fn missing_fields_and_malformed_bytes_are_protocol_errors_naming_the_field() {
        let handle = create(&config()).unwrap();
        let error = offer(handle, &request("")).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Protocol);
        assert!(
            error.message.contains("OfferRequest.node.node is empty"),
            "{}",
            error.message
        );
        assert_eq!(
            offer(handle, b"\xff\xff").unwrap_err().kind,
            ErrorKind::Protocol
        );
        // A length-delimited field (settings) that claims 5 bytes and has 2.
        assert_eq!(create(b"\x0a\x05ab").unwrap_err().kind, ErrorKind::Protocol);
        assert_eq!(
            reconfigure(handle, b"\x0a\x05ab").unwrap_err().kind,
            ErrorKind::Protocol
        );
        destroy(handle).unwrap();
    }

    #[test]
    fn a_made_up_handle_is_refused_before_the_bytes_are_read() {
        let error = offer(987_654_321, b"garbage").unwrap_err();
        assert_eq!(error.kind, ErrorKind::Handle);
    }

    #[test]
    fn the_deliberate_panic_is_caught_by_the_guard() {
        let error = guard::run(deliberate_panic).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Panic);
        assert!(error.message.contains("verifyPanicGuard"));
        assert!(error.message.contains("ops.rs"), "{}", error.message);
    }
}
