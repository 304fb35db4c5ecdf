//! The same entry points for C callers (a trace-replay harness, a fuzzer, another host), declared
//! in `include/rackwise.h`, which cbindgen generates from this file.
//!
//! Conventions, kept uniform so a caller can wrap every function the same way:
//! - every call returns a [`RackwiseStatus`]; anything but `RACKWISE_STATUS_OK` leaves a UTF-8
//!   message in the error buffer;
//! - every `RackwiseBuffer` the library writes is owned by the caller afterwards and must be
//!   released with [`rackwise_buffer_free`], even when empty (an empty buffer has a null
//!   `data`, so freeing it is a no-op);
//! - input bytes are borrowed for the duration of the call only;
//! - out-pointers may be null when the caller does not want that output.

use crate::guard::{self, BoundaryError, ErrorKind};
use crate::ops;
use std::ffi::{c_char, CStr};
use std::ptr;

/// Outcome of a call.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RackwiseStatus {
    Ok = 0,
    /// The configuration was refused; the message lists every problem.
    ConfigError = 1,
    /// The bytes could not be decoded, or an argument was null where data was required.
    ProtocolError = 2,
    /// Zero, destroyed, made-up or poisoned engine handle.
    HandleError = 3,
    /// Native code panicked; the panic was caught and the message says where.
    Panic = 4,
}

impl From<ErrorKind> for RackwiseStatus {
    fn from(kind: ErrorKind) -> RackwiseStatus {
        match kind {
            ErrorKind::Config => RackwiseStatus::ConfigError,
            ErrorKind::Protocol => RackwiseStatus::ProtocolError,
            ErrorKind::Handle => RackwiseStatus::HandleError,
            ErrorKind::Panic => RackwiseStatus::Panic,
        }
    }
}

/// Bytes allocated by the library and handed to the caller.
#[repr(C)]
#[derive(Debug)]
pub struct RackwiseBuffer {
    /// Null when `len` is 0.
    pub data: *mut u8,
    pub len: usize,
}

impl RackwiseBuffer {
    const EMPTY: RackwiseBuffer = RackwiseBuffer {
        data: ptr::null_mut(),
        len: 0,
    };

    fn from_vec(bytes: Vec<u8>) -> RackwiseBuffer {
        if bytes.is_empty() {
            return RackwiseBuffer::EMPTY;
        }
        // A boxed slice has no spare capacity, so `data` + `len` are all `rackwise_buffer_free`
        // needs to rebuild the allocation.
        let boxed: Box<[u8]> = bytes.into_boxed_slice();
        let len = boxed.len();
        RackwiseBuffer {
            data: Box::into_raw(boxed).cast::<u8>(),
            len,
        }
    }
}

// A `'static` NUL-terminated copy of the crate version, so `rackwise_version` hands out a
// pointer that never dangles and never needs freeing.
static VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(version) => version,
        Err(_) => panic!("the crate version contains a NUL byte"),
    };

/// Borrows the caller's input bytes.
///
/// # Safety
/// Unless `data` is null, it must point to `len` bytes that stay readable and unchanged for
/// the returned lifetime.
unsafe fn input<'a>(data: *const u8, len: usize) -> Result<&'a [u8], BoundaryError> {
    if data.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(BoundaryError::protocol(format!(
            "input pointer is null but its length is {len}"
        )));
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes (see above).
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Stores `buffer` through `out`, or frees it when the caller passed no place for it.
///
/// # Safety
/// `out` must be null or valid for a write of one `RackwiseBuffer`.
unsafe fn put(out: *mut RackwiseBuffer, buffer: RackwiseBuffer) {
    if out.is_null() {
        let mut unwanted = buffer;
        // SAFETY: `unwanted` was produced by `RackwiseBuffer::from_vec` just now.
        unsafe { rackwise_buffer_free(&mut unwanted) };
    } else {
        // SAFETY: non-null and valid for writes per the contract above. `write`, not
        // assignment: the caller's storage may be uninitialised and must not be dropped.
        unsafe { out.write(buffer) };
    }
}

/// Writes the outcome of a call that returns no bytes on success.
///
/// # Safety
/// `out_error` must be null or valid for a write of one `RackwiseBuffer`.
unsafe fn finish(
    result: Result<(), BoundaryError>,
    out_error: *mut RackwiseBuffer,
) -> RackwiseStatus {
    match result {
        Ok(()) => {
            // SAFETY: forwarded from the caller's contract.
            unsafe { put(out_error, RackwiseBuffer::EMPTY) };
            RackwiseStatus::Ok
        }
        Err(error) => {
            // SAFETY: forwarded from the caller's contract.
            unsafe {
                put(
                    out_error,
                    RackwiseBuffer::from_vec(error.message.into_bytes()),
                )
            };
            error.kind.into()
        }
    }
}

/// Builds an engine from an `EngineConfig` message (protobuf, `proto/rackwise.proto`).
///
/// On success `*out_handle` is a new nonzero handle; on failure it is 0.
///
/// # Safety
/// `config` must be null (only with `config_len` 0) or point to `config_len` readable bytes.
/// `out_handle` must be null or valid for a write of a `uint64_t`; `out_error` must be null or
/// valid for a write of a `RackwiseBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_engine_create(
    config: *const u8,
    config_len: usize,
    out_handle: *mut u64,
    out_error: *mut RackwiseBuffer,
) -> RackwiseStatus {
    // SAFETY: `input` relies on the caller's contract for `config`, stated above.
    let result = guard::run(|| ops::create(unsafe { input(config, config_len)? }));
    let (handle, outcome) = match result {
        Ok(handle) => (handle, Ok(())),
        Err(error) => (0, Err(error)),
    };
    if !out_handle.is_null() {
        // SAFETY: non-null and valid for writes per the caller's contract.
        unsafe { out_handle.write(handle) };
    }
    // SAFETY: the caller's contract for `out_error`.
    unsafe { finish(outcome, out_error) }
}

