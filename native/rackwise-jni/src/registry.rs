//! Handles: ids into a process-wide table of engines, never raw pointers.
//!
//! Java holds nothing but a `long`. With a pointer, a zero, closed or made-up value would be
//! undefined behaviour; with an id it is a failed lookup and a `NativeHandleException`. Ids
//! start at 1 and are never reused, so a handle kept after `destroy` can never reach an engine
//! created later.

use crate::guard::BoundaryError;
use once_cell::sync::Lazy;
use rackwise_core::Engine;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What Java holds for an engine.
pub type Handle = u64;

struct Table {
    /// The next id to hand out; 0 is never handed out.
    next: Handle,
    engines: HashMap<Handle, Arc<Mutex<Engine>>>,
}

// The JVM calls in from several threads (RM main, the scheduler's event dispatcher, the
// allocation-file reloader, admin RPC) carrying only a handle, so the engines have to live
// somewhere every thread can find them by id: one table for the process.
static TABLE: Lazy<Mutex<Table>> = Lazy::new(|| {
    Mutex::new(Table {
        next: 1,
        engines: HashMap::new(),
    })
});

fn table() -> MutexGuard<'static, Table> {
    // Only map inserts, removals and `Arc` clones run under this lock, and none of them can
    // leave the map half-updated, so poisoning (a panic on some thread while it held the lock)
    // says nothing about the table and is ignored.
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers an engine and returns its new handle.
pub fn insert(engine: Engine) -> Result<Handle, BoundaryError> {
    let mut table = table();
    let handle = table.next;
    // Unreachable in practice (2^64 creates), but wrapping would hand out 0 and then reuse ids.
    table.next = handle
        .checked_add(1)
        .ok_or_else(|| BoundaryError::handle("engine handles exhausted"))?;
    table.engines.insert(handle, Arc::new(Mutex::new(engine)));
    Ok(handle)
}

/// Forgets an engine. An engine still busy on another thread (an offer racing a destroy)
/// stays alive until that call returns; later calls with the handle are refused.
pub fn remove(handle: Handle) -> Result<(), BoundaryError> {
    let removed = table().engines.remove(&handle);
    match removed {
        Some(_) => Ok(()),
        None => Err(unknown(handle)),
    }
}

/// Looks an engine up without locking it, so the caller can decode its request first and hold
/// the engine's lock only for the engine call.
pub fn get(handle: Handle) -> Result<EngineRef, BoundaryError> {
    let engine = table().engines.get(&handle).cloned();
    engine
        .map(|engine| EngineRef { handle, engine })
        .ok_or_else(|| unknown(handle))
}

fn unknown(handle: Handle) -> BoundaryError {
    if handle == 0 {
        BoundaryError::handle("handle 0 is not an engine (not created, or already closed)")
    } else {
        BoundaryError::handle(format!(
            "no engine with handle {handle} (destroyed, or never created)"
        ))
    }
}

/// One registered engine, found by [`get`].
pub struct EngineRef {
    handle: Handle,
    engine: Arc<Mutex<Engine>>,
}

impl EngineRef {
    /// Locks the engine for one call. Each engine has its own lock, so a reload on the update
    /// thread and an offer on the dispatcher never run inside the core at the same time.
    ///
    /// An engine that panicked may hold half-applied state, and its decisions can no longer be
    /// trusted: it is refused until it is destroyed and a new one created.
    pub fn lock(&self) -> Result<MutexGuard<'_, Engine>, BoundaryError> {
        self.engine.lock().map_err(|_| {
            BoundaryError::handle(format!(
                "engine {} poisoned by an earlier panic; destroy it and create a new one",
                self.handle
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{self, ErrorKind};
    use rackwise_core::protocol::EngineConfig;

    fn engine() -> Engine {
        Engine::new(&EngineConfig::default()).expect("default config is valid")
    }

    #[test]
    fn handles_are_nonzero_distinct_and_never_reused() {
        let first = insert(engine()).unwrap();
        remove(first).unwrap();
        let second = insert(engine()).unwrap();
        assert!(first != 0 && second != 0);
        assert!(second > first, "ids grow: {first} then {second}");
        assert_eq!(get(first).err().map(|e| e.kind), Some(ErrorKind::Handle));
        remove(second).unwrap();
    }

    #[test]
    fn zero_closed_and_made_up_handles_are_refused() {
        let closed = insert(engine()).unwrap();
        remove(closed).unwrap();
        for handle in [0, closed, u64::MAX, 0xdead_beef_0000] {
            let lookup = get(handle).err().expect("refused");
            assert_eq!(lookup.kind, ErrorKind::Handle, "{handle}");
            assert_eq!(remove(handle).unwrap_err().kind, ErrorKind::Handle);
        }
        assert!(get(0).err().unwrap().message.contains("handle 0"));
    }

    #[test]
    fn a_panic_inside_an_engine_poisons_only_that_engine() {
        let poisoned = insert(engine()).unwrap();
        let healthy = insert(engine()).unwrap();
        let panicked: Result<(), _> = guard::run(|| {
            let engine = get(poisoned)?;
            let _locked = engine.lock()?;
            panic!("engine blew up mid-offer")
        });
        assert_eq!(panicked.unwrap_err().kind, ErrorKind::Panic);

        let refused = get(poisoned).unwrap().lock().err().expect("poisoned");
        assert_eq!(refused.kind, ErrorKind::Handle);
        assert!(refused.message.contains("poisoned by an earlier panic"));
        assert!(get(healthy).unwrap().lock().is_ok());

        // A poisoned engine can still be destroyed, which is how the owner recovers.
        remove(poisoned).unwrap();
        remove(healthy).unwrap();
    }

    #[test]
    fn a_destroy_during_a_call_lets_the_call_finish() {
        let handle = insert(engine()).unwrap();
        let in_flight = get(handle).unwrap();
        remove(handle).unwrap();
        assert!(
            in_flight.lock().is_ok(),
            "the running call still owns the engine"
        );
        assert_eq!(get(handle).err().map(|e| e.kind), Some(ErrorKind::Handle));
    }
}
