//! Stream capture into a model and its replay (`aclmdlRICapture*`, `aclmdlRIExecuteAsync`,
//! `aclmdlRIDestroy`), with the codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::atomic::{AtomicUsize, Ordering};

static RUNS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count(_: *mut c_void) {
    RUNS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn capture_checks() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(
        unsafe { aclmdlRICaptureBegin(null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclmdlRICaptureBegin(dead, 0) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclmdlRICaptureBegin(s, 3) },
        AclError::PARAM_INVALID,
    );
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    err(
        unsafe { aclmdlRICaptureBegin(def, 0) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Another context's stream: 107003.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let foreign = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    err(
        unsafe { aclmdlRICaptureBegin(foreign, 0) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtDestroyContext(other) });
    ok(unsafe { aclrtSetCurrentContext(cur) });

    let mut ri = null_mut();
    err(
        unsafe { aclmdlRICaptureEnd(null_mut(), &mut ri) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclmdlRICaptureEnd(s, null_mut()) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclmdlRICaptureEnd(s, &mut ri) },
        AclError::STREAM_NOT_CAPTURED,
    );
    let mut st = 9;
    err(
        unsafe { aclmdlRICaptureGetInfo(null_mut(), &mut st, &mut ri) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclmdlRICaptureGetInfo(s, null_mut(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, null_mut()) });
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);

    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    err(
        unsafe { aclmdlRICaptureBegin(s, 0) },
        AclError::STREAM_CAPTURED,
    );
    let mut live = null_mut();
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, &mut live) });
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    assert!(!live.is_null());
    // A capturing stream cannot be synchronised, queried or destroyed.
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::STREAM_CAPTURED,
    );
    let mut status = 0;
    err(
        unsafe { aclrtStreamQuery(s, &mut status) },
        AclError::STREAM_CAPTURED,
    );
    err(unsafe { aclrtDestroyStream(s) }, AclError::STREAM_CAPTURED);
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
        AclError::PARAM_INVALID,
    );
    // The model cannot run or go while it is being captured.
    let t = stream();
    err(
        unsafe { aclmdlRIExecuteAsync(live, t) },
        AclError::MODEL_CAPTURED,
    );
    err(unsafe { aclmdlRIDestroy(live) }, AclError::MODEL_CAPTURED);
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    assert_eq!(ri, live);
    // A capturing stream cannot execute a model.
    ok(unsafe { aclmdlRICaptureBegin(t, 0) });
    err(
        unsafe { aclmdlRIExecuteAsync(ri, t) },
        AclError::STREAM_CAPTURED,
    );
    let mut ri2 = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(t, &mut ri2) });
    err(
        unsafe { aclmdlRIExecuteAsync(null_mut(), t) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclmdlRIDestroy(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclmdlRIDestroy(ri2) });
    err(unsafe { aclmdlRIDestroy(ri) }, AclError::INVALID_HANDLE);
    err(
        unsafe { aclmdlRIExecuteAsync(ri, t) },
        AclError::INVALID_HANDLE,
    );

    // The thread's capture mode: swapped.
    let mut m = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    err(
        unsafe { aclmdlRICaptureThreadExchangeMode(null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut bad = 3;
    err(
        unsafe { aclmdlRICaptureThreadExchangeMode(&mut bad) },
        AclError::PARAM_INVALID,
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
    let _device = failing_tasks();
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

#[track_caller]
fn is(code: aclError, want: AclError) {
    err(code, want.code());
}

fn read_u32(p: *mut c_void) -> u32 {
    let mut b = [0u8; 4];
    d2h(&mut b, p);
    u32::from_le_bytes(b)
}

fn fill(p: *mut c_void, byte: u8, s: aclrtStream) {
    ok(unsafe { aclrtMemsetAsync(p, 4, byte as i32, 4, s) });
}

#[test]
fn task_group_checks() {
    let _d = Dev::new(0);
    let s = stream();
    let mut g = null_mut();
    is(
        unsafe { aclmdlRICaptureTaskGrpBegin(null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskGrpBegin(s) },
        AclError::STREAM_NOT_CAPTURED,
    );
    is(
        unsafe { aclmdlRICaptureTaskGrpEnd(null_mut(), &mut g) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskGrpEnd(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut g) },
        AclError::STREAM_NOT_CAPTURED,
    );
    ok(unsafe { aclmdlRICaptureBegin(s, 0) });
    is(
        unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut g) },
        AclError::STREAM_TASK_GROUP_STATUS,
    );
    ok(unsafe { aclmdlRICaptureTaskGrpBegin(s) });
    is(
        unsafe { aclmdlRICaptureTaskGrpBegin(s) },
        AclError::STREAM_TASK_GROUP_STATUS,
    );
    // Ending the capture with a group open: 107033, and the capture is over.
    let mut ri = null_mut();
    is(
        unsafe { aclmdlRICaptureEnd(s, &mut ri) },
        AclError::STREAM_TASK_GROUP_STATUS,
    );
    let mut st = 9;
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, null_mut()) });
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn task_update_checks() {
    let _d = Dev::new(0);
    let (s, upd) = (stream(), stream());
    let d = malloc(4);
    ok(unsafe { aclmdlRICaptureBegin(s, 0) });
    ok(unsafe { aclmdlRICaptureTaskGrpBegin(s) });
    fill(d, 1, s);
    let mut g = null_mut();
    ok(unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut g) });
    // A capturing stream cannot update.
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(s, g) },
        AclError::STREAM_CAPTURED,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(s) },
        AclError::STREAM_CAPTURED,
    );
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(null_mut(), g) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(upd, null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(upd, 0x1234 as aclrtTaskGrp) },
        AclError::INVALID_HANDLE,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(null_mut()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(upd) },
        AclError::STREAM_TASK_GROUP_STATUS,
    );
    // A model's stream cannot update.
    let mut p = null_mut();
    ok(unsafe { aclrtCreateStreamWithConfig(&mut p, 0, ACL_STREAM_PERSISTENT) });
    let mut built = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut built, 0) });
    ok(unsafe { aclmdlRIBindStream(built, p, 0) });
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(p, g) },
        AclError::STREAM_MODEL,
    );
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(p) },
        AclError::STREAM_MODEL,
    );
    ok(unsafe { aclmdlRIDestroy(built) });
    // The update must match the group: one memset.
    ok(unsafe { aclmdlRICaptureTaskUpdateBegin(upd, g) });
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(upd, g) },
        AclError::STREAM_TASK_GROUP_STATUS,
    );
    fill(d, 2, upd);
    fill(d, 3, upd);
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(upd) },
        AclError::MODEL_UPDATE_FAILED,
    );
    let host = malloc_host(4);
    ok(unsafe { aclmdlRICaptureTaskUpdateBegin(upd, g) });
    ok(unsafe { aclrtMemcpyAsync(d, 4, host, 4, ACL_MEMCPY_HOST_TO_DEVICE, upd) });
    is(
        unsafe { aclmdlRICaptureTaskUpdateEnd(upd) },
        AclError::MODEL_UPDATE_FAILED,
    );
    // A failed update leaves the stream a plain stream: its tasks run.
    fill(d, 4, upd);
    ok(unsafe { aclrtSynchronizeStream(upd) });
    assert_eq!(read_u32(d), 0x0404_0404);
    ok(unsafe { aclmdlRIDestroy(ri) });
    // The group went with its model.
    is(
        unsafe { aclmdlRICaptureTaskUpdateBegin(upd, g) },
        AclError::INVALID_HANDLE,
    );
    free(d);
    free_host(host);
    for x in [s, upd, p] {
        ok(unsafe { aclrtDestroyStream(x) });
    }
}