/// Runs one offer: an `OfferRequest` message in, an `OfferResponse` message out (protobuf).
///
/// `*out` receives the response on success and the error message otherwise.
///
/// # Safety
/// `request` must be null (only with `request_len` 0) or point to `request_len` readable bytes;
/// `out` must be null or valid for a write of a `RackwiseBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_offer(
    handle: u64,
    request: *const u8,
    request_len: usize,
    out: *mut RackwiseBuffer,
) -> RackwiseStatus {
    // SAFETY: `input` relies on the caller's contract for `request`, stated above.
    let result = guard::run(|| ops::offer(handle, unsafe { input(request, request_len)? }));
    let (buffer, status) = match result {
        Ok(response) => (RackwiseBuffer::from_vec(response), RackwiseStatus::Ok),
        Err(error) => (
            RackwiseBuffer::from_vec(error.message.into_bytes()),
            error.kind.into(),
        ),
    };
    // SAFETY: the caller's contract for `out`.
    unsafe { put(out, buffer) };
    status
}

/// Replaces an engine's configuration (an `EngineConfig` message); on error the engine keeps
/// the previous one.
///
/// # Safety
/// As for [`rackwise_engine_create`]: `config`/`config_len` readable, `out_error` null or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_reconfigure(
    handle: u64,
    config: *const u8,
    config_len: usize,
    out_error: *mut RackwiseBuffer,
) -> RackwiseStatus {
    // SAFETY: `input` relies on the caller's contract for `config`, stated above.
    let result = guard::run(|| ops::reconfigure(handle, unsafe { input(config, config_len)? }));
    // SAFETY: the caller's contract for `out_error`.
    unsafe { finish(result, out_error) }
}

/// Drops an engine; the handle is refused from then on.
///
/// # Safety
/// `out_error` must be null or valid for a write of a `RackwiseBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_engine_destroy(
    handle: u64,
    out_error: *mut RackwiseBuffer,
) -> RackwiseStatus {
    let result = guard::run(|| ops::destroy(handle));
    // SAFETY: the caller's contract for `out_error`.
    unsafe { finish(result, out_error) }
}

/// The library version as a static NUL-terminated string; never free it.
#[unsafe(no_mangle)]
pub extern "C" fn rackwise_version() -> *const c_char {
    VERSION.as_ptr()
}

/// Panics on purpose inside the guard; returns `RACKWISE_STATUS_PANIC` when the guard works.
///
/// # Safety
/// `out_error` must be null or valid for a write of a `RackwiseBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_verify_panic_guard(
    out_error: *mut RackwiseBuffer,
) -> RackwiseStatus {
    let result = guard::run(ops::deliberate_panic);
    // SAFETY: the caller's contract for `out_error`.
    unsafe { finish(result, out_error) }
}

