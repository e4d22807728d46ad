//! The safe types' calls into the runtime, grouped by API family (`result::stream::create`,
//! `result::memory::malloc`, ...), on top of the checked layer [`crate::raw`]: each function
//! names its arguments, fixes the ones the safe types never vary, and returns out-parameters as
//! values, read only after the status check. The status check and the error (function name,
//! code, recent message) are `raw`'s, and the copy path is `#[inline(always)]` down to the
//! table call.
//!
//! Functions whose only arguments are plain values are safe; functions that take a handle or a
//! pointer are `unsafe fn`: the caller proves the handle is live and the pointer valid.
#![allow(clippy::missing_safety_doc)]

use crate::error::Result;
use crate::raw;
use ascendcl_sys::{self as sys, AclError};
use std::ffi::{CStr, c_void};

/// A C out-parameter type: plain data whose zero value is valid, so the slot can be initialised
/// before the call and read after it without `unsafe`.
pub(crate) trait OutParam: Copy {
    /// The value the slot holds before the call.
    const ZERO: Self;
}

macro_rules! out_param {
    ($($t:ty = $zero:expr),* $(,)?) => { $(impl OutParam for $t { const ZERO: Self = $zero; })* };
}
out_param!(
    u32 = 0,
    i32 = 0,
    u64 = 0,
    usize = 0,
    f32 = 0.0,
    *mut c_void = std::ptr::null_mut(),
    sys::aclrtPtrAttributes = sys::aclrtPtrAttributes {
        location: sys::aclrtMemLocation { id: 0, type_: 0 },
        pageSize: 0,
        rsv: [0; 4],
    },
);

/// Calls `call` (a checked [`raw`] function) with a pointer to an out-parameter and returns the
/// value the runtime wrote, read only after the status check.
#[inline]
fn out<T: OutParam>(call: impl FnOnce(*mut T) -> Result<()>) -> Result<T> {
    let mut slot = T::ZERO;
    call(&mut slot)?;
    Ok(slot)
}

/// Diagnostics: `aclGetRecentErrMsg`, `aclrtGetSocName`, `aclrtGetLastError`, `aclrtGetVersion`.
pub(crate) mod diag {
    use super::*;

    /// `aclGetRecentErrMsg`, copied out; `None` when empty or when no backend is installed.
    pub(crate) fn recent_err_msg() -> Option<String> {
        // `raw` panics without a backend; an error built before one was installed has no message.
        sys::try_api()?;
        let p = raw::aclGetRecentErrMsg();
        // A backend without aclGetRecentErrMsg answers NULL through a stub that records the
        // symbol as missing: drop that record so it is not blamed on a later failure.
        let _ = sys::take_missing_symbol();
        if p.is_null() {
            return None;
        }
        // SAFETY: non-NULL, so a NUL-terminated string owned by the runtime's thread-local
        // storage, valid until the next call on this thread; copied before any other call.
        let s = unsafe { CStr::from_ptr(p) }
            .to_string_lossy()
            .trim()
            .to_string();
        (!s.is_empty()).then_some(s)
    }

    /// `aclrtGetSocName`. A NULL answer is a failure: its code is the thread's last error
    /// (`aclrtGetLastError`, which also clears it; `ACL_ERROR_FAILURE` when none was set), its
    /// message the recent-error text.
    pub(crate) fn soc_name() -> Result<String> {
        let p = raw::aclrtGetSocName();
        if p.is_null() {
            if let Some(symbol) = sys::take_missing_symbol() {
                return Err(crate::error::Error::MissingSymbol {
                    api: "aclrtGetSocName",
                    symbol,
                });
            }
            let code = match last_error() {
                AclError::SUCCESS => AclError::FAILURE,
                code => code,
            };
            return Err(crate::error::failure("aclrtGetSocName", code.code()));
        }
        // SAFETY: non-NULL, so a static NUL-terminated string owned by the runtime.
        Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// `aclrtGetLastError(ACL_RT_THREAD_LEVEL)`: the calling thread's last error, which the call
    /// resets; `SUCCESS` when none (or when the backend lacks the function).
    pub(crate) fn last_error() -> AclError {
        let code = raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL);
        if code == AclError::FEATURE_NOT_SUPPORT && sys::take_missing_symbol().is_some() {
            return AclError::SUCCESS;
        }
        code
    }

    /// `aclrtGetVersion`.
    pub(crate) fn version() -> Result<(i32, i32, i32)> {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: three valid out-pointers to local integers.
        unsafe { raw::aclrtGetVersion(&mut a, &mut b, &mut c) }?;
        Ok((a, b, c))
    }
}

