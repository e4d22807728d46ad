//! The C functions: thin shims that check pointer arguments, catch panics and turn results into
//! `aclError` codes (recording the message for `aclGetRecentErrMsg`).
//!
//! They are plain `extern "C"` functions with Rust (mangled) symbol names: a binary that embeds
//! the emulator defines no `acl*` symbol, so it can never interpose on a real runtime library.
//! The `ascendcl-emu-capi` crate exports them under the real names as a shared library.
#![allow(non_snake_case)]

use crate::callback;
use crate::config;
use crate::copy::{self, BatchAttr, Copy2d};
use crate::error::*;
use crate::event;
use crate::faults;
use crate::memory::{self, Kind, Loc, Sizing};
use crate::state;
use crate::stream::Task;
use ascendcl_sys::*;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs one API call: fault injection, panic containment, error recording.
#[inline(always)]
fn guard(api: &'static str, f: impl FnOnce() -> R) -> aclError {
    // Everything, fault injection and error recording included, runs inside catch_unwind: no
    // panic may unwind into C.
    let run = move || {
        if let Some(code) = faults::check(api) {
            return injected(api, code);
        }
        finish(api, f())
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| panicked(api))
}

#[cold]
fn panicked(api: &str) -> aclError {
    catch_unwind(|| {
        record(
            api,
            Fail {
                code: RT_INTERNAL_ERROR,
                msg: "internal error: the emulator panicked (please report it)".to_string(),
            },
        )
    })
    .unwrap_or(RT_INTERNAL_ERROR)
}

#[cold]
fn injected(api: &str, code: aclError) -> aclError {
    record(
        api,
        Fail {
            code,
            msg: "injected fault (ASCENDCL_EMU_FAULTS / ascendcl_emu::inject_fault)".to_string(),
        },
    )
}

