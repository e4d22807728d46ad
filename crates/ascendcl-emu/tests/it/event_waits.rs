//! Waits for events with a timeout (`aclrtStreamWaitEventWithTimeout`) and the wait status of
//! an event (`aclrtQueryEventWaitStatus`): stream ordering, expiry, and the codes of every
//! documented check, in the runtime's order.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

fn code(e: AclError) -> aclError {
    e.code()
}

/// A host function that holds its stream until the test opens the gate.
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn new() -> &'static Gate {
        Box::leak(Box::new(Gate {
            open: Mutex::new(false),
            cv: Condvar::new(),
        }))
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn arg(&'static self) -> *mut c_void {
        (self as *const Gate).cast_mut().cast()
    }
}

extern "C" fn wait_gate(g: *mut c_void) {
    let g = unsafe { &*(g as *const Gate) };
    let mut open = g.open.lock().unwrap();
    while !*open {
        open = g.cv.wait(open).unwrap();
    }
}

extern "C" fn set_flag(f: *mut c_void) {
    unsafe { &*(f as *const AtomicBool) }.store(true, Ordering::SeqCst);
}

fn flag() -> (&'static AtomicBool, *mut c_void) {
    let f: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    (f, (f as *const AtomicBool).cast_mut().cast())
}

fn wait_status(e: aclrtEvent) -> aclrtEventWaitStatus {
    let mut st = ACL_EVENT_WAIT_STATUS_RESERVED;
    ok(unsafe { aclrtQueryEventWaitStatus(e, &mut st) });
    st
}

#[test]
fn a_timed_wait_orders_the_streams_and_the_wait_status_follows_it() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let (producer, consumer) = (stream(), stream());
    let ev = event();
    // No wait issued yet: complete.
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_COMPLETE);
    let gate = Gate::new();
    ok(unsafe { aclrtLaunchHostFunc(producer, Some(wait_gate), gate.arg()) });
    ok(unsafe { aclrtRecordEvent(ev, producer) });
    // 0: no timeout. Two waits on two streams: both must finish for COMPLETE.
    let other = stream();
    ok(unsafe { aclrtStreamWaitEventWithTimeout(consumer, ev, 0) });
    ok(unsafe { aclrtStreamWaitEventWithTimeout(other, ev, 5) });
    let (after, fp) = flag();
    ok(unsafe { aclrtLaunchHostFunc(consumer, Some(set_flag), fp) });
    std::thread::sleep(Duration::from_millis(20));
    assert!(!after.load(Ordering::SeqCst), "the consumer waits");
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_NOT_READY);
    gate.open();
    ok(unsafe { aclrtSynchronizeStream(consumer) });
    ok(unsafe { aclrtSynchronizeStream(other) });
    assert!(after.load(Ordering::SeqCst));
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_COMPLETE);
    // A wait for an event recorded and reached already passes at once.
    ok(unsafe { aclrtStreamWaitEventWithTimeout(consumer, ev, 1) });
    ok(unsafe { aclrtSynchronizeStream(consumer) });
    // The untimed wait counts too.
    let gate = Gate::new();
    ok(unsafe { aclrtLaunchHostFunc(producer, Some(wait_gate), gate.arg()) });
    ok(unsafe { aclrtRecordEvent(ev, producer) });
    ok(unsafe { aclrtStreamWaitEvent(consumer, ev) });
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_NOT_READY);
    gate.open();
    ok(unsafe { aclrtSynchronizeStream(consumer) });
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_COMPLETE);
    for s in [producer, consumer, other] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
    ok(unsafe { aclrtDestroyEvent(ev) });
}

#[test]
fn an_expired_wait_fails_its_task_and_the_next_synchronisation_reports_it() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let mut outer = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut outer) });
    let (producer, consumer) = (stream(), stream());
    let ev = event();
    let gate = Gate::new();
    ok(unsafe { aclrtLaunchHostFunc(producer, Some(wait_gate), gate.arg()) });
    ok(unsafe { aclrtRecordEvent(ev, producer) });
    let start = Instant::now();
    ok(unsafe { aclrtStreamWaitEventWithTimeout(consumer, ev, 1) });
    let (after, fp) = flag();
    ok(unsafe { aclrtLaunchHostFunc(consumer, Some(set_flag), fp) });
    err(
        unsafe { aclrtSynchronizeStream(consumer) },
        code(AclError::TASK_TIMEOUT),
    );
    assert!(start.elapsed() >= Duration::from_secs(1));
    // CONTINUE mode: the later task ran; the failure was reported once.
    assert!(after.load(Ordering::SeqCst));
    ok(unsafe { aclrtSynchronizeStream(consumer) });
    assert_eq!(
        wait_status(ev),
        ACL_EVENT_WAIT_STATUS_COMPLETE,
        "an expired wait is finished"
    );
    gate.open();
    ok(unsafe { aclrtSynchronizeStream(producer) });
    // Aborting a stream releases a wait in progress (and discards a queued one).
    let gate = Gate::new();
    ok(unsafe { aclrtLaunchHostFunc(producer, Some(wait_gate), gate.arg()) });
    ok(unsafe { aclrtRecordEvent(ev, producer) });
    ok(unsafe { aclrtStreamWaitEventWithTimeout(consumer, ev, 0) });
    ok(unsafe { aclrtStreamWaitEventWithTimeout(consumer, ev, 0) });
    std::thread::sleep(Duration::from_millis(20));
    ok(unsafe { aclrtStreamAbort(consumer) });
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_COMPLETE);
    gate.open();
    ok(unsafe { aclrtSynchronizeStream(producer) });
    ok(unsafe { aclrtSetCurrentContext(outer) });
    for s in [producer, consumer] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
    ok(unsafe { aclrtDestroyEvent(ev) });
}

