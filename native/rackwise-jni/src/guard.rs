//! The one policy for everything that can go wrong inside an export.
//!
//! Every JNI export and every C entry point runs its body through [`run`]. Errors come out as a
//! [`BoundaryError`] whose [`ErrorKind`] the front door maps to a Java exception class or a C
//! status code; a panic is caught and becomes [`ErrorKind::Panic`] with its message and
//! location. Nothing unwinds into the JVM or a C caller.

use rackwise_core::CoreError;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

/// What went wrong, as far as the caller needs to tell apart. Part of the contract: each kind
/// has its own Java exception and its own C status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The engine configuration was refused (every problem is in the message).
    Config,
    /// The bytes could not be decoded, or an argument was unusable (null, bad length).
    Protocol,
    /// Zero, closed, made-up or poisoned handle.
    Handle,
    /// Native code panicked; the message says where.
    Panic,
}

/// An error on its way out of the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryError {
    pub kind: ErrorKind,
    pub message: String,
}

impl BoundaryError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> BoundaryError {
        BoundaryError {
            kind,
            message: message.into(),
        }
    }

    pub fn protocol(message: impl Into<String>) -> BoundaryError {
        BoundaryError::new(ErrorKind::Protocol, message)
    }

    pub fn handle(message: impl Into<String>) -> BoundaryError {
        BoundaryError::new(ErrorKind::Handle, message)
    }
}

impl fmt::Display for BoundaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BoundaryError {}

impl From<CoreError> for BoundaryError {
    fn from(error: CoreError) -> BoundaryError {
        // The kind is taken from the variant, never from the text, so rewording a message in
        // the core cannot move an error to another exception class.
        let kind = match error {
            CoreError::Config(_) => ErrorKind::Config,
        };
        BoundaryError::new(kind, error.to_string())
    }
}

impl From<rackwise_wire::WireError> for BoundaryError {
    fn from(error: rackwise_wire::WireError) -> BoundaryError {
        BoundaryError::protocol(error.to_string())
    }
}

thread_local! {
    // How many `run` frames are active on this thread. The hook only swallows panics that a
    // guard is about to catch; any other panic (a failing `#[test]`, a host program linking the
    // rlib) keeps the previous hook's behaviour.
    static GUARD_DEPTH: Cell<u32> = const { Cell::new(0) };
    // The hook runs before unwinding starts and is the only place that sees the location; it
    // leaves the description here for the `run` frame that catches the panic, on the same thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `body`, turning a panic into an [`ErrorKind::Panic`] error.
///
/// `AssertUnwindSafe` is sound here because the only state a panic can leave half-updated is an
/// engine, and every engine sits behind its own `Mutex`: the panic poisons it and the registry
/// refuses that engine from then on (see `registry`).
pub fn run<T>(body: impl FnOnce() -> Result<T, BoundaryError>) -> Result<T, BoundaryError> {
    install_panic_hook();
    // A description left over from a panic that something else caught must not be reported
    // as this call's panic.
    take_last_panic();
    GUARD_DEPTH.with(|depth| depth.set(depth.get() + 1));
    let outcome = panic::catch_unwind(AssertUnwindSafe(body));
    GUARD_DEPTH.with(|depth| depth.set(depth.get() - 1));
    match outcome {
        Ok(result) => result,
        Err(payload) => {
            let description = take_last_panic().unwrap_or_else(|| payload_text(&*payload));
            drop_payload(payload);
            Err(BoundaryError::new(
                ErrorKind::Panic,
                format!("native panic: {description}"),
            ))
        }
    }
}

fn install_panic_hook() {
    // `set_hook` is process-wide and chains to whatever was installed before, so it must run
    // exactly once however many threads enter the library first.
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let guarded = GUARD_DEPTH
                .try_with(|depth| depth.get() > 0)
                .unwrap_or(false);
            if guarded {
                // Stored, not printed: the RM's stderr is nobody's log; the text reaches the
                // RM log inside the NativePanicException instead.
                let description = describe(info);
                let _ = LAST_PANIC.try_with(|slot| {
                    if let Ok(mut slot) = slot.try_borrow_mut() {
                        *slot = Some(description);
                    }
                });
            } else {
                previous(info);
            }
        }));
    });
}

fn take_last_panic() -> Option<String> {
    LAST_PANIC
        .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut slot| slot.take()))
        .ok()
        .flatten()
}

fn describe(info: &PanicHookInfo<'_>) -> String {
    let message = payload_text(info.payload());
    match info.location() {
        Some(at) => format!("{message} (at {}:{}:{})", at.file(), at.line(), at.column()),
        None => message,
    }
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// A payload's destructor may itself panic; leaking it is better than letting that escape.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(second) = panic::catch_unwind(AssertUnwindSafe(|| drop(payload))) {
        std::mem::forget(second);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rackwise_core::ConfigProblem;

    #[test]
    fn ok_and_err_pass_through() {
        assert_eq!(run(|| Ok(7)), Ok(7));
        let refused: Result<(), _> = run(|| Err(BoundaryError::handle("no such engine")));
        assert_eq!(refused.unwrap_err().kind, ErrorKind::Handle);
    }

    #[test]
    fn a_panic_becomes_a_panic_error_with_message_and_location() {
        let line = line!() + 1;
        let caught: Result<(), _> = run(|| panic!("boom {}", 42));
        let error = caught.unwrap_err();
        assert_eq!(error.kind, ErrorKind::Panic);
        assert!(error.message.contains("boom 42"), "{}", error.message);
        assert!(
            error.message.contains(&format!("guard.rs:{line}:")),
            "location missing: {}",
            error.message
        );
    }

    #[test]
    fn nested_guards_each_catch_their_own_panic() {
        let outer: Result<(), _> = run(|| {
            let inner: Result<(), _> = run(|| panic!("inner"));
            assert!(inner.unwrap_err().message.contains("inner"));
            panic!("outer")
        });
        let message = outer.unwrap_err().message;
        assert!(
            message.contains("outer") && !message.contains("inner"),
            "{message}"
        );
    }

    #[test]
    fn a_stale_description_is_not_reused_for_a_resumed_panic() {
        // `resume_unwind` skips the hook, so only the payload describes this one.
        let _ = run::<()>(|| panic!("first"));
        LAST_PANIC.with(|slot| *slot.borrow_mut() = Some("stale".into()));
        let resumed: Result<(), _> = run(|| panic::resume_unwind(Box::new("second")));
        assert_eq!(resumed.unwrap_err().message, "native panic: second");
    }

    #[test]
    fn core_errors_keep_their_kind() {
        let config = CoreError::Config(vec![ConfigProblem {
            element: "yarn.scheduler.rackwise.netsat.threshold".into(),
            value: "2".into(),
            reason: "is out of range".into(),
        }]);
        let mapped = BoundaryError::from(config);
        assert_eq!(mapped.kind, ErrorKind::Config);
        assert!(mapped
            .message
            .contains("netsat.threshold: value '2' is out of range"));
    }
}