static GATE: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
static GATE_CV: std::sync::Condvar = std::sync::Condvar::new();

extern "C" fn wait_gate(_: *mut c_void) {
    let mut g = GATE.lock().unwrap();
    while !*g {
        g = GATE_CV.wait(g).unwrap();
    }
}

#[test]
fn an_update_replaces_the_group_when_its_stream_reaches_it() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let (s, upd, exec) = (stream(), stream(), stream());
    let (a, b) = (malloc(4), malloc(4));
    ok(unsafe { aclmdlRICaptureBegin(s, 0) });
    fill(a, 1, s);
    ok(unsafe { aclmdlRICaptureTaskGrpBegin(s) });
    fill(b, 2, s);
    let mut g = null_mut();
    ok(unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut g) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    let run = || {
        h2d(a, &[0; 4]);
        h2d(b, &[0; 4]);
        ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
        ok(unsafe { aclrtSynchronizeStream(exec) });
        (read_u32(a), read_u32(b))
    };
    assert_eq!(run(), (0x0101_0101, 0x0202_0202));
    // The update is queued behind a host function that holds the update stream: until the
    // stream reaches it, executions keep the old tasks.
    ok(unsafe { aclrtLaunchHostFunc(upd, Some(wait_gate), null_mut()) });
    ok(unsafe { aclmdlRICaptureTaskUpdateBegin(upd, g) });
    fill(b, 3, upd);
    ok(unsafe { aclmdlRICaptureTaskUpdateEnd(upd) });
    assert_eq!(
        run(),
        (0x0101_0101, 0x0202_0202),
        "the update has not run yet"
    );
    *GATE.lock().unwrap() = true;
    GATE_CV.notify_all();
    ok(unsafe { aclrtSynchronizeStream(upd) });
    assert_eq!(
        run(),
        (0x0101_0101, 0x0303_0303),
        "the group's task was replaced"
    );
    assert_eq!(run(), (0x0101_0101, 0x0303_0303), "and stays replaced");
    ok(unsafe { aclmdlRIDestroy(ri) });
    free(a);
    free(b);
    for x in [s, upd, exec] {
        ok(unsafe { aclrtDestroyStream(x) });
    }
}

#[test]
fn a_captured_wait_on_an_external_event_waits_for_its_flag() {
    let _device = failing_tasks();
    // The runtime's update sample: the model waits for an ACL_EVENT_EXTERNAL event and resets
    // it, so each execution waits for a record made after it was queued.
    let _d = Dev::new(0);
    let (s, other) = (stream(), stream());
    let mut ev = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut ev, ACL_EVENT_EXTERNAL) });
    let d = malloc(4);
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    ok(unsafe { aclrtStreamWaitEvent(s, ev) });
    ok(unsafe { aclrtResetEvent(ev, s) });
    fill(d, 8, s);
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(s, &mut ri) });
    for round in 0..2 {
        h2d(d, &[0; 4]);
        ok(unsafe { aclmdlRIExecuteAsync(ri, s) });
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut st = 0;
        ok(unsafe { aclrtStreamQuery(s, &mut st) });
        assert_eq!(
            st, ACL_STREAM_STATUS_NOT_READY,
            "round {round}: the model waits"
        );
        assert_eq!(read_u32(d), 0, "round {round}");
        ok(unsafe { aclrtRecordEvent(ev, other) });
        ok(unsafe { aclrtSynchronizeStream(s) });
        assert_eq!(read_u32(d), 0x0808_0808, "round {round}");
    }
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(other) });
}