#[test]
fn timed_wait_checks_in_order() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let ev = event();
    let dead_s = stream();
    ok(unsafe { aclrtDestroyStream(dead_s) });
    let dead_e = event();
    ok(unsafe { aclrtDestroyEvent(dead_e) });
    let invalid = code(AclError::PARAM_INVALID);
    let handle = code(AclError::INVALID_HANDLE);
    // The timeout first (even before a NULL event), then the handles, then a NULL event.
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(s, null_mut(), -1) },
        invalid,
    );
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(dead_s, null_mut(), 1) },
        handle,
    );
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(s, dead_e, 1) },
        handle,
    );
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(s, null_mut(), 1) },
        invalid,
    );
    // NULL is the default stream.
    ok(unsafe { aclrtStreamWaitEventWithTimeout(null_mut(), ev, 1) });
    ok(unsafe { aclrtSynchronizeStream(null_mut()) });
    // An IPC event cannot be waited for on a capturing stream.
    let mut ipc = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut ipc, ACL_EVENT_IPC) });
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(s, ipc, 1) },
        code(AclError::FEATURE_NOT_SUPPORT),
    );
    // A plain event's wait is captured into the model.
    ok(unsafe { aclrtStreamWaitEventWithTimeout(s, ev, 1) });
    let mut model = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut model) });
    ok(unsafe { aclmdlRIDestroy(model) });
    // Another context's stream: 107003; a thread without a context: 107002.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let foreign = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    err(
        unsafe { aclrtStreamWaitEventWithTimeout(foreign, ev, 1) },
        code(AclError::STREAM_CONTEXT),
    );
    let (su, eu) = (s as usize, ev as usize);
    let r = std::thread::spawn(move || unsafe {
        aclrtStreamWaitEventWithTimeout(su as aclrtStream, eu as aclrtEvent, 1)
    })
    .join()
    .unwrap();
    assert_eq!(r, code(AclError::CONTEXT_NULL));
    ok(unsafe { aclrtDestroyContext(other) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    for e in [ev, ipc] {
        ok(unsafe { aclrtDestroyEvent(e) });
    }
    ok(unsafe { aclrtDestroyStream(s) });
}

extern "C" fn nothing(_: *mut c_void) {}

#[test]
fn wait_status_checks_in_order() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ev = event();
    let mut st = ACL_EVENT_WAIT_STATUS_RESERVED;
    let null_param = code(AclError::INVALID_PARAM);
    err(
        unsafe { aclrtQueryEventWaitStatus(null_mut(), &mut st) },
        null_param,
    );
    err(
        unsafe { aclrtQueryEventWaitStatus(ev, null_mut()) },
        null_param,
    );
    let dead = event();
    ok(unsafe { aclrtDestroyEvent(dead) });
    err(
        unsafe { aclrtQueryEventWaitStatus(dead, &mut st) },
        code(AclError::INVALID_HANDLE),
    );
    // Events of aclrtCreateEventExWithFlag, external and IPC events have no wait status.
    let unsupported = code(AclError::FEATURE_NOT_SUPPORT);
    let mut ex = null_mut();
    ok(unsafe { aclrtCreateEventExWithFlag(&mut ex, ACL_EVENT_SYNC) });
    err(
        unsafe { aclrtQueryEventWaitStatus(ex, &mut st) },
        unsupported,
    );
    assert!(take_msg().is_empty());
    let mut external = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut external, ACL_EVENT_EXTERNAL) });
    err(
        unsafe { aclrtQueryEventWaitStatus(external, &mut st) },
        unsupported,
    );
    let mut ipc = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut ipc, ACL_EVENT_IPC) });
    err(
        unsafe { aclrtQueryEventWaitStatus(ipc, &mut st) },
        unsupported,
    );
    // Flags combined with others are ordinary events.
    let mut sync_timed = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut sync_timed, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE) });
    assert_eq!(wait_status(sync_timed), ACL_EVENT_WAIT_STATUS_COMPLETE);
    // A current context failed in STOP mode reports its error.
    let mut outer = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut outer) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let s = stream();
    ok(unsafe { aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE.into()) });
    let (d, h) = (malloc(64), malloc_host(64));
    let gate = Gate::new();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(wait_gate), gate.arg()) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(nothing), null_mut()) });
    // Freed under the queued copy: the copy fails when it runs.
    free(d);
    gate.open();
    let failed = unsafe { aclrtSynchronizeStream(s) };
    assert_ne!(failed, 0);
    take_msg();
    err(unsafe { aclrtQueryEventWaitStatus(ev, &mut st) }, failed);
    // In another context the event answers again.
    ok(unsafe { aclrtSetCurrentContext(outer) });
    assert_eq!(wait_status(ev), ACL_EVENT_WAIT_STATUS_COMPLETE);
    free_host(h);
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetCurrentContext(outer) });
    for e in [ev, ex, external, ipc, sync_timed] {
        ok(unsafe { aclrtDestroyEvent(e) });
    }
}
