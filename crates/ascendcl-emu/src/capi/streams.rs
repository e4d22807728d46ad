//! Streams: creation, destruction, synchronisation, queries, waits, failure mode.

use super::*;

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