/// `aclInit`, `aclFinalize`.
pub(crate) mod init {
    use super::*;

    /// `aclInit(NULL)`; `ACL_ERROR_REPEAT_INITIALIZE` is returned as an error for the caller to
    /// judge.
    pub(crate) fn init() -> Result<()> {
        // SAFETY: a NULL configuration path means "no configuration".
        unsafe { raw::aclInit(std::ptr::null()) }
    }

    /// `aclFinalize`.
    pub(crate) fn finalize() -> Result<()> {
        // SAFETY: no arguments; `Runtime` calls it only when no safe handle is left.
        unsafe { raw::aclFinalize() }
    }
}

/// Devices: `aclrtSetDevice`, `aclrtResetDevice[Force]`, counts, peer access, memory info.
pub(crate) mod device {
    use super::*;

    pub(crate) fn count() -> Result<u32> {
        // SAFETY: a valid out-pointer.
        out(|n| unsafe { raw::aclrtGetDeviceCount(n) })
    }

    pub(crate) fn set(id: i32) -> Result<()> {
        // SAFETY: a plain value, validated by the runtime; the caller keeps the current context
        // in step (`current`).
        unsafe { raw::aclrtSetDevice(id) }
    }

    pub(crate) fn reset(id: i32) -> Result<()> {
        // SAFETY: a plain value; called when the device's last handle goes.
        unsafe { raw::aclrtResetDevice(id) }
    }

    pub(crate) fn reset_force(id: i32) -> Result<()> {
        // SAFETY: a plain value; called only with the device's only handle.
        unsafe { raw::aclrtResetDeviceForce(id) }
    }

    pub(crate) fn synchronize() -> Result<()> {
        raw::aclrtSynchronizeDevice()
    }

    pub(crate) fn can_access_peer(id: i32, peer: i32) -> Result<bool> {
        // SAFETY: a valid out-pointer and plain values.
        let can = out(|can| unsafe { raw::aclrtDeviceCanAccessPeer(can, id, peer) })?;
        Ok(can != 0)
    }

    pub(crate) fn enable_peer_access(peer: i32) -> Result<()> {
        // Flags must be 0.
        raw::aclrtDeviceEnablePeerAccess(peer, 0)
    }

    pub(crate) fn disable_peer_access(peer: i32) -> Result<()> {
        // SAFETY: a plain value; called when the peer-access token goes.
        unsafe { raw::aclrtDeviceDisablePeerAccess(peer) }
    }

    pub(crate) fn mem_info(attr: sys::aclrtMemAttr) -> Result<(usize, usize)> {
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers to locals; the runtime validates attr.
        unsafe { raw::aclrtGetMemInfo(attr, &mut free, &mut total) }?;
        Ok((free, total))
    }
}

/// Contexts: create, destroy, get and set the current one.
pub(crate) mod context {
    use super::*;

    pub(crate) fn create(device: i32) -> Result<sys::aclrtContext> {
        // SAFETY: a valid out-pointer.
        out(|c| unsafe { raw::aclrtCreateContext(c, device) })
    }

    /// # Safety
    /// `ctx` is a live context created by `create` and not the default context.
    pub(crate) unsafe fn destroy(ctx: sys::aclrtContext) -> Result<()> {
        // SAFETY: the caller guarantees a live, owned context.
        unsafe { raw::aclrtDestroyContext(ctx) }
    }

    pub(crate) fn current() -> Result<sys::aclrtContext> {
        // SAFETY: a valid out-pointer.
        out(|c| unsafe { raw::aclrtGetCurrentContext(c) })
    }

    /// # Safety
    /// `ctx` is a live context (or NULL where the runtime allows it).
    pub(crate) unsafe fn set_current(ctx: sys::aclrtContext) -> Result<()> {
        // SAFETY: the caller guarantees the handle.
        unsafe { raw::aclrtSetCurrentContext(ctx) }
    }
}

/// Streams.
pub(crate) mod stream {
    use super::*;

    pub(crate) fn create(priority: u32, flags: u32) -> Result<sys::aclrtStream> {
        // SAFETY: a valid out-pointer and plain values.
        out(|s| unsafe { raw::aclrtCreateStreamWithConfig(s, priority, flags) })
    }