/// An output pointer checked for NULL.
struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` is NULL or valid for one write of `T`.
    unsafe fn new(p: *mut T, name: &str) -> R<Out<T>> {
        if p.is_null() {
            return fail(INVALID_PARAM, format!("{name} is NULL"));
        }
        Ok(Out(p))
    }

    fn set(self, v: T) {
        // SAFETY: `new`'s contract: non-NULL and valid for one write.
        unsafe { self.0.write(v) }
    }
}

macro_rules! acl {
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        ///
        /// # Safety
        /// The C function's contract: every pointer argument is NULL or valid for the access the
        /// function makes, and handles were returned by this runtime.
        pub unsafe extern "C" fn $name($($a: $t),*) -> aclError {
            guard(stringify!($name), move || -> R { $body })
        }
    };
}

fn timeout_arg(timeout: i32) -> R<Option<Duration>> {
    match timeout {
        -1 => Ok(None),
        t if t < -1 => fail(
            RT_PARAM_INVALID,
            format!("timeout {t} is invalid (-1 waits forever, otherwise milliseconds)"),
        ),
        t => Ok(Some(Duration::from_millis(t as u64))),
    }
}

fn handle<T>(p: *mut T) -> usize {
    p as usize
}

fn as_ptr(h: usize) -> *mut c_void {
    h as *mut c_void
}

// ---------------------------------------------------------------------------------------------
// Lifecycle and diagnostics

acl! {
    /// `aclInit`: initialises the runtime; a repeat returns 100002 (and counts a reference).
    fn aclInit(configPath: *const c_char) {
        let path = if configPath.is_null() {
            None
        } else {
            // SAFETY: a non-NULL configPath is a NUL-terminated string (C contract).
            let s = unsafe { CStr::from_ptr(configPath) };
            Some(s.to_str().map_err(|_| Fail {
                code: INVALID_FILE,
                msg: "configPath is not valid UTF-8".to_string(),
            })?)
        };
        state::init(path)
    }
}

acl! {
    /// `aclFinalize`: tears everything down; a second call returns 100037.
    fn aclFinalize() {
        state::finalize(false).map(|_| ())
    }
}

acl! {
    /// `aclFinalizeReference`: drops one `aclInit` reference, tearing down at the last; the
    /// remaining count goes to `refCount` unless it is NULL (the header: NULL ignores it).
    fn aclFinalizeReference(refCount: *mut u64) {
        let remaining = state::finalize(true)?;
        if !refCount.is_null() {
            // SAFETY: C contract: a non-NULL refCount is valid for one write.
            unsafe { refCount.write(remaining) };
        }
        Ok(())
    }
}

acl! {
    /// `aclrtGetVersion`: 1.17.0.
    fn aclrtGetVersion(majorVersion: *mut i32, minorVersion: *mut i32, patchVersion: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let (a, b, c) = unsafe {
            (
                Out::new(majorVersion, "majorVersion")?,
                Out::new(minorVersion, "minorVersion")?,
                Out::new(patchVersion, "patchVersion")?,
            )
        };
        a.set(ACL_MAJOR_VERSION as i32);
        b.set(ACL_MINOR_VERSION as i32);
        c.set(ACL_PATCH_VERSION as i32);
        Ok(())
    }
}

/// The C strings handed out by `aclrtGetSocName`, kept for the life of the process.
static SOC_NAMES: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// `aclrtGetSocName`: the configured SoC name (`Ascend910B2` by default); NULL on failure.
///
/// # Safety
/// Always safe to call; the returned string lives as long as the process.
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclrtGetSocName") {
            injected("aclrtGetSocName", code);
            return std::ptr::null();
        }
        let name = config::with(|c| c.soc.clone());
        let mut v = crate::sync::lock(&SOC_NAMES);
        if let Some(c) = v.iter().find(|c| c.to_bytes() == name.as_bytes()) {
            return c.as_ptr();
        }
        let c = CString::new(name).unwrap_or_default();
        let p = c.as_ptr();
        v.push(c);
        p
    })
    .unwrap_or(std::ptr::null())
}

acl! {
    /// `aclsysGetVersionStr`: "9.0.0" for the `cann`, `runtime`, `compiler`, `toolkit` and `opp`
    /// packages; 100003 for others. `versionStr` must hold ACL_PKG_VERSION_MAX_SIZE (128) bytes.
    fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) {
        if pkgName.is_null() {
            return fail(INVALID_PARAM, "pkgName is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(versionStr, "versionStr") }?;
        // SAFETY: pkgName is a NUL-terminated string (C contract).
        let name = unsafe { CStr::from_ptr(pkgName) }.to_string_lossy().to_ascii_lowercase();
        if !matches!(name.as_str(), "cann" | "runtime" | "compiler" | "toolkit" | "opp") {
            return fail(
                INVALID_FILE,
                format!("no version information for package {name:?}"),
            );
        }
        let v = b"9.0.0\0";
        // SAFETY: versionStr holds ACL_PKG_VERSION_MAX_SIZE bytes (C contract), more than 6.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<c_char>(), out.0, v.len()) };
        Ok(())
    }
}

/// `aclGetRecentErrMsg`: the calling thread's messages since the last call, then cleared; NULL
/// when there are none. The string stays valid until the thread's next call.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclGetRecentErrMsg") {
            injected("aclGetRecentErrMsg", code);
            return std::ptr::null();
        }
        take_recent()
    })
    .unwrap_or(std::ptr::null())
}

/// `aclrtGetLastError`: the calling thread's last error, reset to success
/// (`ACL_RT_THREAD_LEVEL`); 100000 for other levels.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    if level != ACL_RT_THREAD_LEVEL {
        return INVALID_PARAM;
    }
    catch_unwind(|| last_error(true)).unwrap_or(RT_INTERNAL_ERROR)
}

/// `aclrtPeekAtLastError`: like `aclrtGetLastError` without resetting it.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    if level != ACL_RT_THREAD_LEVEL {
        return INVALID_PARAM;
    }
    catch_unwind(|| last_error(false)).unwrap_or(RT_INTERNAL_ERROR)
}

acl! {
    /// `aclrtGetRunMode`: `ACL_HOST` (the program runs on the host, as with a PCIe card).
    fn aclrtGetRunMode(runMode: *mut aclrtRunMode) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(runMode, "runMode") }?.set(ACL_HOST);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Devices and contexts

acl! {
    /// `aclrtSetDevice`: joins (or creates) the device's default context and makes it current.
    fn aclrtSetDevice(deviceId: i32) {
        state::set_device(deviceId)
    }
}

acl! {
    /// `aclrtResetDevice`: drops one reference; the last releases the device's resources.
    fn aclrtResetDevice(deviceId: i32) {
        state::reset_device(deviceId, false)
    }
}

acl! {
    /// `aclrtResetDeviceForce`: releases the device at once, whatever its reference count.
    fn aclrtResetDeviceForce(deviceId: i32) {
        state::reset_device(deviceId, true)
    }
}

acl! {
    /// `aclrtGetDevice`: the current context's device; 107002 without one.
    fn aclrtGetDevice(deviceId: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(deviceId, "deviceId") }?;
        out.set(state::get_device()?);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceCount`: the configured number of devices.
    fn aclrtGetDeviceCount(count: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(count, "count") }?.set(state::device_count());
        Ok(())
    }
}

