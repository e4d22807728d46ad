//! `acl_prof.h`: the profiling session, its configurations, stamps, marks, ranges and step
//! timestamps (the `profiling` concept). The subscription family (`aclprofModelSubscribe`, the
//! `aclprofGetOp*` parsers) and the tensor-info ranges (`aclprofRangePushEx`) stay 207000.

use super::*;
use crate::profiling::{self, stamps};

/// Runs a call that returns a handle: NULL, with the failure recorded for
/// `aclGetRecentErrMsg`, when it fails or panics.
fn handle_or_null<T>(api: &'static str, f: impl FnOnce() -> R<usize>) -> *mut T {
    let run = move || match f() {
        Ok(h) => h as *mut T,
        Err(e) => {
            record(api, e);
            std::ptr::null_mut()
        }
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        panicked(api, p.as_ref());
        std::ptr::null_mut()
    })
}

/// Runs a call that returns nothing (a panic is recorded, never unwound into C).
fn quietly(api: &'static str, f: impl FnOnce()) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
        panicked(api, p.as_ref());
    }
}

/// `len` bytes at `p`, up to the first NUL (100000 for NULL).
///
/// # Safety
/// `p` is NULL or valid for `len` reads.
unsafe fn bytes<'a>(p: *const c_char, len: usize, what: &str) -> R<&'a [u8]> {
    if p.is_null() {
        return fail(INVALID_PARAM, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    Ok(b.iter().position(|&c| c == 0).map_or(b, |n| &b[..n]))
}

acl! {
    /// `aclprofInit`: the output directory (made when missing; 100003 when it cannot be); a
    /// second call before `aclprofFinalize` is 100002.
    fn aclprofInit(profilerResultPath: *const c_char, length: usize) {
        // SAFETY: C contract: NULL or valid for `length` reads.
        let path = unsafe { bytes(profilerResultPath, length, "profilerResultPath") }?;
        profiling::init(path)
    }
}

acl! {
    /// `aclprofFinalize`: ends the session (100043 without `aclprofInit`); a started session is
    /// stopped and its trace written.
    fn aclprofFinalize() {
        profiling::finalize()
    }
}

/// `aclprofCreateConfig`: a configuration, or NULL when the devices or flags are refused (a
/// device list NULL with a count, a device that does not exist or is named twice, no device
/// without `ACL_PROF_MSPROFTX`, AI-core events given).
///
/// # Safety
/// `deviceIdList` is NULL or valid for `deviceNums` reads.
pub unsafe extern "C" fn aclprofCreateConfig(
    deviceIdList: *mut u32,
    deviceNums: u32,
    aicoreMetrics: aclprofAicoreMetrics,
    aicoreEvents: *const aclprofAicoreEvents,
    dataTypeConfig: u64,
) -> *mut aclprofConfig {
    handle_or_null("aclprofCreateConfig", || {
        if !aicoreEvents.is_null() {
            return fail(INVALID_PARAM, "aicoreEvents must be NULL");
        }
        let devices = match (deviceIdList.is_null(), deviceNums) {
            (_, 0) => None,
            (true, n) => {
                return fail(
                    INVALID_PARAM,
                    format!("deviceIdList is NULL with deviceNums {n}"),
                );
            }
            // SAFETY: C contract: valid for deviceNums reads.
            (false, n) => Some(unsafe { std::slice::from_raw_parts(deviceIdList, n as usize) }),
        };
        profiling::create_config(
            devices,
            aicoreMetrics,
            dataTypeConfig,
            crate::device::count(),
        )
    })
}

acl! {
    /// `aclprofDestroyConfig`: 100000 for NULL or a configuration that is not live.
    fn aclprofDestroyConfig(profilerConfig: *const aclprofConfig) {
        if profilerConfig.is_null() {
            return fail(INVALID_PARAM, "profilerConfig is NULL");
        }
        profiling::destroy_config(profilerConfig as usize)
    }
}

acl! {
    /// `aclprofSetConfig`: one setting before `aclprofStart` (100000 for a type or value out of
    /// its documented range; 200006 for `ACL_PROF_OPTYPE`).
    fn aclprofSetConfig(configType: aclprofConfigType, config: *const c_char, configLength: usize) {
        // SAFETY: C contract: NULL or valid for configLength reads.
        let value = unsafe { bytes(config, configLength, "config") }?;
        profiling::set_config(configType, value)
    }
}

acl! {
    /// `aclprofStart`: recording begins (NULL: the built-in configuration); a second start is
    /// 100042.
    fn aclprofStart(profilerConfig: *const aclprofConfig) {
        profiling::start(profilerConfig as usize)
    }
}

acl! {
    /// `aclprofStop`: with the configuration of `aclprofStart`; recording ends and the trace is
    /// written to the output directory (100043 when not started).
    fn aclprofStop(profilerConfig: *const aclprofConfig) {
        profiling::stop(profilerConfig as usize)
    }
}

/// `aclprofCreateStamp`: a stamp (NULL only if the emulator fails).
pub extern "C" fn aclprofCreateStamp() -> *mut c_void {
    handle_or_null("aclprofCreateStamp", || Ok(stamps::create()))
}

/// `aclprofDestroyStamp` (NULL and unknown stamps are ignored).
pub extern "C" fn aclprofDestroyStamp(stamp: *mut c_void) {
    quietly("aclprofDestroyStamp", || stamps::destroy(stamp as usize));
}

acl! {
    /// `aclprofSetStampTraceMessage`: the stamp's message (`msgLen` bytes).
    fn aclprofSetStampTraceMessage(stamp: *mut c_void, msg: *const c_char, msgLen: u32) {
        if stamp.is_null() {
            return fail(INVALID_PARAM, "stamp is NULL");
        }
        // SAFETY: C contract: NULL or valid for msgLen reads.
        let m = unsafe { bytes(msg, msgLen as usize, "msg") }?;
        stamps::set_message(stamp as usize, m)
    }
}

acl! {
    /// `aclprofMark`: an instant with the stamp's message (100043 outside start … stop).
    fn aclprofMark(stamp: *mut c_void) {
        if stamp.is_null() {
            return fail(INVALID_PARAM, "stamp is NULL");
        }
        stamps::mark(stamp as usize)
    }
}

acl! {
    /// `aclprofMarkEx`: an instant on the host and a marker task on the stream (NULL: the
    /// current context's default stream, if any).
    fn aclprofMarkEx(msg: *const c_char, msgLen: usize, stream: aclrtStream) {
        // SAFETY: C contract: NULL or valid for msgLen reads.
        let m = unsafe { bytes(msg, msgLen, "msg") }?;
        let s = if stream.is_null() {
            // The current context's default stream; only the host's instant without one.
            crate::stream::get(0).ok()
        } else {
            Some(crate::stream::get(stream as usize)?)
        };
        stamps::mark_ex(m, s)
    }
}

acl! {
    /// `aclprofPush`: a range opens on the calling thread.
    fn aclprofPush(stamp: *mut c_void) {
        if stamp.is_null() {
            return fail(INVALID_PARAM, "stamp is NULL");
        }
        stamps::push(stamp as usize)
    }
}

acl! {
    /// `aclprofPop`: the calling thread's innermost pushed range closes.
    fn aclprofPop() {
        stamps::pop()
    }
}

acl! {
    /// `aclprofRangeStart`: a range opens; its id into `rangeId`.
    fn aclprofRangeStart(stamp: *mut c_void, rangeId: *mut u32) {
        if stamp.is_null() {
            return fail(INVALID_PARAM, "stamp is NULL");
        }
        // SAFETY: C contract: NULL or valid for one write.
        let out = unsafe { Out::new(rangeId, "rangeId") }?;
        out.set(stamps::range_start(stamp as usize)?);
        Ok(())
    }
}

acl! {
    /// `aclprofRangeStop`: the range closes (100000 for an id that is not open).
    fn aclprofRangeStop(rangeId: u32) {
        stamps::range_stop(rangeId)
    }
}

/// `aclprofCreateStepInfo`: a step info (NULL only if the emulator fails).
pub extern "C" fn aclprofCreateStepInfo() -> *mut aclprofStepInfo {
    handle_or_null("aclprofCreateStepInfo", || Ok(stamps::create_step()))
}

/// `aclprofDestroyStepInfo` (NULL and unknown step infos are ignored).
pub extern "C" fn aclprofDestroyStepInfo(stepinfo: *mut aclprofStepInfo) {
    quietly("aclprofDestroyStepInfo", || {
        stamps::destroy_step(stepinfo as usize)
    });
}

acl! {
    /// `aclprofGetStepTimestamp`: an instant `step start` / `step end`, each once per step info.
    fn aclprofGetStepTimestamp(stepInfo: *mut aclprofStepInfo, tag: aclprofStepTag, stream: aclrtStream) {
        if stepInfo.is_null() {
            return fail(INVALID_PARAM, "stepInfo is NULL");
        }
        if !stream.is_null() {
            crate::stream::get(stream as usize)?;
        }
        stamps::step_timestamp(stepInfo as usize, tag)
    }
}

/// `aclprofStr2Id`: a 64-bit hash of the string (FNV-1a; `UINT64_MAX` for NULL).
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
pub unsafe extern "C" fn aclprofStr2Id(message: *const c_char) -> u64 {
    if message.is_null() {
        record(
            "aclprofStr2Id",
            Fail {
                code: INVALID_PARAM,
                msg: "message is NULL".into(),
            },
        );
        return u64::MAX;
    }
    // SAFETY: C contract: a NUL-terminated string.
    let b = unsafe { CStr::from_ptr(message) }.to_bytes();
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| {
        (h ^ u64::from(c)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