    /// # Safety
    /// `s` is a live stream owned by the caller; it is invalid afterwards.
    pub(crate) unsafe fn destroy(s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtDestroyStream(s) }
    }

    /// # Safety
    /// As [`destroy`].
    pub(crate) unsafe fn destroy_force(s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtDestroyStreamForce(s) }
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn synchronize(s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSynchronizeStream(s) }
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn synchronize_timeout(s: sys::aclrtStream, ms: i32) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSynchronizeStreamWithTimeout(s, ms) }
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn query(s: sys::aclrtStream) -> Result<sys::aclrtStreamStatus> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|st| unsafe { raw::aclrtStreamQuery(s, st) })
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn priority(s: sys::aclrtStream) -> Result<u32> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|p| unsafe { raw::aclrtStreamGetPriority(s, p) })
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn flags(s: sys::aclrtStream) -> Result<u32> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|f| unsafe { raw::aclrtStreamGetFlags(s, f) })
    }

    /// # Safety
    /// `s` is a live stream.
    pub(crate) unsafe fn set_failure_mode(s: sys::aclrtStream, mode: u64) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSetStreamFailureMode(s, mode) }
    }

    /// # Safety
    /// `s` and `e` are live.
    pub(crate) unsafe fn wait_event(s: sys::aclrtStream, e: sys::aclrtEvent) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtStreamWaitEvent(s, e) }
    }

    /// # Safety
    /// `s` is live; `f(arg)` is sound to call once on a runtime thread.
    pub(crate) unsafe fn launch_host_func(
        s: sys::aclrtStream,
        f: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtLaunchHostFunc(s, Some(f), arg) }
    }
}

/// Events.
pub(crate) mod event {
    use super::*;

    pub(crate) fn create(flags: Option<u32>) -> Result<sys::aclrtEvent> {
        match flags {
            // SAFETY: a valid out-pointer.
            None => out(|e| unsafe { raw::aclrtCreateEvent(e) }),
            // SAFETY: a valid out-pointer; the runtime validates the flags.
            Some(f) => out(|e| unsafe { raw::aclrtCreateEventWithFlag(e, f) }),
        }
    }

    /// # Safety
    /// `e` is a live event owned by the caller; invalid afterwards.
    pub(crate) unsafe fn destroy(e: sys::aclrtEvent) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtDestroyEvent(e) }
    }

    /// # Safety
    /// `e` and `s` are live.
    pub(crate) unsafe fn record(e: sys::aclrtEvent, s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtRecordEvent(e, s) }
    }

    /// # Safety
    /// `e` and `s` are live.
    pub(crate) unsafe fn reset(e: sys::aclrtEvent, s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtResetEvent(e, s) }
    }

    /// # Safety
    /// `e` is live.
    pub(crate) unsafe fn query_status(e: sys::aclrtEvent) -> Result<sys::aclrtEventRecordedStatus> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|st| unsafe { raw::aclrtQueryEventStatus(e, st) })
    }

    /// # Safety
    /// `e` is live.
    pub(crate) unsafe fn synchronize(e: sys::aclrtEvent) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSynchronizeEvent(e) }
    }

    /// # Safety
    /// `e` is live.
    pub(crate) unsafe fn synchronize_timeout(e: sys::aclrtEvent, ms: i32) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSynchronizeEventWithTimeout(e, ms) }
    }

    /// # Safety
    /// Both events are live.
    pub(crate) unsafe fn elapsed_ms(start: sys::aclrtEvent, end: sys::aclrtEvent) -> Result<f32> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|ms| unsafe { raw::aclrtEventElapsedTime(ms, start, end) })
    }
}

/// Memory: allocation, free, registration, memset, copies.
pub(crate) mod memory {
    use super::*;

    pub(crate) fn malloc(size: usize, policy: u32) -> Result<*mut c_void> {
        // SAFETY: a valid out-pointer; the runtime validates size and policy.
        out(|p| unsafe { raw::aclrtMalloc(p, size, policy) })
    }

    /// `aclrtMallocAlign32`: no trailing padding, size rounded up to 32 bytes.
    pub(crate) fn malloc_align32(size: usize, policy: u32) -> Result<*mut c_void> {
        // SAFETY: a valid out-pointer; the runtime validates size and policy.
        out(|p| unsafe { raw::aclrtMallocAlign32(p, size, policy) })
    }

    /// `aclrtMallocCached`: cacheable device memory.
    pub(crate) fn malloc_cached(size: usize, policy: u32) -> Result<*mut c_void> {
        // SAFETY: a valid out-pointer; the runtime validates size and policy.
        out(|p| unsafe { raw::aclrtMallocCached(p, size, policy) })
    }

