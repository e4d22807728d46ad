//! Host functions, report callbacks and host-function subscription.

use super::*;
use crate::device::soc;
use crate::host::host_func;
use crate::host::report;
use crate::host::work::{Callback, HostFunc};

/// 207000 (naming the SoC) unless the emulated SoC has host-function subscription.
fn subscription() -> R {
    soc::require(
        |f| f.host_func_subscription,
        "host-function subscription (aclrtSubscribeHostFunc, aclrtProcessHostFunc, \
         aclrtUnSubscribeHostFunc; IPV350-class SoCs)",
    )
}

acl! {
    /// `aclrtLaunchHostFunc`: runs `fn_(args)` in stream order: on the stream's worker thread,
    /// or, when a thread subscribed to the stream with `aclrtSubscribeHostFunc`, on that thread
    /// inside its `aclrtProcessHostFunc` (the stream waits for it).
    fn aclrtLaunchHostFunc(stream: aclrtStream, fn_: aclrtHostFunc, args: *mut c_void) {
        let Some(f) = fn_ else {
            return fail(INVALID_PARAM, "fn is NULL");
        };
        let s = crate::stream::get(handle(stream))?;
        crate::stream::check_context(&s)?;
        match host_func::queue_for(s.handle) {
            Some(queue) => s.enqueue(Callback {
                f,
                arg: args as usize,
                block: true,
                queue,
                stream: s.handle,
            }),
            None => s.enqueue(HostFunc(f, args as usize)),
        }
    }
}

acl! {
    /// `aclrtSubscribeReport`: routes the stream's callbacks to thread `threadId` (a
    /// `pthread_t`), which calls `aclrtProcessReport`.
    fn aclrtSubscribeReport(threadId: u64, stream: aclrtStream) {
        let s = crate::stream::get(handle(stream))?;
        report::subscribe(threadId, s.handle)
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
        let s = crate::stream::get(handle(stream))?;
        let queue = report::queue_for(s.handle)?;
        s.enqueue(Callback {
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
        report::process(timeout)
    }
}

acl! {
    /// `aclrtUnSubscribeReport`.
    fn aclrtUnSubscribeReport(threadId: u64, stream: aclrtStream) {
        let s = crate::stream::get(handle(stream))?;
        report::unsubscribe(threadId, s.handle)
    }
}

acl! {
    /// `aclrtSubscribeHostFunc`: host functions launched on `exeStream` run on thread
    /// `hostFuncThreadId` (a `pthread_t`) when it calls `aclrtProcessHostFunc`. One thread per
    /// stream (107011); a NULL stream is 107000. IPV350-class SoCs only (207000 elsewhere).
    fn aclrtSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) {
        subscription()?;
        if exeStream.is_null() {
            return fail(RT_PARAM_INVALID, "exeStream is NULL");
        }
        let s = crate::stream::get(handle(exeStream))?;
        host_func::subscribe(hostFuncThreadId, s.handle)
    }
}

acl! {
    /// `aclrtProcessHostFunc`: runs one host function of a subscribed stream on the calling
    /// thread, waiting up to `timeout` ms (-1 forever; 0 or < -1 is 107000); 107012 when the
    /// thread is not subscribed, 507012 when none arrived in time.
    fn aclrtProcessHostFunc(timeout: i32) {
        subscription()?;
        host_func::process(timeout)
    }
}

acl! {
    /// `aclrtUnSubscribeHostFunc`: undoes `aclrtSubscribeHostFunc` (107011 when the stream is
    /// not subscribed to that thread; a NULL stream is 107000).
    fn aclrtUnSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) {
        subscription()?;
        if exeStream.is_null() {
            return fail(RT_PARAM_INVALID, "exeStream is NULL");
        }
        let s = crate::stream::get(handle(exeStream))?;
        host_func::unsubscribe(hostFuncThreadId, s.handle)
    }
}
