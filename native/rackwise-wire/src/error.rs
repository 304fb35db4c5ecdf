use std::fmt;

/// A wire message the protocol cannot accept: undecodable bytes, or a field the protocol needs
/// that is missing or unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// Where in the message, from its root, e.g. `OfferRequest.events[3].asks_changed.app`.
    pub field: String,
    /// Why it is refused, e.g. `is missing (required)`.
    pub reason: String,
}

impl WireError {
    pub(crate) fn new(field: impl Into<String>, reason: impl Into<String>) -> WireError {
        WireError {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rackwise.wire.v1.{} {}", self.field, self.reason)
    }
}

impl std::error::Error for WireError {}