acl! {
    /// `aclrtSynchronizeDevice`: waits for every stream of the current device.
    fn aclrtSynchronizeDevice() {
        state::synchronize_device(None)
    }
}

acl! {
    /// `aclrtSynchronizeDeviceWithTimeout`: as `aclrtSynchronizeDevice`, up to `timeout` ms
    /// (-1: forever); 507046 on expiry.
    fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) {
        state::synchronize_device(timeout_arg(timeout)?)
    }
}

acl! {
    /// `aclrtDeviceCanAccessPeer`: 1 for two different emulated devices.
    fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(canAccessPeer, "canAccessPeer") }?;
        state::check_device(deviceId)?;
        state::check_device(peerDeviceId)?;
        if deviceId == peerDeviceId {
            return fail(
                RT_PARAM_INVALID,
                format!("deviceId and peerDeviceId are both {deviceId}"),
            );
        }
        out.set(1);
        Ok(())
    }
}

acl! {
    /// `aclrtDeviceEnablePeerAccess`: lets copies between the current device and the peer run.
    fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) {
        if flags != 0 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} must be 0 (reserved)"));
        }
        state::set_peer(peerDeviceId, true)
    }
}

acl! {
    /// `aclrtDeviceDisablePeerAccess`.
    fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) {
        state::set_peer(peerDeviceId, false)
    }
}

acl! {
    /// `aclrtCreateContext`: a new context on the device, made current for the calling thread.
    fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(state::create_context(deviceId)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyContext`: destroys a context made by `aclrtCreateContext` and its streams.
    fn aclrtDestroyContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        state::destroy_context(handle(context))
    }
}

acl! {
    /// `aclrtSetCurrentContext`: makes a context current for the calling thread.
    fn aclrtSetCurrentContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        state::set_current_context(handle(context))
    }
}

acl! {
    /// `aclrtGetCurrentContext`: the calling thread's current context; 107002 without one.
    fn aclrtGetCurrentContext(context: *mut aclrtContext) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(state::current_context()?));
        Ok(())
    }
}

acl! {
    /// `aclrtCtxGetCurrentDefaultStream`: the current context's default stream.
    fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        let ctx = state::current()?;
        out.set(as_ptr(ctx.default_stream.handle));
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Streams

acl! {
    /// `aclrtCreateStream`: a stream of the current context, priority 0, no flags.
    fn aclrtCreateStream(stream: *mut aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        out.set(as_ptr(state::create_stream(0, 0)?));
        Ok(())
    }
}

acl! {
    /// `aclrtCreateStreamWithConfig`: priority 0 (highest) to 7; flags `ACL_STREAM_*`.
    fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        if priority > 7 {
            return fail(RT_PARAM_INVALID, format!("priority {priority} is outside 0..=7"));
        }
        const KNOWN: u32 = 0x3f;
        if flag & !KNOWN != 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("flag {flag:#x} has unknown bits {:#x}", flag & !KNOWN),
            );
        }
        out.set(as_ptr(state::create_stream(priority, flag)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyStream`: waits for the stream's work, then destroys it.
    fn aclrtDestroyStream(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL (the default stream cannot be destroyed)");
        }
        state::destroy_stream(handle(stream), false)
    }
}

acl! {
    /// `aclrtDestroyStreamForce`: discards work not yet started, then destroys the stream.
    fn aclrtDestroyStreamForce(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL (the default stream cannot be destroyed)");
        }
        state::destroy_stream(handle(stream), true)
    }
}

