//! The engine: state plus configuration, fed one offer at a time.

use crate::error::CoreError;
use crate::protocol::{EngineConfig, OfferRequest, OfferResponse};
use serde::de::DeserializeOwned;
use serde::Serialize;

pub struct Engine {}

impl Engine {
    /// Builds an engine from a configuration, refusing it with every problem listed.
    pub fn new(config: &EngineConfig) -> Result<Engine, CoreError> {
        let _ = config;
        Ok(Engine {})
    }

    /// Replaces the configuration; on error the engine keeps the previous one untouched.
    pub fn reconfigure(&mut self, config: &EngineConfig) -> Result<(), CoreError> {
        let _ = config;
        Ok(())
    }

    /// Applies the offer's events, then decides what may be placed on the offered node.
    pub fn offer(&mut self, request: &OfferRequest) -> OfferResponse {
        let _ = request;
        OfferResponse::default()
    }
}

/// Decodes one wire message (UTF-8 JSON).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CoreError> {
    serde_json::from_slice(bytes).map_err(|e| CoreError::Protocol(e.to_string()))
}

/// Encodes one wire message. Our protocol types always serialize.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    serde_json::to_vec(message).unwrap_or_default()
}
