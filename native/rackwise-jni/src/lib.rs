//! `librackwise`: the boundary between the ResourceManager's JVM (or a C caller) and
//! `rackwise-core`. The contract is `docs/boundary.md`.
//!
//! Both front doors, [`jni_exports`] for the JVM and [`c_abi`] for C, are thin: they convert
//! arguments, run one function of [`ops`] inside [`guard::run`], and translate the result.
//! Everything that decides (handle lookup, decoding, the engine calls, log draining) lives in
//! [`ops`], so the two ABIs cannot drift apart.

// A panic that reaches an `extern` boundary aborts the process; inside the ResourceManager that
// kills the RM. The guard can only turn panics into Java exceptions or status codes if they
// unwind, so a build with `panic = "abort"` must never produce this library.
#[cfg(not(panic = "unwind"))]
compile_error!(
    "rackwise-jni must be built with panic = \"unwind\": the guard catches panics at the \
     JNI/C boundary, and with panic = \"abort\" any panic would kill the host JVM"
);

pub mod c_abi;
pub mod guard;
/// cbindgen:ignore
pub mod jni_exports;
pub mod logcapture;
pub mod ops;
pub mod registry;

pub use guard::{BoundaryError, ErrorKind};