acl! {
    /// `aclrtSynchronizeStream`: waits for every task queued on the stream so far.
    fn aclrtSynchronizeStream(stream: aclrtStream) {
        state::stream(handle(stream))?.synchronize(None, RT_STREAM_SYNC_TIMEOUT)
    }
}

acl! {
    /// `aclrtSynchronizeStreamWithTimeout`: -1 waits forever, < -1 is 107000, expiry 507046.
    fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) {
        let s = state::stream(handle(stream))?;
        s.synchronize(timeout_arg(timeout)?, RT_STREAM_SYNC_TIMEOUT)
    }
}

acl! {
    /// `aclrtStreamQuery`: `ACL_STREAM_STATUS_COMPLETE` (0) or `NOT_READY` (1).
    fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let s = state::stream(handle(stream))?;
        out.set(if s.is_idle() {
            ACL_STREAM_STATUS_COMPLETE
        } else {
            ACL_STREAM_STATUS_NOT_READY
        });
        Ok(())
    }
}

acl! {
    /// `aclrtStreamWaitEvent`: later tasks of the stream wait for the event's latest record.
    fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        let ev = state::event(handle(event))?;
        let s = state::stream(handle(stream))?;
        let target = ev.wait_target();
        s.enqueue(Task::Wait(ev, target))
    }
}

acl! {
    /// `aclrtSetStreamFailureMode`: `ACL_CONTINUE_ON_FAILURE` (0) or `ACL_STOP_ON_FAILURE` (1);
    /// the same mode again succeeds, STOP back to CONTINUE is 207000, another context's stream
    /// 107003. STOP applies to the stream's whole context.
    fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) {
        if mode > 1 {
            return fail(INVALID_PARAM, format!("mode {mode} is not 0 (continue) or 1 (stop)"));
        }
        let s = state::stream(handle(stream))?;
        state::current_ids()?;
        s.set_failure_mode(mode, || state::check_stream_context(&s))
    }
}

acl! {
    /// `aclrtStreamGetPriority`.
    fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(priority, "priority") }?;
        out.set(state::stream(handle(stream))?.priority);
        Ok(())
    }
}

acl! {
    /// `aclrtStreamGetFlags`.
    fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(flags, "flags") }?;
        out.set(state::stream(handle(stream))?.flags);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Events

acl! {
    /// `aclrtCreateEvent`: an event that can be timed.
    fn aclrtCreateEvent(event: *mut aclrtEvent) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        out.set(as_ptr(state::create_event(0, true)?));
        Ok(())
    }
}

acl! {
    /// `aclrtCreateEventWithFlag`: flag non-zero, `ACL_EVENT_*` bits; timed with
    /// `ACL_EVENT_TIME_LINE`.
    fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        event::check_flags(flag)?;
        out.set(as_ptr(state::create_event(flag, flag & ACL_EVENT_TIME_LINE != 0)?));
        Ok(())
    }
}

acl! {
    /// `aclrtCreateEventExWithFlag`: as `aclrtCreateEventWithFlag`.
    fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        event::check_flags(flag)?;
        out.set(as_ptr(state::create_event(flag, flag & ACL_EVENT_TIME_LINE != 0)?));
        Ok(())
    }
}

acl! {
    /// `aclrtRecordEvent`: the event completes (and is timestamped) when the stream reaches it.
    fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        let ev = state::event(handle(event))?;
        let s = state::stream(handle(stream))?;
        let seq = ev.begin_record();
        if let Err(f) = s.enqueue(Task::Record(Arc::clone(&ev), seq)) {
            ev.complete(seq);
            return Err(f);
        }
        Ok(())
    }
}

acl! {
    /// `aclrtResetEvent`: returns the event to "not recorded" when the stream reaches the reset.
    fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        let ev = state::event(handle(event))?;
        let s = state::stream(handle(stream))?;
        s.enqueue(Task::Reset(ev))
    }
}

acl! {
    /// `aclrtQueryEventStatus`: `ACL_EVENT_RECORDED_STATUS_COMPLETE` (1) once the latest record
    /// was reached, else `NOT_READY` (0).
    fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let ev = state::event(handle(event))?;
        out.set(if ev.is_complete() {
            ACL_EVENT_RECORDED_STATUS_COMPLETE
        } else {
            ACL_EVENT_RECORDED_STATUS_NOT_READY
        });
        Ok(())
    }
}

