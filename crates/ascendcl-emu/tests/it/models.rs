//! Built model runtime instances (`aclmdlRIBuildBegin`, `aclmdlRIBindStream`, `aclmdlRIEndTask`,
//! `aclmdlRIBuildEnd`, `aclmdlRIExecute[Async]`, `aclmdlRIUnbindStream`, `aclmdlRIAbort`,
//! `aclmdlRIDestroy`), stream activation and switching: the code of every documented check,
//! and what executions run.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const HEAD: u32 = 0;
const DEFAULT: u32 = 0x7FFF_FFFF;

#[track_caller]
fn is(code: aclError, want: AclError) {
    err(code, want.code());
}

fn persistent() -> aclrtStream {
    stream_with(ACL_STREAM_PERSISTENT)
}

fn stream_with(flags: u32) -> aclrtStream {
    let mut s = null_mut();
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, flags) });
    s
}

fn build() -> aclmdlRI {
    let mut ri = null_mut();
    ok(unsafe { aclmdlRIBuildBegin(&mut ri, 0) });
    ri
}

fn read_u32(p: *mut c_void) -> u32 {
    let mut b = [0u8; 4];
    d2h(&mut b, p);
    u32::from_le_bytes(b)
}

fn write_u32(p: *mut c_void, v: u32) {
    h2d(p, &v.to_le_bytes());
}

/// `aclrtMemsetAsync` of a whole u32 word to `byte`.
fn fill(p: *mut c_void, byte: u8, s: aclrtStream) {
    ok(unsafe { aclrtMemsetAsync(p, 4, byte as i32, 4, s) });
}

