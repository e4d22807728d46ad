//! Stream capture into a model and its replay (`aclmdlRICapture*`, `aclmdlRIExecuteAsync`,
//! `aclmdlRIDestroy`), with the codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};

static RUNS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count(_: *mut c_void) {
    RUNS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn capture_checks() {
    let _d = Dev::new(0);
    let s = stream();
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(unsafe { aclmdlRICaptureBegin(null_mut(), 0) }, 100000);
    err(unsafe { aclmdlRICaptureBegin(dead, 0) }, 107017);
    err(unsafe { aclmdlRICaptureBegin(s, 3) }, 107000);
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    err(unsafe { aclmdlRICaptureBegin(def, 0) }, 207000);
    // Another context's stream: 107003.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let foreign = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    err(unsafe { aclmdlRICaptureBegin(foreign, 0) }, 107003);
    ok(unsafe { aclrtDestroyContext(other) });
    ok(unsafe { aclrtSetCurrentContext(cur) });

    let mut ri = null_mut();
    err(unsafe { aclmdlRICaptureEnd(null_mut(), &mut ri) }, 100000);
    err(unsafe { aclmdlRICaptureEnd(s, null_mut()) }, 107000);
    err(unsafe { aclmdlRICaptureEnd(s, &mut ri) }, 107029);
    let mut st = 9;
    err(
        unsafe { aclmdlRICaptureGetInfo(null_mut(), &mut st, &mut ri) },
        100000,
    );
    err(
        unsafe { aclmdlRICaptureGetInfo(s, null_mut(), null_mut()) },
        100000,
    );
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, null_mut()) });
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);

    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    err(unsafe { aclmdlRICaptureBegin(s, 0) }, 107027);
    let mut live = null_mut();
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, &mut live) });
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    assert!(!live.is_null());
    // A capturing stream cannot be synchronised, queried or destroyed.
    err(unsafe { aclrtSynchronizeStream(s) }, 107027);
    let mut status = 0;
    err(unsafe { aclrtStreamQuery(s, &mut status) }, 107027);
    err(unsafe { aclrtDestroyStream(s) }, 107027);
    // Pageable memory cannot be captured.
    let d = malloc(64);
    let mut pageable = [0u8; 64];
    err(
        unsafe {
            aclrtMemcpyAsync(
                d,
                64,
                pageable.as_mut_ptr().cast(),
                64,
                ACL_MEMCPY_HOST_TO_DEVICE,
                s,
            )
        },
        107000,
    );
    // The model cannot run or go while it is being captured.
    let t = stream();
    err(unsafe { aclmdlRIExecuteAsync(live, t) }, 107026);
    err(unsafe { aclmdlRIDestroy(live) }, 107026);
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    assert_eq!(ri, live);
    // A capturing stream cannot execute a model.
    ok(unsafe { aclmdlRICaptureBegin(t, 0) });
    err(unsafe { aclmdlRIExecuteAsync(ri, t) }, 107027);
    let mut ri2 = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(t, &mut ri2) });
    err(unsafe { aclmdlRIExecuteAsync(null_mut(), t) }, 100000);
    err(unsafe { aclmdlRIDestroy(null_mut()) }, 100000);
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclmdlRIDestroy(ri2) });
    err(unsafe { aclmdlRIDestroy(ri) }, 107017);
    err(unsafe { aclmdlRIExecuteAsync(ri, t) }, 107017);

    // The thread's capture mode: swapped.
    let mut m = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    err(
        unsafe { aclmdlRICaptureThreadExchangeMode(null_mut()) },
        100000,
    );
    let mut bad = 3;
    err(
        unsafe { aclmdlRICaptureThreadExchangeMode(&mut bad) },
        107000,
    );
    ok(unsafe { aclmdlRICaptureThreadExchangeMode(&mut m) });
    assert_eq!(m, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    ok(unsafe { aclmdlRICaptureThreadExchangeMode(&mut m) });
    assert_eq!(m, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(t) });
}

#[test]
fn captured_work_runs_at_each_execution_and_not_before() {
    let _d = Dev::new(0);
    let s = stream();
    let exec = stream();
    let (src, dst) = (malloc_host(256), malloc(256));
    let back = malloc_host(256);
    let ev = event();
    let before = RUNS.load(Ordering::SeqCst);
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    ok(unsafe { aclrtMemsetAsync(dst, 256, 0, 256, s) });
    ok(unsafe { aclrtMemcpyAsync(dst, 128, src, 128, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(count), null_mut()) });
    ok(unsafe { aclrtRecordEvent(ev, s) });
    ok(unsafe { aclrtMemcpyAsync(back, 256, dst, 256, ACL_MEMCPY_DEVICE_TO_HOST, s) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    // Nothing ran during the capture, and the event was not recorded.
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(RUNS.load(Ordering::SeqCst), before);
    let mut es = 9;
    ok(unsafe { aclrtQueryEventStatus(ev, &mut es) });
    assert_eq!(es, ACL_EVENT_RECORDED_STATUS_NOT_READY);
    // Each execution replays the steps with the captured pointers: the source's contents at
    // execution time are what is copied.
    for round in 1..=3u8 {
        unsafe { std::ptr::write_bytes(src.cast::<u8>(), round, 256) };
        ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
        ok(unsafe { aclrtSynchronizeStream(exec) });
        let out = unsafe { std::slice::from_raw_parts(back.cast::<u8>(), 256) };
        assert!(out[..128].iter().all(|b| *b == round), "round {round}");
        assert!(out[128..].iter().all(|b| *b == 0), "the memset ran first");
        assert_eq!(RUNS.load(Ordering::SeqCst), before + round as usize);
        ok(unsafe { aclrtQueryEventStatus(ev, &mut es) });
        assert_eq!(es, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    }
    // The origin stream works normally again.
    ok(unsafe { aclrtLaunchHostFunc(s, Some(count), null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(RUNS.load(Ordering::SeqCst), before + 4);
    // Destroying the model does not affect an execution already queued.
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtSynchronizeStream(exec) });
    assert_eq!(RUNS.load(Ordering::SeqCst), before + 5);
    ok(unsafe { aclrtDestroyEvent(ev) });
    free_host(src);
    free_host(back);
    free(dst);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(exec) });
}