fn sync_event(event: aclrtEvent, timeout: Option<Duration>) -> R {
    if event.is_null() {
        return fail(INVALID_PARAM, "event is NULL");
    }
    let ev = state::event(handle(event))?;
    if !ev.synchronize(timeout) {
        return fail(
            RT_EVENT_SYNC_TIMEOUT,
            format!("event {:#x} was not reached before the timeout", ev.handle),
        );
    }
    Ok(())
}

acl! {
    /// `aclrtSynchronizeEvent`: waits until every record issued so far was reached.
    fn aclrtSynchronizeEvent(event: aclrtEvent) {
        sync_event(event, None)
    }
}

acl! {
    /// `aclrtSynchronizeEventWithTimeout`: -1 waits forever; expiry 507047.
    fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) {
        let t = timeout_arg(timeout)?;
        sync_event(event, t)
    }
}

fn event_ts(ev: &event::Event, name: &str) -> R<u64> {
    if !ev.timing {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{name} was created without ACL_EVENT_TIME_LINE and cannot be timed (flags {:#x})",
                ev.flags
            ),
        );
    }
    ev.timestamp_ns().ok_or_else(|| Fail {
        code: RT_INTERNAL_ERROR,
        msg: format!(
            "{name} {:#x} has not been recorded and reached yet",
            ev.handle
        ),
    })
}

acl! {
    /// `aclrtEventElapsedTime`: milliseconds between two reached records.
    fn aclrtEventElapsedTime(ms: *mut f32, startEvent: aclrtEvent, endEvent: aclrtEvent) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(ms, "ms") }?;
        if startEvent.is_null() {
            return fail(INVALID_PARAM, "startEvent is NULL");
        }
        if endEvent.is_null() {
            return fail(INVALID_PARAM, "endEvent is NULL");
        }
        let a = state::event(handle(startEvent))?;
        let b = state::event(handle(endEvent))?;
        let ta = event_ts(&a, "startEvent")?;
        let tb = event_ts(&b, "endEvent")?;
        out.set(((tb as i128 - ta as i128) as f64 / 1e6) as f32);
        Ok(())
    }
}

acl! {
    /// `aclrtEventGetTimestamp`: microseconds of the monotonic clock when the record was reached.
    fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(timestamp, "timestamp") }?;
        let ev = state::event(handle(event))?;
        let ts = ev.timestamp_ns().ok_or_else(|| Fail {
            code: RT_INTERNAL_ERROR,
            msg: format!("event {:#x} has not been recorded and reached yet", ev.handle),
        })?;
        out.set(ts / 1000);
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyEvent`: does not wait for records in flight.
    fn aclrtDestroyEvent(event: aclrtEvent) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        state::destroy_event(handle(event))
    }
}

// ---------------------------------------------------------------------------------------------
// Memory

fn malloc_common(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    sizing: Sizing,
    api: &str,
    cached: bool,
) -> R {
    // SAFETY: C contract (NULL or valid).
    let out = unsafe { Out::new(dev_ptr, "devPtr") }?;
    if size == 0 {
        return fail(INVALID_PARAM, "size is 0");
    }
    if cached && size as u64 > 1u64 << 50 {
        return fail(RT_PARAM_INVALID, format!("size {size} is above 2^50"));
    }
    let dev = state::current_device_epoch()?;
    let capacity = config::with(|c| c.memory);
    let p = memory::malloc_device(api, dev, size, policy, sizing, capacity)?;
    out.set(p as *mut c_void);
    Ok(())
}

acl! {
    /// `aclrtMalloc`: device memory with a policy (huge pages as documented), 64-byte aligned.
    fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Padded, "aclrtMalloc", false)
    }
}

acl! {
    /// `aclrtMallocAlign32`: as `aclrtMalloc`, size rounded to 32 without the extra 32 bytes.
    fn aclrtMallocAlign32(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Align32, "aclrtMallocAlign32", false)
    }
}

acl! {
    /// `aclrtMallocCached`: as `aclrtMalloc`; sizes above 2^50 are 107000.
    fn aclrtMallocCached(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Padded, "aclrtMallocCached", true)
    }
}

acl! {
    /// `aclrtMallocHost`: pinned host memory.
    fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(hostPtr, "hostPtr") }?;
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        state::current_ids()?;
        out.set(memory::malloc_host(size)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtFree`: frees device memory at once (work in flight is not waited for).
    fn aclrtFree(devPtr: *mut c_void) {
        if devPtr.is_null() {
            return fail(INVALID_PARAM, "devPtr is NULL");
        }
        // A memory call: needs a current context (107002), after the NULL check.
        state::current_ids()?;
        memory::write().free(devPtr as usize, Kind::Device(0))
    }
}