/// Releases a buffer the library wrote, and empties it so a second free is harmless.
///
/// # Safety
/// `buffer` must be null or point to a `RackwiseBuffer` that this library filled in (or that is
/// empty) and that was not modified since.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rackwise_buffer_free(buffer: *mut RackwiseBuffer) {
    if buffer.is_null() {
        return;
    }
    // SAFETY: non-null and, per the contract, a buffer from `RackwiseBuffer::from_vec`.
    let RackwiseBuffer { data, len } = unsafe { buffer.replace(RackwiseBuffer::EMPTY) };
    if !data.is_null() {
        // SAFETY: `data`/`len` are exactly the boxed slice `from_vec` leaked.
        drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(data, len)) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use prost::Message;
    use rackwise_wire::v1;

    fn config() -> Vec<u8> {
        v1::EngineConfig::default().encode_to_vec()
    }

    fn request() -> Vec<u8> {
        v1::OfferRequest {
            now_ms: Some(1),
            events: vec![],
            node: Some(v1::NodeOffer {
                node: "h1:1".into(),
                unallocated: Some(v1::Resources {
                    memory_mb: Some(1024),
                    vcores: Some(1),
                }),
                utilization: None,
            }),
        }
        .encode_to_vec()
    }

    /// Takes a buffer's bytes and frees it.
    fn take(mut buffer: RackwiseBuffer) -> Vec<u8> {
        let bytes = if buffer.data.is_null() {
            Vec::new()
        } else {
            // SAFETY: written by the library, untouched since.
            unsafe { std::slice::from_raw_parts(buffer.data, buffer.len) }.to_vec()
        };
        // SAFETY: as above.
        unsafe { rackwise_buffer_free(&mut buffer) };
        assert!(buffer.data.is_null() && buffer.len == 0);
        bytes
    }

    fn create(config: &[u8]) -> (RackwiseStatus, u64, String) {
        let mut handle = u64::MAX;
        let mut error = RackwiseBuffer::EMPTY;
        // SAFETY: valid slice and out-pointers.
        let status = unsafe {
            rackwise_engine_create(config.as_ptr(), config.len(), &mut handle, &mut error)
        };
        (status, handle, String::from_utf8(take(error)).unwrap())
    }

    fn offer(handle: u64, request: &[u8]) -> (RackwiseStatus, Vec<u8>) {
        let mut out = RackwiseBuffer::EMPTY;
        // SAFETY: valid slice and out-pointer.
        let status = unsafe { rackwise_offer(handle, request.as_ptr(), request.len(), &mut out) };
        (status, take(out))
    }

    fn destroy(handle: u64) -> RackwiseStatus {
        // SAFETY: a null out_error is allowed.
        unsafe { rackwise_engine_destroy(handle, ptr::null_mut()) }
    }

    #[test]
    fn lifecycle_through_the_c_abi() {
        let (status, handle, error) = create(&config());
        assert_eq!((status, error.as_str()), (RackwiseStatus::Ok, ""));
        assert_ne!(handle, 0);

        let (status, response) = offer(handle, &request());
        assert_eq!(status, RackwiseStatus::Ok);
        let response = v1::OfferResponse::decode(response.as_slice()).unwrap();
        assert!(response.plan.is_some() && response.diagnostics.is_some());

        let config = config();
        let mut error = RackwiseBuffer::EMPTY;
        // SAFETY: valid slice and out-pointer.
        let status =
            unsafe { rackwise_reconfigure(handle, config.as_ptr(), config.len(), &mut error) };
        assert_eq!(status, RackwiseStatus::Ok);
        assert!(take(error).is_empty());

        let mut error = RackwiseBuffer::EMPTY;
        // SAFETY: valid slice and out-pointer.
        let status = unsafe { rackwise_reconfigure(handle, b"\x0a\x05ab".as_ptr(), 4, &mut error) };
        assert_eq!(status, RackwiseStatus::ProtocolError);
        assert!(String::from_utf8(take(error))
            .unwrap()
            .starts_with("rackwise.wire.v1.EngineConfig cannot be decoded"));

        assert_eq!(destroy(handle), RackwiseStatus::Ok);
        assert_eq!(destroy(handle), RackwiseStatus::HandleError);
        assert_eq!(offer(handle, &request()).0, RackwiseStatus::HandleError);
    }

    #[test]
    fn a_panic_comes_back_as_the_panic_status() {
        let mut error = RackwiseBuffer::EMPTY;
        // SAFETY: valid out-pointer.
        let status = unsafe { rackwise_verify_panic_guard(&mut error) };
        assert_eq!(status, RackwiseStatus::Panic);
        let message = String::from_utf8(take(error)).unwrap();
        assert!(
            message.starts_with("native panic: deliberate panic"),
            "{message}"
        );
        // The process is alive and the library still serves calls.
        let (status, handle, _) = create(&config());
        assert_eq!(status, RackwiseStatus::Ok);
        assert_eq!(destroy(handle), RackwiseStatus::Ok);
    }

    #[test]
    fn errors_carry_their_status_and_message() {
        let (status, handle, error) = create(b"\xff\xff");
        assert_eq!((status, handle), (RackwiseStatus::ProtocolError, 0));
        assert!(
            error.starts_with("rackwise.wire.v1.EngineConfig cannot be decoded"),
            "{error}"
        );

        let (status, message) = offer(0, &request());
        assert_eq!(status, RackwiseStatus::HandleError);
        assert!(String::from_utf8(message).unwrap().contains("handle 0"));
    }

    #[test]
    fn null_pointers_are_refused_or_ignored_never_dereferenced() {
        // SAFETY: exercising the documented null cases.
        unsafe {
            let status = rackwise_engine_create(ptr::null(), 5, ptr::null_mut(), ptr::null_mut());
            assert_eq!(status, RackwiseStatus::ProtocolError);
            // No bytes are a valid, empty EngineConfig message.
            let mut handle = 0;
            let status = rackwise_engine_create(ptr::null(), 0, &mut handle, ptr::null_mut());
            assert_eq!(status, RackwiseStatus::Ok);
            assert_eq!(
                rackwise_engine_destroy(handle, ptr::null_mut()),
                RackwiseStatus::Ok
            );
            assert_eq!(
                rackwise_offer(1 << 60, ptr::null(), 0, ptr::null_mut()),
                RackwiseStatus::HandleError
            );
            rackwise_buffer_free(ptr::null_mut());
        }
    }

    #[test]
    fn version_is_the_crate_version() {
        // SAFETY: a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(rackwise_version()) };
        assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