    /// Calls `f` with the configuration of the `...WithCfg` functions for `attrs`: NULL when
    /// there are none, else a struct pointing into `attrs` that lives for the call.
    fn with_malloc_config<R>(
        attrs: &mut [sys::aclrtMallocAttribute],
        f: impl FnOnce(*mut sys::aclrtMallocConfig) -> R,
    ) -> R {
        let mut cfg = (!attrs.is_empty()).then_some(sys::aclrtMallocConfig {
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len(),
        });
        f(cfg.as_mut().map_or(std::ptr::null_mut(), |c| c as *mut _))
    }

    /// `aclrtMallocWithCfg`.
    pub(crate) fn malloc_with_cfg(
        size: usize,
        policy: u32,
        attrs: &mut [sys::aclrtMallocAttribute],
    ) -> Result<*mut c_void> {
        with_malloc_config(attrs, |cfg| {
            // SAFETY: a valid out-pointer; NULL or a configuration whose attributes live for
            // the call; the runtime validates size and policy.
            out(|p| unsafe { raw::aclrtMallocWithCfg(p, size, policy, cfg) })
        })
    }

    /// `aclrtMallocForTaskScheduler`.
    pub(crate) fn malloc_for_task_scheduler(
        size: usize,
        policy: u32,
        attrs: &mut [sys::aclrtMallocAttribute],
    ) -> Result<*mut c_void> {
        with_malloc_config(attrs, |cfg| {
            // SAFETY: as for `malloc_with_cfg`.
            out(|p| unsafe { raw::aclrtMallocForTaskScheduler(p, size, policy, cfg) })
        })
    }

    /// `aclrtMallocHostWithCfg`.
    pub(crate) fn malloc_host_with_cfg(
        size: usize,
        attrs: &mut [sys::aclrtMallocAttribute],
    ) -> Result<*mut c_void> {
        // `usize` always fits the runtime's `uint64_t` size.
        let size = size as u64;
        with_malloc_config(attrs, |cfg| {
            // SAFETY: as for `malloc_with_cfg`.
            out(|p| unsafe { raw::aclrtMallocHostWithCfg(p, size, cfg) })
        })
    }

    /// # Safety
    /// `p` was returned by `malloc` and is not used afterwards.
    pub(crate) unsafe fn free(p: *mut c_void) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtFree(p) }
    }

    pub(crate) fn malloc_host(size: usize) -> Result<*mut c_void> {
        // SAFETY: a valid out-pointer.
        out(|p| unsafe { raw::aclrtMallocHost(p, size) })
    }

    /// # Safety
    /// `p` was returned by `malloc_host` and is not used afterwards.
    pub(crate) unsafe fn free_host(p: *mut c_void) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtFreeHost(p) }
    }

    /// # Safety
    /// `p..p+size` is host memory that stays allocated until `host_unregister`.
    pub(crate) unsafe fn host_register(
        p: *mut c_void,
        size: u64,
        ty: sys::aclrtHostRegisterType,
    ) -> Result<*mut c_void> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|dev| unsafe { raw::aclrtHostRegister(p, size, ty, dev) })
    }

    /// # Safety
    /// As [`host_register`].
    pub(crate) unsafe fn host_register_v2(p: *mut c_void, size: u64, flags: u32) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtHostRegisterV2(p, size, flags) }
    }

    /// # Safety
    /// `p` is registered host memory.
    pub(crate) unsafe fn host_device_pointer(p: *mut c_void) -> Result<*mut c_void> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|dev| unsafe { raw::aclrtHostGetDevicePointer(p, dev, 0) })
    }

    /// # Safety
    /// `p` was registered with `host_register`.
    pub(crate) unsafe fn host_unregister(p: *mut c_void) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtHostUnregister(p) }
    }

    /// # Safety
    /// `p` is a valid pointer (any memory).
    pub(crate) unsafe fn pointer_attributes(p: *const c_void) -> Result<sys::aclrtPtrAttributes> {
        // SAFETY: the caller's guarantee; a valid out-pointer.
        out(|a| unsafe { raw::aclrtPointerGetAttributes(p, a) })
    }

    /// # Safety
    /// `dst..dst+max` is device memory the caller may write; `count <= max`.
    #[inline]
    pub(crate) unsafe fn memset(
        dst: *mut c_void,
        max: usize,
        value: u8,
        count: usize,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemset(dst, max, i32::from(value), count) }
    }

    /// # Safety
    /// As [`memset`], and `s` is live; the memory stays valid until the stream's work is done.
    pub(crate) unsafe fn memset_async(
        dst: *mut c_void,
        max: usize,
        value: u8,
        count: usize,
        s: sys::aclrtStream,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemsetAsync(dst, max, i32::from(value), count, s) }
    }

    /// # Safety
    /// `dst..dst+max` writable, `src..src+count` readable, each in the memory kind the runtime
    /// expects for `kind`.
    #[inline(always)]
    pub(crate) unsafe fn memcpy(
        dst: *mut c_void,
        max: usize,
        src: *const c_void,
        count: usize,
        kind: sys::aclrtMemcpyKind,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemcpy(dst, max, src, count, kind) }
    }

    /// # Safety
    /// As [`memcpy`], `s` is live, and both ranges stay valid and untouched by the host until the
    /// stream's work is done.
    #[inline]
    pub(crate) unsafe fn memcpy_async(
        dst: *mut c_void,
        max: usize,
        src: *const c_void,
        count: usize,
        kind: sys::aclrtMemcpyKind,
        s: sys::aclrtStream,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemcpyAsync(dst, max, src, count, kind, s) }
    }

    /// # Safety
    /// The pitched regions are valid for `height` rows of `width` bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn memcpy_2d(
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: sys::aclrtMemcpyKind,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemcpy2d(dst, dpitch, src, spitch, width, height, kind) }
    }

    /// # Safety
    /// As [`memcpy_2d`], `s` is live and the regions stay valid until the stream's work is done.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn memcpy_2d_async(
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: sys::aclrtMemcpyKind,
        s: sys::aclrtStream,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtMemcpy2dAsync(dst, dpitch, src, spitch, width, height, kind, s) }
    }

    /// # Safety
    /// Every `(dsts[i], dst_maxs[i])` is writable, every `(srcs[i], sizes[i])` readable; arrays
    /// have equal length; `attrs`/`attr_indexes` have equal length.
    pub(crate) unsafe fn memcpy_batch(
        dsts: &mut [*mut c_void],
        dst_maxs: &mut [usize],
        srcs: &mut [*mut c_void],
        sizes: &mut [usize],
        attrs: &mut [sys::aclrtMemcpyBatchAttr],
        attr_indexes: &mut [usize],
    ) -> Result<(), (crate::Error, usize)> {
        let mut fail = usize::MAX;
        // SAFETY: the caller's guarantee; array lengths passed alongside.
        let copied = unsafe {
            raw::aclrtMemcpyBatch(
                dsts.as_mut_ptr(),
                dst_maxs.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                dsts.len(),
                attrs.as_mut_ptr(),
                attr_indexes.as_mut_ptr(),
                attrs.len(),
                &mut fail,
            )
        };
        copied.map_err(|e| (e, fail))
    }
}