acl! {
    /// `aclrtFreeHost`: frees pinned host memory; a device pointer is 107000.
    fn aclrtFreeHost(hostPtr: *mut c_void) {
        if hostPtr.is_null() {
            return fail(INVALID_PARAM, "hostPtr is NULL");
        }
        // A memory call: needs a current context (107002), after the NULL check.
        state::current_ids()?;
        memory::write().free(hostPtr as usize, Kind::Pinned)
    }
}

acl! {
    /// `aclrtMemset`: fills `count` bytes with the low 8 bits of `value`.
    fn aclrtMemset(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize) {
        // SAFETY: C contract: pageable memory passed here is valid for `count` bytes.
        unsafe { copy::memset(devPtr as usize, maxCount, value, count) }
    }
}

acl! {
    /// `aclrtMemsetAsync`: queued on the stream (pageable memory is set before returning).
    fn aclrtMemsetAsync(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize, stream: aclrtStream) {
        // SAFETY: C contract: the memory stays valid until the task ran.
        unsafe { copy::memset_async(devPtr as usize, maxCount, value, count, handle(stream)) }
    }
}

acl! {
    /// `aclrtMemcpy`: synchronous copy; the direction is taken from the pointers.
    fn aclrtMemcpy(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind) {
        // SAFETY: C contract: pageable ranges are valid for the copy.
        unsafe { copy::memcpy(dst as usize, destMax, src as usize, count, kind) }
    }
}

acl! {
    /// `aclrtMemcpyAsync`: queued copy with the runtime's location/kind rules; from pageable
    /// memory it completes before returning.
    fn aclrtMemcpyAsync(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) {
        // SAFETY: C contract: ranges stay valid until the copy ran.
        unsafe { copy::memcpy_async(dst as usize, destMax, src as usize, count, kind, handle(stream)) }
    }
}

acl! {
    /// `aclrtMemcpy2d`: synchronous pitched copy, H2D or D2H.
    fn aclrtMemcpy2d(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind) {
        let c = Copy2d { dst: dst as usize, dpitch, src: src as usize, spitch, width, height, kind };
        // SAFETY: C contract: pageable ranges are valid for the pitched copy.
        unsafe { copy::memcpy_2d(c) }
    }
}

acl! {
    /// `aclrtMemcpy2dAsync`: queued pitched copy, H2D, D2H or D2D.
    fn aclrtMemcpy2dAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind, stream: aclrtStream) {
        let c = Copy2d { dst: dst as usize, dpitch, src: src as usize, spitch, width, height, kind };
        // SAFETY: C contract: ranges stay valid until the copy ran.
        unsafe { copy::memcpy_2d_async(c, handle(stream)) }
    }
}

