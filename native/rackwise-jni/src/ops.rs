//! The entry points both ABIs share. `jni_exports` and `c_abi` only convert arguments and
//! results; each of them calls exactly these functions, inside `guard::run`.

use crate::guard::BoundaryError;
use crate::logcapture;
use crate::registry::{self, Handle};
use rackwise_core::engine::{decode, encode};
use rackwise_core::protocol::{EngineConfig, OfferRequest, OfferResponse};
use rackwise_core::Engine;

/// Builds an engine from an `EngineConfig` document and registers it.
pub fn create(config: &[u8]) -> Result<Handle, BoundaryError> {
    register(&decode(config)?)
}

/// [`create`] for an `EngineConfig` of the typed wire (`proto/rackwise.proto`).
pub fn create_proto(config: &[u8]) -> Result<Handle, BoundaryError> {
    register(&rackwise_wire::decode_engine_config(config)?)
}

fn register(config: &EngineConfig) -> Result<Handle, BoundaryError> {
    // Before the first engine exists, so that what it logs while building is kept.
    logcapture::install();
    let engine = Engine::new(config)?;
    registry::insert(engine)
}

/// Runs one offer and returns the encoded `OfferResponse`.
pub fn offer(handle: Handle, request: &[u8]) -> Result<Vec<u8>, BoundaryError> {
    let engine = registry::get(handle)?;
    // Decoded before taking the engine's lock, which is then held for the engine call only.
    let request: OfferRequest = decode(request)?;
    let response = engine.lock()?.offer(request);
    Ok(encode(&with_logs(response)))
}

/// [`offer`] for an `OfferRequest` of the typed wire; returns the encoded `OfferResponse`.
pub fn offer_proto(handle: Handle, request: &[u8]) -> Result<Vec<u8>, BoundaryError> {
    let engine = registry::get(handle)?;
    // Decoded before taking the engine's lock, which is then held for the engine call only.
    let request = rackwise_wire::decode_offer_request(request)?;
    let response = engine.lock()?.offer(request);
    Ok(rackwise_wire::encode_offer_response(&with_logs(response))?)
}

/// The response with this offer's log records and any logged by create/reconfigure since the
/// last offer.
fn with_logs(mut response: OfferResponse) -> OfferResponse {
    // Carries this offer's records and any logged by create/reconfigure since the last offer.
    response.logs.extend(logcapture::drain());
    response
}

/// Replaces an engine's configuration; on error the engine keeps its previous one.
pub fn reconfigure(handle: Handle, config: &[u8]) -> Result<(), BoundaryError> {
    let engine = registry::get(handle)?;
    let config: EngineConfig = decode(config)?;
    engine.lock()?.reconfigure(&config)?;
    Ok(())
}

/// [`reconfigure`] for an `EngineConfig` of the typed wire.
pub fn reconfigure_proto(handle: Handle, config: &[u8]) -> Result<(), BoundaryError> {
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

    const CONFIG: &[u8] = br#"{"settings":{},"queues":[],"learned":[],"source":"test"}"#;
    const REQUEST: &[u8] = br#"{"now_ms":1,"events":[],"node":{"node":"h1:1","unallocated":{"memory_mb":1024,"vcores":1}}}"#;

    #[test]
    fn the_whole_lifecycle_works_and_ends_with_the_handle_refused() {
        let handle = create(CONFIG).unwrap();
        let response: serde_json::Value =
            serde_json::from_slice(&offer(handle, REQUEST).unwrap()).expect("offer returns JSON");
        assert!(response.get("plan").is_some(), "{response}");
        reconfigure(handle, CONFIG).unwrap();
        destroy(handle).unwrap();
        assert_eq!(offer(handle, REQUEST).unwrap_err().kind, ErrorKind::Handle);
        assert_eq!(destroy(handle).unwrap_err().kind, ErrorKind::Handle);
    }

    #[test]
    fn malformed_bytes_are_protocol_errors() {
        assert_eq!(create(b"{not json").unwrap_err().kind, ErrorKind::Protocol);
        assert_eq!(create(b"").unwrap_err().kind, ErrorKind::Protocol);
        let handle = create(CONFIG).unwrap();
        assert_eq!(
            offer(handle, br#"{"now_ms":1}"#).unwrap_err().kind,
            ErrorKind::Protocol
        );
        let unknown_field = br#"{"settings":{},"colour":"blue"}"#;
        assert_eq!(
            reconfigure(handle, unknown_field).unwrap_err().kind,
            ErrorKind::Protocol
        );
        destroy(handle).unwrap();
    }

    mod proto {
        use super::*;
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
        fn the_whole_lifecycle_works_over_the_typed_wire() {
            let handle = create_proto(&config()).unwrap();
            let response = v1::OfferResponse::decode(
                offer_proto(handle, &request("h1:1")).unwrap().as_slice(),
            )
            .expect("offer returns an OfferResponse");
            assert!(response.plan.is_some(), "{response:?}");
            // The engine knows no node h1:1, so it names no rack.
            let diagnostics = response.diagnostics.expect("diagnostics are always sent");
            assert_eq!(diagnostics.rack, None);
            assert_eq!(diagnostics.rack_saturated, Some(false));
            reconfigure_proto(handle, &config()).unwrap();
            destroy(handle).unwrap();
            assert_eq!(
                offer_proto(handle, &request("h1:1")).unwrap_err().kind,
                ErrorKind::Handle
            );
        }

        #[test]
        fn missing_fields_and_malformed_bytes_are_protocol_errors_naming_the_field() {
            let handle = create_proto(&config()).unwrap();
            let error = offer_proto(handle, &request("")).unwrap_err();
            assert_eq!(error.kind, ErrorKind::Protocol);
            assert!(
                error.message.contains("OfferRequest.node.node is empty"),
                "{}",
                error.message
            );
            assert_eq!(
                offer_proto(handle, b"\xff\xff").unwrap_err().kind,
                ErrorKind::Protocol
            );
            assert_eq!(
                create_proto(b"\x0a\x05ab").unwrap_err().kind,
                ErrorKind::Protocol
            );
            destroy(handle).unwrap();
        }
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
