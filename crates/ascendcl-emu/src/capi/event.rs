//! Events: creation, records, queries, synchronisation, timing, ids and destruction.

use super::*;
use crate::event;

acl! {
    /// `aclrtCreateEvent`: an event that can be timed.
    fn aclrtCreateEvent(event: *mut aclrtEvent) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        out.set(as_ptr(crate::event::create(0, true, false)?));
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
        out.set(as_ptr(crate::event::create(flag, flag & ACL_EVENT_TIME_LINE != 0, false)?));
        Ok(())
    }
}

acl! {
    /// `aclrtCreateEventExWithFlag`: as `aclrtCreateEventWithFlag`, an event of the runtime's
    /// "new mode" (no wait status: `aclrtQueryEventWaitStatus` refuses it).
    fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        event::check_flags(flag)?;
        out.set(as_ptr(crate::event::create(flag, flag & ACL_EVENT_TIME_LINE != 0, true)?));
        Ok(())
    }
}

acl! {
    /// `aclrtRecordEvent`: the event completes (and is timestamped) when the stream reaches it.
    fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        let ev = crate::event::get(handle(event))?;
        let s = crate::stream::get(handle(stream))?;
        // While the stream records (capture, a bound stream), the record becomes a step.
        if let Some(r) = crate::model::record_step(&s, || crate::model::Step::Record(Arc::clone(&ev))) {
            return r;
        }
        let seq = ev.begin_record();
        if let Err(f) = s.enqueue(crate::event::work::Record(Arc::clone(&ev), seq)) {
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
        let ev = crate::event::get(handle(event))?;
        let s = crate::stream::get(handle(stream))?;
        s.enqueue(crate::event::work::Reset(ev))
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
        let ev = crate::event::get(handle(event))?;
        out.set(if ev.is_complete() {
            ACL_EVENT_RECORDED_STATUS_COMPLETE
        } else {
            ACL_EVENT_RECORDED_STATUS_NOT_READY
        });
        Ok(())
    }
}

acl! {
    /// `aclrtQueryEventWaitStatus`: `ACL_EVENT_WAIT_STATUS_COMPLETE` (0) once every wait task
    /// issued for the event (`aclrtStreamWaitEvent[WithTimeout]`) has finished, and when none
    /// was issued; `NOT_READY` (1) while one is queued or waiting. Events of
    /// `aclrtCreateEventExWithFlag`, external and IPC events are 207000; a current context that
    /// failed in STOP mode reports its error.
    fn aclrtQueryEventWaitStatus(event: aclrtEvent, status: *mut aclrtEventWaitStatus) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let ev = crate::event::get(handle(event))?;
        let refused = if ev.ex {
            Some("was created by aclrtCreateEventExWithFlag, whose events have no wait status")
        } else if ev.flags == ACL_EVENT_EXTERNAL {
            Some("is an external event (ACL_EVENT_EXTERNAL), which has no wait status")
        } else if ev.flags == ACL_EVENT_IPC {
            Some("is an IPC event (ACL_EVENT_IPC), which has no wait status")
        } else {
            None
        };
        if let Some(why) = refused {
            return fail(RT_FEATURE_NOT_SUPPORT, format!("event {:#x} {why}", ev.handle));
        }
        crate::device::context::check_current_failure()?;
        out.set(if ev.waits_done() {
            ACL_EVENT_WAIT_STATUS_COMPLETE
        } else {
            ACL_EVENT_WAIT_STATUS_NOT_READY
        });
        Ok(())
    }
}

fn sync_event(event: aclrtEvent, timeout: Option<Duration>) -> R {
    if event.is_null() {
        return fail(INVALID_PARAM, "event is NULL");
    }
    let ev = crate::event::get(handle(event))?;
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
        let a = crate::event::get(handle(startEvent))?;
        let b = crate::event::get(handle(endEvent))?;
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
        let ev = crate::event::get(handle(event))?;
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
        crate::event::destroy(handle(event))
    }
}

acl! {
    /// `aclrtQueryEvent`: `ACL_EVENT_STATUS_COMPLETE` (0) once the latest record was reached,
    /// else `ACL_EVENT_STATUS_NOT_READY` (1) (the numbering opposite to
    /// `aclrtQueryEventStatus`).
    fn aclrtQueryEvent(event: aclrtEvent, status: *mut aclrtEventStatus) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let ev = crate::event::get(handle(event))?;
        out.set(if ev.is_complete() { ACL_EVENT_STATUS_COMPLETE } else { ACL_EVENT_STATUS_NOT_READY });
        Ok(())
    }
}

acl! {
    /// `aclrtGetEventId`: a small number identifying the event in the process.
    fn aclrtGetEventId(event: aclrtEvent, eventId: *mut u32) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(eventId, "eventId") }?;
        out.set(crate::event::get(handle(event))?.id);
        Ok(())
    }
}