/// # Safety
/// `p` is NULL or valid for reading `n` values.
unsafe fn slice<'a, T>(p: *const T, n: usize, name: &str) -> R<&'a [T]> {
    if p.is_null() {
        return fail(INVALID_PARAM, format!("{name} is NULL"));
    }
    // SAFETY: non-NULL and valid for n reads (the caller's contract).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

acl! {
    /// `aclrtMemcpyBatch`: synchronous batch of H2D or D2H copies; `failIndex` is SIZE_MAX on
    /// success or names the copy that failed.
    fn aclrtMemcpyBatch(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize, failIndex: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let fi = unsafe { Out::new(failIndex, "failIndex") }?;
        if sizes.is_null() {
            return fail(INVALID_PARAM, "sizes is NULL");
        }
        if numBatches == 0 {
            return fail(INVALID_PARAM, "numBatches is 0");
        }
        if numAttrs == 0 {
            return fail(INVALID_PARAM, "numAttrs is 0");
        }
        if numAttrs > numBatches {
            return fail(INVALID_PARAM, format!("numAttrs {numAttrs} is larger than numBatches {numBatches}"));
        }
        // SAFETY: each array is NULL or holds numBatches (numAttrs) elements (C contract).
        let (d, m, s, z, a, ai) = unsafe {
            (
                slice(dsts.cast::<usize>(), numBatches, "dsts")?,
                slice(destMaxs, numBatches, "destMaxs")?,
                slice(srcs.cast::<usize>(), numBatches, "srcs")?,
                slice(sizes, numBatches, "sizes")?,
                slice(attrs, numAttrs, "attrs")?,
                slice(attrsIndexes, numAttrs, "attrsIndexes")?,
            )
        };
        let attrs: Vec<BatchAttr> = a
            .iter()
            .map(|x| BatchAttr {
                dst_type: x.dstLoc.type_,
                src_type: x.srcLoc.type_,
                rsv_zero: x.rsv.iter().all(|b| *b == 0),
            })
            .collect();
        // SAFETY: C contract: pageable ranges are valid for the copies.
        match unsafe { copy::memcpy_batch(d, m, s, z, &attrs, ai) } {
            Ok(()) => {
                fi.set(usize::MAX);
                Ok(())
            }
            Err((i, f)) => {
                fi.set(i.unwrap_or(usize::MAX));
                Err(f)
            }
        }
    }
}

acl! {
    /// `aclrtGetMemInfo`: free and total bytes of the current device (DDR attributes: 0, 0).
    fn aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let (f, t) = unsafe { (Out::new(free, "free")?, Out::new(total, "total")?) };
        if attr > ACL_MEM_P2P_HUGE1G {
            return fail(RT_INVALID_MEMORY_TYPE, format!("attr {attr} is not an aclrtMemAttr (0-17)"));
        }
        let (dev, _) = state::current_ids()?;
        let ddr = matches!(attr, ACL_DDR_MEM | ACL_DDR_MEM_HUGE | ACL_DDR_MEM_NORMAL | ACL_DDR_MEM_P2P_HUGE | ACL_DDR_MEM_P2P_NORMAL);
        if ddr {
            f.set(0);
            t.set(0);
            return Ok(());
        }
        let cap = config::with(|c| c.memory);
        let used = memory::read().used(dev);
        f.set(cap.saturating_sub(used) as usize);
        t.set(cap as usize);
        Ok(())
    }
}

acl! {
    /// `aclrtPointerGetAttributes`: location (HOST 0 for pinned/registered, DEVICE 1,
    /// UNREGISTERED 2) and page size.
    fn aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(attributes, "attributes") }?;
        let (loc, page) = memory::read().attributes(ptr as usize)?;
        let (type_, id) = match loc {
            Loc::Host => (ACL_MEM_LOCATION_TYPE_HOST, 0),
            Loc::Device(d) => (ACL_MEM_LOCATION_TYPE_DEVICE, d as u32),
            Loc::Unreg => (ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0),
        };
        out.set(aclrtPtrAttributes {
            location: aclrtMemLocation { id, type_ },
            pageSize: page,
            rsv: [0; 4],
        });
        Ok(())
    }
}

acl! {
    /// `aclrtHostRegister`: makes a host range count as pinned memory; `devPtr` receives the
    /// same address (host and device share the address space in the emulator).
    fn aclrtHostRegister(ptr: *mut c_void, size: u64, type_: aclrtHostRegisterType, devPtr: *mut *mut c_void) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        const KNOWN: u32 = ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY;
        if type_ & !KNOWN != 0 {
            return fail(
                RT_FEATURE_NOT_SUPPORT,
                format!("type {type_:#x} has unsupported bits {:#x}", type_ & !KNOWN),
            );
        }
        state::current_ids()?;
        let size = usize::try_from(size).map_err(|_| Fail {
            code: INVALID_PARAM,
            msg: format!("size {size} does not fit the address space"),
        })?;
        memory::write().register(ptr as usize, size)?;
        out.set(ptr);
        Ok(())
    }
}

