//! Streams: creation, destruction, synchronisation, queries, event waits, failure mode, stop
//! and abort, attributes and state callbacks.

use super::*;
use crate::event::EventWait;

acl! {
    /// `aclrtCreateStream`: a stream of the current context, priority 0, no flags.
    fn aclrtCreateStream(stream: *mut aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        out.set(as_ptr(crate::stream::create(0, 0)?));
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
        out.set(as_ptr(crate::stream::create(priority, flag)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyStream`: waits for the stream's work, then destroys it.
    fn aclrtDestroyStream(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL (the default stream cannot be destroyed)");
        }
        crate::stream::destroy(handle(stream), false)
    }
}

acl! {
    /// `aclrtDestroyStreamForce`: discards work not yet started, then destroys the stream.
    fn aclrtDestroyStreamForce(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL (the default stream cannot be destroyed)");
        }
        crate::stream::destroy(handle(stream), true)
    }
}

acl! {
    /// `aclrtSynchronizeStream`: waits for every task queued on the stream so far.
    fn aclrtSynchronizeStream(stream: aclrtStream) {
        crate::stream::get(handle(stream))?.synchronize(None, RT_STREAM_SYNC_TIMEOUT)
    }
}

acl! {
    /// `aclrtSynchronizeStreamWithTimeout`: -1 waits forever, < -1 is 107000, expiry 507046.
    fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) {
        let s = crate::stream::get(handle(stream))?;
        s.synchronize(timeout_arg(timeout)?, RT_STREAM_SYNC_TIMEOUT)
    }
}

acl! {
    /// `aclrtStreamQuery`: `ACL_STREAM_STATUS_COMPLETE` (0) or `NOT_READY` (1).
    fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let s = crate::stream::get(handle(stream))?;
        s.not_capturing()?;
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
        let ev = crate::event::get(handle(event))?;
        let s = crate::stream::get(handle(stream))?;
        if let Some(r) = crate::model::record_step(&s, || crate::model::Step::Wait(Arc::clone(&ev))) {
            return r;
        }
        s.enqueue(crate::event::work::Wait(EventWait::latest(ev, None)))
    }
}

acl! {
    /// `aclrtStreamWaitEventWithTimeout`: as `aclrtStreamWaitEvent`, the wait task failing
    /// after `timeout` seconds (0 waits for ever; negative is 107000) — the next
    /// synchronisation of the stream reports 107020. In the runtime's order: the timeout, the
    /// stream and event handles (107017), a NULL event (107000), an IPC event on a capturing
    /// stream (207000), a current context (107002), the stream's context (107003).
    fn aclrtStreamWaitEventWithTimeout(stream: aclrtStream, event: aclrtEvent, timeout: i32) {
        if timeout < 0 {
            return fail(RT_PARAM_INVALID, format!("timeout {timeout} is negative (0 waits for ever, otherwise seconds)"));
        }
        let s = (!stream.is_null()).then(|| crate::stream::get(handle(stream))).transpose()?;
        let ev = (!event.is_null()).then(|| crate::event::get(handle(event))).transpose()?;
        let Some(ev) = ev else {
            return fail(RT_PARAM_INVALID, "event is NULL");
        };
        if ev.flags == ACL_EVENT_IPC && s.as_ref().is_some_and(|s| crate::model::capturing(s).is_some()) {
            return fail(RT_FEATURE_NOT_SUPPORT, "an IPC event cannot be waited for on a capturing stream");
        }
        crate::device::context::current_ids()?;
        let s = match s {
            Some(s) => s,
            None => crate::stream::get(0)?,
        };
        crate::stream::check_context(&s)?;
        if let Some(r) = crate::model::record_step(&s, || crate::model::Step::Wait(Arc::clone(&ev))) {
            return r;
        }
        let t = (timeout > 0).then(|| Duration::from_secs(timeout as u64));
        s.enqueue(crate::event::work::Wait(EventWait::latest(ev, t)))
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
        let s = crate::stream::get(handle(stream))?;
        crate::device::context::current_ids()?;
        s.set_failure_mode(mode, || crate::stream::check_context(&s))
    }
}

acl! {
    /// `aclrtStreamGetPriority`.
    fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(priority, "priority") }?;
        out.set(crate::stream::get(handle(stream))?.priority);
        Ok(())
    }
}

acl! {
    /// `aclrtStreamGetFlags`.
    fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(flags, "flags") }?;
        out.set(crate::stream::get(handle(stream))?.flags);
        Ok(())
    }
}

acl! {
    /// `aclrtStreamGetId`: the stream's id; NULL is the current context's default stream.
    fn aclrtStreamGetId(stream: aclrtStream, streamId: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(streamId, "streamId") }?;
        out.set(crate::stream::get(handle(stream))?.id);
        Ok(())
    }
}

/// `aclrtDeviceGetStreamPriorityRange`: the least priority is 7, the greatest 0; a NULL output
/// is skipped. Never fails.
///
/// # Safety
/// Each pointer is NULL or valid for one write.
pub unsafe extern "C" fn aclrtDeviceGetStreamPriorityRange(
    leastPriority: *mut i32,
    greatestPriority: *mut i32,
) -> aclError {
    if !leastPriority.is_null() {
        // SAFETY: non-NULL and valid (C contract).
        unsafe { leastPriority.write(7) };
    }
    if !greatestPriority.is_null() {
        // SAFETY: non-NULL and valid (C contract).
        unsafe { greatestPriority.write(0) };
    }
    SUCCESS
}

acl! {
    /// `aclrtGetStreamAvailableNum`: how many more streams the current device can create.
    fn aclrtGetStreamAvailableNum(streamCount: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(streamCount, "streamCount") }?;
        let (dev, _) = crate::device::context::current_ids()?;
        out.set(crate::stream::available(dev));
        Ok(())
    }
}

acl! {
    /// `aclrtGetEventAvailNum`: how many more events the current device can create.
    fn aclrtGetEventAvailNum(eventCount: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(eventCount, "eventCount") }?;
        let (dev, _) = crate::device::context::current_ids()?;
        out.set(crate::event::available(dev));
        Ok(())
    }
}

acl! {
    /// `aclrtRegStreamStateCallback`: `callback(stream, state, args)` after every stream is
    /// created (`ACL_RT_STREAM_STATE_CREATE_POST`) and before it is destroyed
    /// (`ACL_RT_STREAM_STATE_DESTROY_PRE`), default streams included. A NULL callback removes
    /// the registration of `regName`; a name already registered is 107000.
    fn aclrtRegStreamStateCallback(regName: *const c_char, callback: aclrtStreamStateCallback, args: *mut c_void) {
        if regName.is_null() {
            return fail(INVALID_PARAM, "regName is NULL");
        }
        // SAFETY: a non-NULL regName is a NUL-terminated string (C contract).
        let name = unsafe { CStr::from_ptr(regName) }.to_string_lossy();
        crate::stream::callbacks::register(&name, callback, args as usize)
    }
}

/// The stream-ownership checks of stop and abort, in the runtime's order: the handle, a
/// current context, the stream's context.
fn owned_stream(stream: aclrtStream) -> R<Arc<crate::engine::stream::Stream>> {
    let s = crate::stream::get(handle(stream))?;
    crate::stream::check_context(&s)?;
    Ok(s)
}

acl! {
    /// `aclrtStreamStop`: stops the stream: queued tasks stay queued and do not run (the task
    /// running finishes); synchronising it reports 507000 until `aclrtStreamAbort`. The NULL
    /// (default) stream cannot be stopped (107000).
    fn aclrtStreamStop(stream: aclrtStream) {
        if stream.is_null() {
            return fail(RT_PARAM_INVALID, "stream is NULL (the default stream cannot be stopped)");
        }
        owned_stream(stream)?.stop();
        Ok(())
    }
}

acl! {
    /// `aclrtStreamAbort`: discards the stream's queued tasks, waits for the running one and
    /// makes the stream usable again (a STOP-mode context failure stays). NULL is the default
    /// stream.
    fn aclrtStreamAbort(stream: aclrtStream) {
        owned_stream(stream)?.abort();
        Ok(())
    }
}

/// Why the stream configuration handles fail: the runtime's documentation marks them as
/// supported on no Atlas product.
const NO_STREAM_CONFIG: &str = "stream configuration handles (aclrtCreateStreamConfigHandle, \
     aclrtSetStreamConfigOpt, aclrtCreateStreamV2, aclrtDestroyStreamConfigHandle) are not \
     supported on any Atlas product (Atlas 350, A3, A2, 200I/500 A2, inference and training \
     series); create configured streams with aclrtCreateStreamWithConfig";

/// `aclrtCreateStreamConfigHandle`: NULL, with a recent-error message saying that no Atlas
/// product supports stream configuration handles (the last error is 207000).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtCreateStreamConfigHandle() -> *mut aclrtStreamConfigHandle {
    const API: &str = "aclrtCreateStreamConfigHandle";
    catch_unwind(|| {
        if let Some(code) = faults::check(API) {
            injected(API, code);
            return std::ptr::null_mut();
        }
        record(
            API,
            Fail {
                code: RT_FEATURE_NOT_SUPPORT,
                msg: NO_STREAM_CONFIG.to_string(),
            },
        );
        std::ptr::null_mut()
    })
    .unwrap_or(std::ptr::null_mut())
}

acl! {
    /// `aclrtSetStreamConfigOpt`: 207000, supported on no Atlas product.
    fn aclrtSetStreamConfigOpt(handle: *mut aclrtStreamConfigHandle, attr: aclrtStreamConfigAttr, attrValue: *const c_void, valueSize: usize) {
        let _ = (handle, attr, attrValue, valueSize);
        fail(RT_FEATURE_NOT_SUPPORT, NO_STREAM_CONFIG)
    }
}

acl! {
    /// `aclrtCreateStreamV2`: 207000, supported on no Atlas product.
    fn aclrtCreateStreamV2(stream: *mut aclrtStream, handle: *const aclrtStreamConfigHandle) {
        let _ = (stream, handle);
        fail(RT_FEATURE_NOT_SUPPORT, NO_STREAM_CONFIG)
    }
}

acl! {
    /// `aclrtDestroyStreamConfigHandle`: 207000, supported on no Atlas product.
    fn aclrtDestroyStreamConfigHandle(handle: *mut aclrtStreamConfigHandle) {
        let _ = handle;
        fail(RT_FEATURE_NOT_SUPPORT, NO_STREAM_CONFIG)
    }
}

acl! {
    /// `aclrtSetStreamOverflowSwitch`: switches the stream's float-overflow check (0 or 1, else
    /// 100000; the same setting as `ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK`).
    fn aclrtSetStreamOverflowSwitch(stream: aclrtStream, flag: u32) {
        if flag > 1 {
            return fail(INVALID_PARAM, format!("flag {flag} is not 0 or 1"));
        }
        crate::stream::get(handle(stream))?.set_attr(ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, flag);
        Ok(())
    }
}

acl! {
    /// `aclrtGetStreamOverflowSwitch`: the stream's float-overflow check (0 until switched on).
    fn aclrtGetStreamOverflowSwitch(stream: aclrtStream, flag: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(flag, "flag") }?;
        out.set(crate::stream::get(handle(stream))?.attr(ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK));
        Ok(())
    }
}

acl! {
    /// `aclrtGetStreamAttribute`: `ACL_STREAM_ATTR_FAILURE_MODE` (the stream's failure mode),
    /// `FLOAT_OVERFLOW_CHECK`, `USER_CUSTOM_TAG`, `CACHE_OP_INFO` (as set, 0 by default); other
    /// attributes 107000.
    fn aclrtGetStreamAttribute(stream: aclrtStream, stmAttrType: aclrtStreamAttr, value: *mut aclrtStreamAttrValue) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        let s = crate::stream::get(handle(stream))?;
        // SAFETY: all-zero bytes are a valid value of the union.
        let mut v: aclrtStreamAttrValue = unsafe { std::mem::zeroed() };
        match stmAttrType {
            ACL_STREAM_ATTR_FAILURE_MODE => v.failureMode = s.failure_mode(),
            ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK => v.overflowSwitch = s.attr(stmAttrType),
            ACL_STREAM_ATTR_USER_CUSTOM_TAG => v.userCustomTag = s.attr(stmAttrType),
            ACL_STREAM_ATTR_CACHE_OP_INFO => v.cacheOpInfoSwitch = s.attr(stmAttrType),
            other => return fail(RT_PARAM_INVALID, format!("stmAttrType {other} is not a stream attribute")),
        }
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtSetStreamAttribute`: the failure mode (the rules of `aclrtSetStreamFailureMode`),
    /// the float-overflow check and cache switches (0 or 1, else 107000), the user tag.
    fn aclrtSetStreamAttribute(stream: aclrtStream, stmAttrType: aclrtStreamAttr, value: *mut aclrtStreamAttrValue) {
        if value.is_null() {
            return fail(INVALID_PARAM, "value is NULL");
        }
        let s = crate::stream::get(handle(stream))?;
        // SAFETY: non-NULL and valid for reading the union (C contract); every member is plain
        // integers, so any bytes are a valid value.
        let v = unsafe { *value };
        match stmAttrType {
            ACL_STREAM_ATTR_FAILURE_MODE => {
                // SAFETY: reading the member this attribute uses.
                let mode = unsafe { v.failureMode };
                if mode > 1 {
                    return fail(INVALID_PARAM, format!("failure mode {mode} is not 0 or 1"));
                }
                crate::device::context::current_ids()?;
                s.set_failure_mode(mode, || crate::stream::check_context(&s))
            }
            ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK | ACL_STREAM_ATTR_CACHE_OP_INFO => {
                // SAFETY: reading a u32 member of the union.
                let on = unsafe { v.overflowSwitch };
                if on > 1 {
                    return fail(RT_PARAM_INVALID, format!("switch {on} is not 0 or 1"));
                }
                s.set_attr(stmAttrType, on);
                Ok(())
            }
            ACL_STREAM_ATTR_USER_CUSTOM_TAG => {
                // SAFETY: reading a u32 member of the union.
                s.set_attr(stmAttrType, unsafe { v.userCustomTag });
                Ok(())
            }
            other => fail(RT_PARAM_INVALID, format!("stmAttrType {other} is not a stream attribute")),
        }
    }
}