/// The subscribe/report callback model.
pub(crate) mod report {
    use super::*;

    /// # Safety
    /// `s` is live.
    pub(crate) unsafe fn subscribe(thread: u64, s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSubscribeReport(thread, s) }
    }

    /// # Safety
    /// `s` is live.
    pub(crate) unsafe fn unsubscribe(thread: u64, s: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtUnSubscribeReport(thread, s) }
    }

    pub(crate) fn process(timeout_ms: i32) -> Result<()> {
        // SAFETY: a plain value; called by the report thread the subscriptions name.
        unsafe { raw::aclrtProcessReport(timeout_ms) }
    }

    /// # Safety
    /// `s` is live and subscribed; `f(arg)` is sound to call once on the report thread.
    pub(crate) unsafe fn launch_callback(
        f: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
        block: sys::aclrtCallbackBlockType,
        s: sys::aclrtStream,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtLaunchCallback(Some(f), arg, block, s) }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The wrapped-function table of the crate docs (generated by `cargo xtask codegen`, which
    /// also checks the mapping against every call the crate makes) names real functions of the
    /// bindings, once each, and covers every C function called in this module.
    #[test]
    fn api_table_matches_the_bindings_and_the_ffi_calls() {
        let table: Vec<&str> = include_str!("api_table.md")
            .lines()
            .skip(2)
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        let mapped: BTreeSet<&str> = table.iter().copied().collect();
        assert_eq!(mapped.len(), table.len(), "a function is listed twice");
        for name in &mapped {
            assert!(
                ascendcl_sys::AclApi::NAMES.contains(name),
                "{name} is not a function of the bindings"
            );
        }
        let called: BTreeSet<&str> = include_str!("result.rs")
            .split("raw::")
            .skip(1)
            .filter_map(|s| s.split('(').next())
            .filter(|s| s.starts_with("acl") && s.chars().all(|c| c.is_ascii_alphanumeric()))
            .collect();
        assert!(!called.is_empty());
        let unmapped: Vec<&&str> = called.difference(&mapped).collect();
        assert!(
            unmapped.is_empty(),
            "called but not in the table: {unmapped:?}"
        );
    }
}
