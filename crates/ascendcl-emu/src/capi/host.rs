//! Host functions and report callbacks.

use super::*;

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