acl! {
    /// `aclrtHostRegisterV2`: registers a host range with `ACL_HOST_REG_*` flags; a flag word of
    /// 0 or with unknown bits is 107000, an already registered range 507910.
    fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        const KNOWN: u32 = ACL_HOST_REG_MAPPED
            | ACL_HOST_REG_IOMEMORY
            | ACL_HOST_REG_READONLY
            | ACL_HOST_REG_PINNED;
        if flag == 0 {
            return fail(RT_PARAM_INVALID, "flag is 0 (at least one ACL_HOST_REG_* bit is needed)");
        }
        if flag & !KNOWN != 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("flag {flag:#x} has unknown bits {:#x}", flag & !KNOWN),
            );
        }
        state::current_ids()?;
        let size = usize::try_from(size).map_err(|_| Fail {
            code: INVALID_PARAM,
            msg: format!("size {size} does not fit the address space"),
        })?;
        memory::write().register(ptr as usize, size)
    }
}

acl! {
    /// `aclrtHostGetDevicePointer`: the device address of registered host memory (the same
    /// address: host and device share the address space in the emulator); 507911 when the
    /// pointer is not in a registered range.
    fn aclrtHostGetDevicePointer(pHost: *mut c_void, pDevice: *mut *mut c_void, flag: u32) {
        if pHost.is_null() {
            return fail(INVALID_PARAM, "pHost is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(pDevice, "pDevice") }?;
        if flag != 0 {
            return fail(RT_PARAM_INVALID, format!("flag {flag:#x} must be 0 (reserved)"));
        }
        if !memory::read().is_registered(pHost as usize) {
            return fail(
                HOST_MEMORY_NOT_REGISTERED,
                format!("pHost {pHost:p} is not in a registered host range"),
            );
        }
        out.set(pHost);
        Ok(())
    }
}

acl! {
    /// `aclrtHostUnregister`: 507911 for a pointer that is not a registered range's start.
    fn aclrtHostUnregister(ptr: *mut c_void) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        memory::write().unregister(ptr as usize)
    }
}

// ---------------------------------------------------------------------------------------------
// Host functions and callbacks

acl! {
    /// `aclrtLaunchHostFunc`: runs `fn_(args)` on the stream's worker thread, in stream order.
    fn aclrtLaunchHostFunc(stream: aclrtStream, fn_: aclrtHostFunc, args: *mut c_void) {
        let Some(f) = fn_ else {
            return fail(INVALID_PARAM, "fn is NULL");
        };
        let s = state::stream(handle(stream))?;
        state::check_stream_context(&s)?;
        s.enqueue(Task::HostFunc(f, args as usize))
    }
}

acl! {
    /// `aclrtSubscribeReport`: routes the stream's callbacks to thread `threadId` (a
    /// `pthread_t`), which calls `aclrtProcessReport`.
    fn aclrtSubscribeReport(threadId: u64, stream: aclrtStream) {
        let s = state::stream(handle(stream))?;
        callback::subscribe(threadId, s.handle)
    }
}

acl! {
    /// `aclrtLaunchCallback`: queues a callback for the subscribed thread; with
    /// `ACL_CALLBACK_BLOCK` later tasks wait until it ran.
    fn aclrtLaunchCallback(fn_: aclrtCallback, userData: *mut c_void, blockType: aclrtCallbackBlockType, stream: aclrtStream) {
        let Some(f) = fn_ else {
            return fail(INVALID_PARAM, "fn is NULL");
        };
        if blockType > ACL_CALLBACK_BLOCK {
            return fail(INVALID_PARAM, format!("blockType {blockType} is not 0 or 1"));
        }
        let s = state::stream(handle(stream))?;
        let queue = callback::queue_for(s.handle)?;
        s.enqueue(Task::Callback {
            f,
            arg: userData as usize,
            block: blockType == ACL_CALLBACK_BLOCK,
            queue,
            stream: s.handle,
        })
    }
}

acl! {
    /// `aclrtProcessReport`: runs one callback for the calling thread, waiting up to `timeout`
    /// ms (-1: forever); 107012 when the thread has no subscription, 507012 on timeout.
    fn aclrtProcessReport(timeout: i32) {
        callback::process(timeout)
    }
}

acl! {
    /// `aclrtUnSubscribeReport`.
    fn aclrtUnSubscribeReport(threadId: u64, stream: aclrtStream) {
        let s = state::stream(handle(stream))?;
        callback::unsubscribe(threadId, s.handle)
    }
}
