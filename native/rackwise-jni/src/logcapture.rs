//! Native log records, buffered for the shim to write to the ResourceManager's own log.
//!
//! The core logs through the `log` crate. Printing would put the records on the RM's stderr,
//! which no operator reads; calling back into Java per record would cost a JNI upcall on the
//! heartbeat path. Instead records wait in a bounded queue and ride back on the next offer
//! response (`OfferResponse::logs`). A full queue drops the oldest record and counts it: a log
//! flood must never block or grow the scheduler's memory.

use crossbeam::queue::ArrayQueue;
use log::{LevelFilter, Log, Metadata, Record};
use once_cell::sync::Lazy;
use rackwise_core::protocol::LogRecord;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// Records kept between two offers. Offers come every node heartbeat (about a second per
/// node), so this is only reached by a flood, which is what the dropped count reports.
pub const CAPACITY: usize = 4096;

/// Environment variable that sets the most verbose level captured (`off`, `error`, `warn`,
/// `info`, `debug`, `trace`) until the host sets one ([`set_max_level`]); `info` when unset or
/// unreadable. The JVM shim sets the level of its `io.rackwise.yarn.native` logger at every
/// engine start and whenever that logger's level changes, so there the variable only governs
/// what `create` logs before the first offer.
pub const LEVEL_VARIABLE: &str = "RACKWISE_NATIVE_LOG_LEVEL";

/// A bounded buffer of records plus a count of the ones it had to drop.
pub struct Capture {
    queue: ArrayQueue<LogRecord>,
    dropped: AtomicU64,
}

impl Capture {
    pub fn new(capacity: usize) -> Capture {
        Capture {
            queue: ArrayQueue::new(capacity),
            dropped: AtomicU64::new(0),
        }
    }

    pub fn push(&self, record: LogRecord) {
        if self.queue.force_push(record).is_some() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Takes what is buffered, oldest first; if records were dropped since the last drain, a
    /// final warning says how many.
    pub fn drain(&self) -> Vec<LogRecord> {
        let capacity = self.queue.capacity();
        let mut records = Vec::with_capacity(self.queue.len() + 1);
        // Bounded so that threads logging while we drain cannot keep this loop going.
        for _ in 0..capacity {
            match self.queue.pop() {
                Some(record) => records.push(record),
                None => break,
            }
        }
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            records.push(LogRecord {
                level: "warn".to_string(),
                target: module_path!().to_string(),
                message: format!(
                    "{dropped} older native log records were dropped: at most {capacity} are \
                     kept between two offers"
                ),
            });
        }
        records
    }
}

// `log` dispatches to one `&'static dyn Log` per process, and records arrive from whichever
// thread is inside the core, so the queue they land in is process-wide as well.
static CAPTURE: Lazy<Capture> = Lazy::new(|| Capture::new(CAPACITY));

struct CaptureLogger;

// `log::set_logger` takes a `&'static`; the logger itself is stateless.
static LOGGER: CaptureLogger = CaptureLogger;

impl Log for CaptureLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        CAPTURE.push(LogRecord {
            level: record.level().as_str().to_ascii_lowercase(),
            target: record.target().to_string(),
            message: record.args().to_string(),
        });
    }

    fn flush(&self) {}
}

/// Installs the capturing logger, once per process. When the library is linked into a program
/// that installed its own logger first, that logger keeps the records and [`drain`] stays empty.
pub fn install() {
    // `log::set_logger` succeeds only once per process; later engines reuse the first install.
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if log::set_logger(&LOGGER).is_ok() {
            log::set_max_level(level_from_environment());
        }
    });
}

fn level_from_environment() -> LevelFilter {
    std::env::var(LEVEL_VARIABLE)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(LevelFilter::Info)
}

/// Sets the most verbose level captured from now on, process-wide (`log` has one maximum per
/// process): 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace, the order of [`LevelFilter`].
/// A number above 5 means trace; below 0, off.
pub fn set_max_level(level: i32) {
    let filter = match level {
        i32::MIN..=0 => LevelFilter::Off,
        1 => LevelFilter::Error,
        2 => LevelFilter::Warn,
        3 => LevelFilter::Info,
        4 => LevelFilter::Debug,
        _ => LevelFilter::Trace,
    };
    log::set_max_level(filter);
}

/// Everything logged since the previous drain, from any engine and any thread.
pub fn drain() -> Vec<LogRecord> {
    CAPTURE.drain()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(message: &str) -> LogRecord {
        LogRecord {
            level: "info".into(),
            target: "t".into(),
            message: message.into(),
        }
    }

    #[test]
    fn drain_returns_records_in_order_and_empties_the_buffer() {
        let capture = Capture::new(4);
        capture.push(record("a"));
        capture.push(record("b"));
        let messages: Vec<_> = capture.drain().into_iter().map(|r| r.message).collect();
        assert_eq!(messages, ["a", "b"]);
        assert!(capture.drain().is_empty());
    }

    #[test]
    fn overflow_keeps_the_newest_and_reports_the_count_once() {
        let capture = Capture::new(2);
        for message in ["1", "2", "3", "4", "5"] {
            capture.push(record(message));
        }
        let drained = capture.drain();
        let messages: Vec<_> = drained.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(&messages[..2], ["4", "5"]);
        assert_eq!(drained[2].level, "warn");
        assert!(drained[2]
            .message
            .starts_with("3 older native log records were dropped"));
        assert!(
            capture.drain().is_empty(),
            "the count is reset by the drain"
        );
    }
}