#[test]
fn build_begin_and_bind_checks() {
    let _d = Dev::new(0);
    let mut ri = null_mut();
    is(
        unsafe { aclmdlRIBuildBegin(null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRIBuildBegin(&mut ri, 1) },
        AclError::PARAM_INVALID,
    );
    // A thread with no current context.
    std::thread::spawn(|| {
        let mut ri = null_mut();
        is(
            unsafe { aclmdlRIBuildBegin(&mut ri, 0) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();

    let ri = build();
    let p = persistent();
    is(
        unsafe { aclmdlRIBindStream(null_mut(), p, HEAD) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRIBindStream(ri, p, 5) },
        AclError::PARAM_INVALID,
    );
    let dead = persistent();
    ok(unsafe { aclrtDestroyStream(dead) });
    is(
        unsafe { aclmdlRIBindStream(ri, dead, HEAD) },
        AclError::INVALID_HANDLE,
    );
    let gone = build();
    ok(unsafe { aclmdlRIDestroy(gone) });
    is(
        unsafe { aclmdlRIBindStream(gone, p, HEAD) },
        AclError::INVALID_HANDLE,
    );
    // Only persistent streams bind (the default stream is not one).
    let plain = stream();
    is(
        unsafe { aclmdlRIBindStream(ri, plain, HEAD) },
        AclError::PARAM_INVALID,
    );
    is(
        unsafe { aclmdlRIBindStream(ri, null_mut(), HEAD) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    // A bound stream does not capture.
    is(
        unsafe { aclmdlRICaptureBegin(p, 0) },
        AclError::STREAM_MODEL,
    );
    // One model per stream.
    is(
        unsafe { aclmdlRIBindStream(ri, p, DEFAULT) },
        AclError::STREAM_MODEL,
    );
    let other = build();
    is(
        unsafe { aclmdlRIBindStream(other, p, HEAD) },
        AclError::STREAM_MODEL,
    );
    // A captured model takes no streams.
    let cap_src = stream();
    ok(unsafe { aclmdlRICaptureBegin(cap_src, 0) });
    let mut captured = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(cap_src, &mut captured) });
    let p2 = persistent();
    is(
        unsafe { aclmdlRIBindStream(captured, p2, HEAD) },
        AclError::PARAM_INVALID,
    );
    // A capturing stream does not bind.
    ok(unsafe { aclmdlRICaptureBegin(p2, 0) });
    is(
        unsafe { aclmdlRIBindStream(other, p2, HEAD) },
        AclError::STREAM_CAPTURED,
    );
    let mut tmp = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(p2, &mut tmp) });
    ok(unsafe { aclmdlRIDestroy(tmp) });
    // Device-use-only, STOP failure mode, fast launch.
    let dev_only = stream_with(ACL_STREAM_PERSISTENT | ACL_STREAM_DEVICE_USE_ONLY);
    is(
        unsafe { aclmdlRIBindStream(other, dev_only, HEAD) },
        AclError::RT_INTERNAL_ERROR,
    );
    let fast = stream_with(ACL_STREAM_PERSISTENT | ACL_STREAM_FAST_LAUNCH);
    is(
        unsafe { aclmdlRIBindStream(other, fast, HEAD) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Another context's stream.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx2 = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx2, 0) });
    let foreign = persistent();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    is(
        unsafe { aclmdlRIBindStream(other, foreign, HEAD) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtDestroyContext(ctx2) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    // After the build ended, no more streams.
    ok(unsafe { aclmdlRIBuildEnd(other, null_mut()) });
    is(
        unsafe { aclmdlRIBindStream(other, p2, HEAD) },
        AclError::PARAM_INVALID,
    );

    for m in [ri, other, captured] {
        ok(unsafe { aclmdlRIDestroy(m) });
    }
    for s in [p, p2, plain, cap_src, dev_only, fast] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

#[test]
fn stop_mode_streams_do_not_bind() {
    let _device = failing_tasks();
    // STOP failure mode switches the whole context: a context of its own.
    let _d = Dev::new(0);
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let p = persistent();
    ok(unsafe { aclrtSetStreamFailureMode(p, ACL_STOP_ON_FAILURE as u64) });
    let ri = build();
    is(
        unsafe { aclmdlRIBindStream(ri, p, HEAD) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
}

#[test]
fn end_task_build_end_unbind_and_destroy_checks() {
    let _d = Dev::new(0);
    let ri = build();
    let p = persistent();
    let loose = persistent();
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    is(
        unsafe { aclmdlRIEndTask(null_mut(), p) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRIEndTask(ri, loose) },
        AclError::STREAM_MODEL,
    );
    is(
        unsafe { aclmdlRIBuildEnd(null_mut(), null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut x = 0u8;
    is(
        unsafe { aclmdlRIBuildEnd(ri, (&raw mut x).cast()) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRIUnbindStream(null_mut(), p) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclmdlRIUnbindStream(ri, loose) },
        AclError::STREAM_MODEL,
    );
    // Captured models: 107000 for the build functions.
    let src = stream();
    ok(unsafe { aclmdlRICaptureBegin(src, 0) });
    let mut cap = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(src, &mut cap) });
    is(unsafe { aclmdlRIEndTask(cap, p) }, AclError::PARAM_INVALID);
    is(
        unsafe { aclmdlRIBuildEnd(cap, null_mut()) },
        AclError::PARAM_INVALID,
    );
    is(
        unsafe { aclmdlRIUnbindStream(cap, p) },
        AclError::PARAM_INVALID,
    );
    // A bound stream cannot be destroyed.
    is(unsafe { aclrtDestroyStream(p) }, AclError::STREAM_MODEL);
    ok(unsafe { aclmdlRIEndTask(ri, p) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    is(
        unsafe { aclmdlRIBuildEnd(ri, null_mut()) },
        AclError::PARAM_INVALID,
    );
    // After the build, the bound stream takes no more tasks (events neither).
    let d = malloc(4);
    is(
        unsafe { aclrtMemsetAsync(d, 4, 0, 4, p) },
        AclError::STREAM_MODEL,
    );
    let ev = event();
    is(unsafe { aclrtRecordEvent(ev, p) }, AclError::STREAM_MODEL);
    // Unbinding gives the stream back: its tasks run again.
    ok(unsafe { aclmdlRIUnbindStream(ri, p) });
    write_u32(d, 0);
    fill(d, 7, p);
    ok(unsafe { aclrtSynchronizeStream(p) });
    assert_eq!(read_u32(d), 0x0707_0707);
    is(
        unsafe { aclmdlRIDestroy(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclmdlRIDestroy(ri) });
    is(unsafe { aclmdlRIDestroy(ri) }, AclError::INVALID_HANDLE);
    ok(unsafe { aclmdlRIDestroy(cap) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    free(d);
    for s in [p, loose, src] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

#[test]
fn execute_checks() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let p = persistent();
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    let exec = stream();
    is(
        unsafe { aclmdlRIExecute(null_mut(), -1) },
        AclError::INVALID_PARAM,
    );
    is(unsafe { aclmdlRIExecute(ri, 0) }, AclError::PARAM_INVALID);
    is(unsafe { aclmdlRIExecute(ri, -2) }, AclError::PARAM_INVALID);
    // Not built yet.
    is(unsafe { aclmdlRIExecute(ri, -1) }, AclError::PARAM_INVALID);
    is(
        unsafe { aclmdlRIExecuteAsync(ri, exec) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    // The execution stream: not a model stream, not persistent.
    is(
        unsafe { aclmdlRIExecuteAsync(ri, p) },
        AclError::PARAM_INVALID,
    );
    let loose = persistent();
    is(
        unsafe { aclmdlRIExecuteAsync(ri, loose) },
        AclError::PARAM_INVALID,
    );
    // Captured models have no synchronous execution.
    let src = stream();
    ok(unsafe { aclmdlRICaptureBegin(src, 0) });
    let mut cap = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(src, &mut cap) });
    is(unsafe { aclmdlRIExecute(cap, -1) }, AclError::PARAM_INVALID);
    // Abort: NULL is the runtime's 107000; captured models do not support it.
    is(
        unsafe { aclmdlRIAbort(null_mut()) },
        AclError::PARAM_INVALID,
    );
    is(unsafe { aclmdlRIAbort(cap) }, AclError::FEATURE_NOT_SUPPORT);
    ok(unsafe { aclmdlRIAbort(ri) });
    // An empty model runs.
    ok(unsafe { aclmdlRIExecute(ri, -1) });
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    ok(unsafe { aclrtSynchronizeStream(exec) });
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclmdlRIDestroy(cap) });
    for s in [p, loose, src, exec] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count(_: *mut c_void) {
    RUNS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_built_model_runs_its_tasks_at_each_execution_only() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let p = persistent();
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    let (src, dst) = (malloc_host(64), malloc(64));
    let back = malloc_host(64);
    let before = RUNS.load(Ordering::SeqCst);
    ok(unsafe { aclrtMemsetAsync(dst, 64, 0, 64, p) });
    ok(unsafe { aclrtMemcpyAsync(dst, 32, src, 32, ACL_MEMCPY_HOST_TO_DEVICE, p) });
    ok(unsafe { aclrtLaunchHostFunc(p, Some(count), null_mut()) });
    ok(unsafe { aclrtMemcpyAsync(back, 64, dst, 64, ACL_MEMCPY_DEVICE_TO_HOST, p) });
    ok(unsafe { aclmdlRIEndTask(ri, p) });
    // Tasks after the end task are recorded but never run.
    ok(unsafe { aclrtLaunchHostFunc(p, Some(count), null_mut()) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(p) });
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        before,
        "nothing ran while building"
    );
    let exec = stream();
    for round in 1..=4u8 {
        unsafe { std::ptr::write_bytes(src.cast::<u8>(), round, 64) };
        if round % 2 == 0 {
            ok(unsafe { aclmdlRIExecute(ri, -1) });
        } else {
            ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
            ok(unsafe { aclrtSynchronizeStream(exec) });
        }
        let out = unsafe { std::slice::from_raw_parts(back.cast::<u8>(), 64) };
        assert!(out[..32].iter().all(|b| *b == round), "round {round}");
        assert!(out[32..].iter().all(|b| *b == 0), "the memset ran first");
        assert_eq!(RUNS.load(Ordering::SeqCst), before + round as usize);
    }
    ok(unsafe { aclmdlRIUnbindStream(ri, p) });
    ok(unsafe { aclmdlRIDestroy(ri) });
    free_host(src);
    free_host(back);
    free(dst);
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyStream(exec) });
}

/// A copy from pageable memory on a built model's stream that is not capturing: the runtime
/// refuses such a copy only on a capturing stream; elsewhere it synchronises the stream and copies
/// synchronously, so the bytes are in place when the call returns and the model holds no task
/// for it.
#[test]
fn a_pageable_copy_on_a_model_stream_is_made_at_once_and_not_recorded() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let p = persistent();
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    let dst = malloc(64);
    h2d(dst, &[0u8; 64]);
    let pageable = [0x77u8; 64];
    ok(unsafe {
        aclrtMemcpyAsync(
            dst,
            64,
            pageable.as_ptr().cast(),
            64,
            ACL_MEMCPY_HOST_TO_DEVICE,
            p,
        )
    });
    let mut back = [0u8; 64];
    d2h(&mut back, dst);
    assert_eq!(back, [0x77; 64], "copied before the call returned");
    // Device to pageable memory, the same.
    let mut out = [0u8; 64];
    ok(unsafe {
        aclrtMemcpyAsync(
            out.as_mut_ptr().cast(),
            64,
            dst,
            64,
            ACL_MEMCPY_DEVICE_TO_HOST,
            p,
        )
    });
    assert_eq!(out, [0x77; 64]);
    ok(unsafe { aclmdlRIEndTask(ri, p) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    // Running the model does not copy again.
    h2d(dst, &[0u8; 64]);
    ok(unsafe { aclmdlRIExecute(ri, -1) });
    d2h(&mut back, dst);
    assert_eq!(back, [0u8; 64], "the model recorded no copy");
    ok(unsafe { aclmdlRIUnbindStream(ri, p) });
    ok(unsafe { aclmdlRIDestroy(ri) });
    free(dst);
    ok(unsafe { aclrtDestroyStream(p) });
}

#[test]
fn default_streams_run_only_when_activated() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let (head, active, idle) = (persistent(), persistent(), persistent());
    ok(unsafe { aclmdlRIBindStream(ri, head, HEAD) });
    ok(unsafe { aclmdlRIBindStream(ri, active, DEFAULT) });
    ok(unsafe { aclmdlRIBindStream(ri, idle, DEFAULT) });
    let (a, b, c) = (malloc(4), malloc(4), malloc(4));
    let done = event();
    // head: a = 1s, activate `active`, then wait until `active` recorded `done`.
    fill(a, 1, head);
    ok(unsafe { aclrtActiveStream(active, head) });
    ok(unsafe { aclrtStreamWaitEvent(head, done) });
    ok(unsafe { aclrtResetEvent(done, head) });
    // active: b = 2s, record done. idle (never activated): c = 3s.
    fill(b, 2, active);
    ok(unsafe { aclrtRecordEvent(done, active) });
    fill(c, 3, idle);
    for s in [head, active, idle] {
        ok(unsafe { aclmdlRIEndTask(ri, s) });
    }
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    for round in 0..2 {
        for p in [a, b, c] {
            write_u32(p, 0);
        }
        ok(unsafe { aclmdlRIExecute(ri, 5000) });
        assert_eq!(read_u32(a), 0x0101_0101, "round {round}");
        assert_eq!(
            read_u32(b),
            0x0202_0202,
            "round {round}: the activated stream ran"
        );
        assert_eq!(
            read_u32(c),
            0,
            "round {round}: a default stream runs only when activated"
        );
    }
    // Checks: NULL, streams of no model or of two models.
    let loose = persistent();
    is(
        unsafe { aclrtActiveStream(null_mut(), head) },
        AclError::INVALID_PARAM,
    );
    is(
        unsafe { aclrtActiveStream(loose, head) },
        AclError::STREAM_MODEL,
    );
    is(
        unsafe { aclrtActiveStream(head, loose) },
        AclError::STREAM_MODEL,
    );
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyEvent(done) });
    for p in [a, b, c] {
        free(p);
    }
    for s in [head, active, idle, loose] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

#[test]
fn switch_stream_compares_device_values_when_it_runs() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let (main, taken) = (persistent(), persistent());
    ok(unsafe { aclmdlRIBindStream(ri, main, HEAD) });
    ok(unsafe { aclmdlRIBindStream(ri, taken, DEFAULT) });
    let (l, r, after, branch) = (malloc(8), malloc(8), malloc(4), malloc(4));
    ok(unsafe {
        aclrtSwitchStream(
            l,
            ACL_RT_GREATER,
            r,
            ACL_RT_SWITCH_INT32,
            taken,
            null_mut(),
            main,
        )
    });
    fill(after, 5, main);
    fill(branch, 6, taken);
    ok(unsafe { aclmdlRIEndTask(ri, main) });
    ok(unsafe { aclmdlRIEndTask(ri, taken) });
    // Checks.
    let host = malloc_host(8);
    let loose = persistent();
    let sw = |l, c, r, t, t2, f, s| unsafe { aclrtSwitchStream(l, c, r, t, t2, f, s) };
    is(
        sw(null_mut(), 0, r, 0, taken, null_mut(), main),
        AclError::INVALID_PARAM,
    );
    is(sw(l, 0, r, 0, taken, taken, main), AclError::INVALID_PARAM);
    is(
        sw(l, 6, r, 0, taken, null_mut(), main),
        AclError::PARAM_INVALID,
    );
    is(
        sw(l, 0, r, 2, taken, null_mut(), main),
        AclError::PARAM_INVALID,
    );
    is(
        sw(host, 0, r, 0, taken, null_mut(), main),
        AclError::PARAM_INVALID,
    );
    is(
        sw(l, 0, r, 0, loose, null_mut(), main),
        AclError::STREAM_MODEL,
    );
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    for (a, b, switched) in [(5i32, 3i32, true), (3, 5, false), (4, 4, false)] {
        h2d(l, &a.to_le_bytes());
        h2d(r, &b.to_le_bytes());
        write_u32(after, 0);
        write_u32(branch, 0);
        ok(unsafe { aclmdlRIExecute(ri, -1) });
        assert_eq!(read_u32(branch) != 0, switched, "{a} > {b}");
        assert_eq!(
            read_u32(after) != 0,
            !switched,
            "{a} > {b}: the switching stream stops"
        );
    }
    ok(unsafe { aclmdlRIDestroy(ri) });
    free_host(host);
    for p in [l, r, after, branch] {
        free(p);
    }
    for s in [main, taken, loose] {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

static STARTED: AtomicUsize = AtomicUsize::new(0);
static FINISHED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn started(_: *mut c_void) {
    STARTED.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn finished(_: *mut c_void) {
    FINISHED.fetch_add(1, Ordering::SeqCst);
}

/// Waits until `c` exceeds `n`.
fn until_above(c: &AtomicUsize, n: usize) {
    while c.load(Ordering::SeqCst) <= n {
        std::thread::yield_now();
    }
}

#[test]
fn execute_times_out_abort_stops_and_destroy_waits() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let ri = build();
    let p = persistent();
    ok(unsafe { aclmdlRIBindStream(ri, p, HEAD) });
    let word = malloc(8);
    h2d(word, &0u64.to_le_bytes());
    ok(unsafe { aclrtLaunchHostFunc(p, Some(started), null_mut()) });
    ok(unsafe { aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, p) });
    ok(unsafe { aclrtLaunchHostFunc(p, Some(finished), null_mut()) });
    ok(unsafe { aclmdlRIEndTask(ri, p) });
    ok(unsafe { aclmdlRIBuildEnd(ri, null_mut()) });
    // The wait is not met: the synchronous execution times out and goes on.
    let s0 = STARTED.load(Ordering::SeqCst);
    is(
        unsafe { aclmdlRIExecute(ri, 20) },
        AclError::STREAM_SYNC_TIMEOUT,
    );
    until_above(&STARTED, s0);
    // Abort stops it and returns once it stopped; it never finished.
    ok(unsafe { aclmdlRIAbort(ri) });
    assert_eq!(FINISHED.load(Ordering::SeqCst), 0);
    // An asynchronous execution that is aborted reports 507023 at the stream's sync.
    let exec = stream();
    let s1 = STARTED.load(Ordering::SeqCst);
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    let h = ri as usize;
    let aborter = std::thread::spawn(move || {
        until_above(&STARTED, s1);
        ok(unsafe { aclmdlRIAbort(h as aclmdlRI) });
    });
    is(
        unsafe { aclrtSynchronizeStream(exec) },
        AclError::MODEL_ABORT_NORMAL,
    );
    aborter.join().unwrap();
    assert_eq!(FINISHED.load(Ordering::SeqCst), 0);
    // Destroy waits for a running execution to end.
    let s2 = STARTED.load(Ordering::SeqCst);
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    until_above(&STARTED, s2);
    let w = word as usize;
    let releaser = std::thread::spawn(move || {
        let _d = Dev::new(0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        h2d(w as *mut c_void, &1u64.to_le_bytes());
    });
    ok(unsafe { aclmdlRIDestroy(ri) });
    assert_eq!(
        FINISHED.load(Ordering::SeqCst),
        1,
        "destroy returned before the execution ended"
    );
    releaser.join().unwrap();
    ok(unsafe { aclrtSynchronizeStream(exec) });
    free(word);
    ok(unsafe { aclrtDestroyStream(p) });
    ok(unsafe { aclrtDestroyStream(exec) });
}

#[test]
fn host_function_subscription_is_not_supported_on_a2() {
    // The default SoC (Ascend910B2): the runtime answers 207000 and the message names the SoC.
    let _d = Dev::new(0);
    let s = stream();
    is(
        unsafe { aclrtSubscribeHostFunc(1, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    let e = unsafe { aclrtProcessHostFunc(10) };
    assert_eq!(e, AclError::FEATURE_NOT_SUPPORT.code());
    let msg = take_msg();
    assert!(msg.contains("Ascend910B2"), "{msg}");
    is(
        unsafe { aclrtUnSubscribeHostFunc(1, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtDestroyStream(s) });
}
