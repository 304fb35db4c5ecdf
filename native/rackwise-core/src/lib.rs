//! Rackwise decision core.
//!
//! A pure library: the engine is a deterministic function of its state and the request, which
//! carries the time (`now_ms`). It reads no clock, starts no thread and draws no randomness, so
//! the ResourceManager plugin and the trace-driven simulator run the very same decisions.
//! No JNI type appears here; `rackwise-jni` wraps this crate for the JVM. The layers, lowest
//! first, are described in `docs/architecture.md`.

pub mod engine;
pub mod error;
pub mod mapreduce;
pub mod netsat;
pub mod policy;
pub mod predictor;
pub mod protocol;
pub mod settings;
pub mod state;

pub use engine::Engine;
pub use error::{ConfigProblem, CoreError};
