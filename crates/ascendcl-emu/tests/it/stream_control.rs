//! Stream ids, priorities, capacity queries, state callbacks, stop and abort, with the codes of
//! every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as u64));
}

static BUMPS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn bump(_: *mut c_void) {
    BUMPS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn ids_priorities_and_capacity() {
    let _d = Dev::new(0);
    let (a, b) = (stream(), stream());
    let (mut ia, mut ib, mut idef) = (-1, -1, -1);
    err(
        unsafe { aclrtStreamGetId(a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtStreamGetId(a, &mut ia) });
    ok(unsafe { aclrtStreamGetId(b, &mut ib) });
    ok(unsafe { aclrtStreamGetId(null_mut(), &mut idef) });
    assert!(ia >= 0 && ib >= 0 && idef >= 0);
    assert!(ia != ib && ia != idef && ib != idef, "{ia} {ib} {idef}");
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    let mut again = -1;
    ok(unsafe { aclrtStreamGetId(def, &mut again) });
    assert_eq!(again, idef, "NULL is the default stream");
    std::thread::spawn(|| {
        let mut id = 0;
        err(
            unsafe { aclrtStreamGetId(null_mut(), &mut id) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();

    let (mut least, mut greatest) = (-1, -1);
    ok(unsafe { aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest) });
    assert_eq!((least, greatest), (7, 0));
    ok(unsafe { aclrtDeviceGetStreamPriorityRange(null_mut(), null_mut()) });

    let (mut n1, mut n2, mut e1, mut e2) = (0, 0, 0, 0);
    err(
        unsafe { aclrtGetStreamAvailableNum(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetEventAvailNum(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetStreamAvailableNum(&mut n1) });
    ok(unsafe { aclrtGetEventAvailNum(&mut e1) });
    assert!(n1 > 0 && n1 <= 2048 && e1 > 0 && e1 <= 65536);
    ok(unsafe { aclrtDestroyStream(a) });
    ok(unsafe { aclrtGetStreamAvailableNum(&mut n2) });
    let ev = event();
    ok(unsafe { aclrtGetEventAvailNum(&mut e2) });
    // Other tests create streams and events meanwhile: only the bounds are certain.
    assert!(n2 >= 1 && e2 < 65536);
    ok(unsafe { aclrtDestroyEvent(ev) });
    ok(unsafe { aclrtDestroyStream(b) });
    err(
        unsafe { aclrtStreamGetId(b, &mut ib) },
        AclError::INVALID_HANDLE,
    );
    std::thread::spawn(|| {
        let mut n = 0;
        err(
            unsafe { aclrtGetStreamAvailableNum(&mut n) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

/// (stream, state) pairs seen by the callbacks, by registration.
static STATES: Mutex<Vec<(usize, usize, u32)>> = Mutex::new(Vec::new());

extern "C" fn on_state(stream: aclrtStream, state: aclrtStreamState, args: *mut c_void) {
    STATES
        .lock()
        .unwrap()
        .push((args as usize, stream as usize, state));
}

fn seen(reg: usize, s: aclrtStream) -> Vec<u32> {
    STATES
        .lock()
        .unwrap()
        .iter()
        .filter(|(r, h, _)| *r == reg && *h == s as usize)
        .map(|(_, _, st)| *st)
        .collect()
}

#[test]
fn stream_state_callbacks() {
    let name = c"stream-control-test";
    err(
        unsafe { aclrtRegStreamStateCallback(null(), Some(on_state), null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtRegStreamStateCallback(name.as_ptr(), Some(on_state), 11 as *mut c_void) });
    err(
        unsafe { aclrtRegStreamStateCallback(name.as_ptr(), Some(on_state), 2 as *mut c_void) },
        AclError::PARAM_INVALID,
    );
    let _d = Dev::new(0);
    let s = stream();
    assert_eq!(seen(11, s), vec![ACL_RT_STREAM_STATE_CREATE_POST]);
    ok(unsafe { aclrtDestroyStream(s) });
    assert_eq!(
        seen(11, s),
        vec![
            ACL_RT_STREAM_STATE_CREATE_POST,
            ACL_RT_STREAM_STATE_DESTROY_PRE
        ]
    );
    // A context's default stream is reported too.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    assert_eq!(
        seen(11, def),
        vec![
            ACL_RT_STREAM_STATE_CREATE_POST,
            ACL_RT_STREAM_STATE_DESTROY_PRE
        ]
    );
    // NULL unregisters (always succeeds, even twice); then nothing is reported.
    ok(unsafe { aclrtRegStreamStateCallback(name.as_ptr(), None, null_mut()) });
    ok(unsafe { aclrtRegStreamStateCallback(name.as_ptr(), None, null_mut()) });
    let t = stream();
    ok(unsafe { aclrtDestroyStream(t) });
    assert!(seen(11, t).is_empty());
}

#[test]
fn stop_holds_the_queue_and_abort_discards_it() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    err(
        unsafe { aclrtStreamStop(null_mut()) },
        AclError::PARAM_INVALID,
    );
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(unsafe { aclrtStreamStop(dead) }, AclError::INVALID_HANDLE);
    err(unsafe { aclrtStreamAbort(dead) }, AclError::INVALID_HANDLE);
    // Another context's stream: 107003.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let foreign = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    err(
        unsafe { aclrtStreamStop(foreign) },
        AclError::STREAM_CONTEXT,
    );
    err(
        unsafe { aclrtStreamAbort(foreign) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtDestroyContext(other) });
    ok(unsafe { aclrtSetCurrentContext(cur) });

    let before = BUMPS.load(Ordering::SeqCst);
    let s = stream();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 50 as *mut c_void) });
    for _ in 0..5 {
        ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), null_mut()) });
    }
    ok(unsafe { aclrtStreamStop(s) });
    // The queue is held: synchronising reports 507000 at once and nothing more runs.
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(BUMPS.load(Ordering::SeqCst), before);
    let mut st = 7;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    // Abort discards it; the stream works again.
    ok(unsafe { aclrtStreamAbort(s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(
        BUMPS.load(Ordering::SeqCst),
        before,
        "aborted tasks never ran"
    );
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(BUMPS.load(Ordering::SeqCst), before + 1);
    // A stopped stream can be destroyed: its queue is discarded.
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 20 as *mut c_void) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), null_mut()) });
    ok(unsafe { aclrtStreamStop(s) });
    ok(unsafe { aclrtDestroyStream(s) });
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(BUMPS.load(Ordering::SeqCst), before + 1);
    // Abort of the default stream (NULL) is accepted.
    ok(unsafe { aclrtStreamAbort(null_mut()) });
}
