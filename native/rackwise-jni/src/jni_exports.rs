//! The `native` methods of `io.rackwise.yarn.nativecore.NativeCore` (all `static`), with the
//! signatures of `docs/boundary.md`.
//!
//! Each export does the same three things: enter the JNI environment, run its whole body
//! (argument conversion included) inside `guard::run`, and let [`ThrowNativeException`] turn a
//! `BoundaryError` into the matching Java exception plus a default return value that Java never
//! reads. The decisions themselves are in `ops`, shared with the C ABI.

use crate::guard::{self, BoundaryError, ErrorKind};
use crate::ops;
use jni::errors::ErrorPolicy;
use jni::objects::{JByteArray, JClass, JString};
use jni::strings::{JNIStr, JNIString};
use jni::sys::{jint, jlong};
use jni::{jni_str, Env, EnvUnowned};

/// The Java class thrown for each error kind; each takes a single `String` message.
fn exception_class(kind: ErrorKind) -> &'static JNIStr {
    match kind {
        ErrorKind::Config => jni_str!("io/rackwise/yarn/nativecore/NativeConfigException"),
        ErrorKind::Protocol => jni_str!("io/rackwise/yarn/nativecore/NativeProtocolException"),
        ErrorKind::Handle => jni_str!("io/rackwise/yarn/nativecore/NativeHandleException"),
        ErrorKind::Panic => jni_str!("io/rackwise/yarn/nativecore/NativePanicException"),
    }
}

impl From<jni::errors::Error> for BoundaryError {
    fn from(error: jni::errors::Error) -> BoundaryError {
        // Only argument and result conversion calls JNI here. Failures there mean Java passed
        // something unusable (a null array) or the JVM already has an exception pending (an
        // OutOfMemoryError), which the policy then lets through unchanged.
        match error {
            jni::errors::Error::NullPtr(_) => BoundaryError::protocol("a byte[] argument is null"),
            other => BoundaryError::protocol(format!("JNI argument or result conversion: {other}")),
        }
    }
}

/// Throws the exception class of the error's kind, or leaves an already pending Java exception
/// alone.
struct ThrowNativeException;

impl<T: Default> ErrorPolicy<T, BoundaryError> for ThrowNativeException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        error: BoundaryError,
    ) -> jni::errors::Result<T> {
        throw(env, &error);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        // Every export body runs inside `guard::run`, so this is only reached if the guard
        // itself failed; the panic still must not reach the JVM. The payload is leaked rather
        // than dropped because its destructor could panic again, with nothing left to catch it.
        std::mem::forget(payload);
        let error = BoundaryError::new(ErrorKind::Panic, "native panic outside the guard");
        throw(env, &error);
        Ok(T::default())
    }
}

fn throw(env: &mut Env<'_>, error: &BoundaryError) {
    if env.exception_check() {
        return;
    }
    let message = JNIString::from(error.message.as_str());
    // `find_class` is JNI `FindClass`, which inside a native method resolves through the class
    // loader of the class that declared it (NativeCore), the loader that also has our
    // exception classes, whatever the thread's context loader is inside the RM. `throw_new`
    // reports success as `Err(JavaException)`, hence the check below rather than the result.
    if let Ok(class) = env.find_class(exception_class(error.kind)) {
        let _ = env.throw_new(&class, &message);
    }
    if !env.exception_check() {
        // Our exception class could not be loaded (a jar built without it?): a plain
        // RuntimeException still stops the caller from reading the default return value.
        let _ = env.throw_new(jni_str!("java/lang/RuntimeException"), &message);
    }
}

/// A Java `long` carries the handle's 64 bits unchanged; ids are small positive numbers, and
/// a negative `long` from Java simply names no engine.
fn handle_from_java(handle: jlong) -> u64 {
    handle as u64
}

fn handle_to_java(handle: u64) -> jlong {
    handle as jlong
}

/// `static native long create(byte[] engineConfig)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_create<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    engine_config: JByteArray<'caller>,
) -> jlong {
    env.with_env(|env| {
        guard::run(|| {
            let config = env.convert_byte_array(&engine_config)?;
            ops::create(&config).map(handle_to_java)
        })
    })
    .resolve::<ThrowNativeException>()
}

/// `static native byte[] offer(long handle, byte[] offerRequest)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_offer<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    offer_request: JByteArray<'caller>,
) -> JByteArray<'caller> {
    env.with_env(|env| {
        guard::run(|| {
            let request = env.convert_byte_array(&offer_request)?;
            let response = ops::offer(handle_from_java(handle), &request)?;
            Ok(env.byte_array_from_slice(&response)?)
        })
    })
    .resolve::<ThrowNativeException>()
}

/// `static native byte[] drainLogs()`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_drainLogs<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JByteArray<'caller> {
    env.with_env(|env| guard::run(|| Ok(env.byte_array_from_slice(&ops::drain_logs()?)?)))
        .resolve::<ThrowNativeException>()
}

/// `static native void reconfigure(long handle, byte[] engineConfig)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_reconfigure<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    engine_config: JByteArray<'caller>,
) {
    env.with_env(|env| {
        guard::run(|| {
            let config = env.convert_byte_array(&engine_config)?;
            ops::reconfigure(handle_from_java(handle), &config)
        })
    })
    .resolve::<ThrowNativeException>()
}

/// `static native void destroy(long handle)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_destroy<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| guard::run(|| ops::destroy(handle_from_java(handle))))
        .resolve::<ThrowNativeException>()
}

/// `static native void setMaxLogLevel(int level)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_setMaxLogLevel<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    level: jint,
) {
    env.with_env(|_env| guard::run(|| ops::set_max_log_level(level)))
        .resolve::<ThrowNativeException>()
}

/// `static native byte[] mapreduceFacts()`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_mapreduceFacts<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JByteArray<'caller> {
    env.with_env(|env| guard::run(|| Ok(env.byte_array_from_slice(&ops::mapreduce_facts())?)))
        .resolve::<ThrowNativeException>()
}

/// `static native String version()`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_version<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JString<'caller> {
    env.with_env(|env| guard::run(|| Ok(JString::from_str(env, ops::version())?)))
        .resolve::<ThrowNativeException>()
}

/// `static native void verifyPanicGuard()`: throws `NativePanicException` when all is well.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_rackwise_yarn_nativecore_NativeCore_verifyPanicGuard<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) {
    env.with_env(|_env| guard::run(ops::deliberate_panic))
        .resolve::<ThrowNativeException>()
}
