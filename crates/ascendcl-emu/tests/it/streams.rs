//! Streams, events, async copies, host functions and callbacks.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A host function that sleeps for the number of milliseconds pointed to by `arg`.
extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as u64));
}

/// A host function that appends `arg` to the global log.
static LOG: Mutex<Vec<usize>> = Mutex::new(Vec::new());
extern "C" fn log_arg(arg: *mut c_void) {
    LOG.lock().unwrap().push(arg as usize);
}

extern "C" fn bump(arg: *mut c_void) {
    // SAFETY: tests pass a pointer to a live AtomicUsize.
    let c = unsafe { &*(arg as *const AtomicUsize) };
    c.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn stream_lifecycle_and_queries() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    err(
        unsafe { aclrtCreateStream(null_mut()) },
        AclError::INVALID_PARAM,
    );
    let s = stream();
    let (mut p, mut f) = (9u32, 9u32);
    ok(unsafe { aclrtStreamGetPriority(s, &mut p) });
    ok(unsafe { aclrtStreamGetFlags(s, &mut f) });
    assert_eq!((p, f), (0, 0));
    err(
        unsafe { aclrtStreamGetPriority(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtStreamGetFlags(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut c = null_mut();
    ok(unsafe {
        aclrtCreateStreamWithConfig(&mut c, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC)
    });
    ok(unsafe { aclrtStreamGetPriority(c, &mut p) });
    ok(unsafe { aclrtStreamGetFlags(c, &mut f) });
    assert_eq!((p, f), (3, 3));
    err(
        unsafe { aclrtCreateStreamWithConfig(&mut c, 8, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCreateStreamWithConfig(&mut c, 0, 0x100) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCreateStreamWithConfig(null_mut(), 0, 0) },
        AclError::INVALID_PARAM,
    );
    let mut st = 7;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_COMPLETE);
    err(
        unsafe { aclrtStreamQuery(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 100 as *mut c_void) });
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(
        st, ACL_STREAM_STATUS_NOT_READY,
        "async: the call returns before the work runs"
    );
    err(
        unsafe { aclrtSynchronizeStreamWithTimeout(s, 1) },
        AclError::STREAM_SYNC_TIMEOUT,
    );
    err(
        unsafe { aclrtSynchronizeStreamWithTimeout(s, -2) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSynchronizeStreamWithTimeout(s, -1) });
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_COMPLETE);
    err(
        unsafe { aclrtSetStreamFailureMode(s, 2) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtSetStreamFailureMode(s, 0) });
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStreamForce(c) });
    // Destroyed handles: 107017.
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::INVALID_HANDLE,
    );
    err(unsafe { aclrtDestroyStream(s) }, AclError::INVALID_HANDLE);
    err(
        unsafe { aclrtStreamQuery(c, &mut st) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtDestroyStream(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtDestroyStreamForce(null_mut()) },
        AclError::INVALID_PARAM,
    );
    // The NULL stream is the default stream.
    ok(unsafe { aclrtSynchronizeStream(null_mut()) });
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    assert!(!def.is_null());
    err(unsafe { aclrtDestroyStream(def) }, AclError::PARAM_INVALID);
    err(
        unsafe { aclrtCtxGetCurrentDefaultStream(null_mut()) },
        AclError::INVALID_PARAM,
    );
}

#[test]
fn tasks_run_in_order_and_destroy_waits() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let base = 1_000_000 * (std::process::id() as usize % 100 + 1);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 30 as *mut c_void) });
    for i in 0..50 {
        ok(unsafe { aclrtLaunchHostFunc(s, Some(log_arg), (base + i) as *mut c_void) });
    }
    // DestroyStream waits for the queued work.
    ok(unsafe { aclrtDestroyStream(s) });
    let log: Vec<usize> = LOG
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|v| *v >= base && *v < base + 50)
        .collect();
    assert_eq!(log, (base..base + 50).collect::<Vec<_>>());
}

/// A host function that holds its stream until the flag at `arg` (an `AtomicBool`) is set.
extern "C" fn hold_until(arg: *mut c_void) {
    // SAFETY: tests pass a pointer to an AtomicBool that outlives the stream's work.
    let open = unsafe { &*(arg as *const AtomicBool) };
    while !open.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Opens `gate` from another thread after a short while, so that a call made meanwhile finds
/// the work behind the gate queued and not started.
fn open_later(gate: &Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let g = Arc::clone(gate);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        g.store(true, Ordering::SeqCst);
    })
}

#[test]
fn destroy_force_runs_the_work_already_queued() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let gate = Arc::new(AtomicBool::new(false));
    let n = Arc::new(AtomicUsize::new(0));
    let dev = malloc(64);
    h2d(dev, &[0u8; 64]);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(hold_until), Arc::as_ptr(&gate) as *mut c_void) });
    for _ in 0..10 {
        ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), Arc::as_ptr(&n) as *mut c_void) });
    }
    ok(unsafe { aclrtMemsetAsync(dev, 64, 0x5a, 64, s) });
    let opener = open_later(&gate);
    // Everything behind the gate was queued and had not started when the call was made.
    ok(unsafe { aclrtDestroyStreamForce(s) });
    opener.join().unwrap();
    assert_eq!(
        n.load(Ordering::SeqCst),
        10,
        "the host functions queued before the forced destroy ran before it returned"
    );
    let mut back = [0u8; 64];
    d2h(&mut back, dev);
    assert_eq!(
        back, [0x5a; 64],
        "the memset queued before the forced destroy ran"
    );
    free(dev);
}

#[test]
fn destroy_force_gives_up_waits_that_would_never_end() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let n = Arc::new(AtomicUsize::new(0));
    // A notify no one records.
    let mut notify = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut notify, 0) });
    ok(unsafe { aclrtWaitAndResetNotify(notify, s, 0) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), Arc::as_ptr(&n) as *mut c_void) });
    // A record that stays behind a closed gate on another stream.
    let held = stream();
    let gate = Arc::new(AtomicBool::new(false));
    ok(unsafe { aclrtLaunchHostFunc(held, Some(hold_until), Arc::as_ptr(&gate) as *mut c_void) });
    let ev = event();
    ok(unsafe { aclrtRecordEvent(ev, held) });
    ok(unsafe { aclrtStreamWaitEvent(s, ev) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), Arc::as_ptr(&n) as *mut c_void) });
    // A value that never comes.
    let word = malloc(8);
    h2d(word, &0u64.to_ne_bytes());
    ok(unsafe { aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, s) });
    let dev = malloc(64);
    h2d(dev, &[0u8; 64]);
    ok(unsafe { aclrtMemsetAsync(dev, 64, 0x33, 64, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), Arc::as_ptr(&n) as *mut c_void) });
    // The call neither waits for the record, the notify nor the value: each wait gives up, and
    // the work queued behind them runs.
    ok(unsafe { aclrtDestroyStreamForce(s) });
    assert_eq!(
        n.load(Ordering::SeqCst),
        3,
        "the work queued behind the abandoned waits ran before the call returned"
    );
    let mut back = [0u8; 64];
    d2h(&mut back, dev);
    assert_eq!(back, [0x33; 64]);
    gate.store(true, Ordering::SeqCst);
    ok(unsafe { aclrtDestroyStream(held) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    ok(unsafe { aclrtDestroyNotify(notify) });
    free(word);
    free(dev);
}

#[test]
fn host_func_errors() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    err(
        unsafe { aclrtLaunchHostFunc(null_mut(), None, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtLaunchHostFunc(0xdead as aclrtStream, Some(log_arg), null_mut()) },
        AclError::INVALID_HANDLE,
    );
    std::thread::spawn(|| {
        err(
            unsafe { aclrtLaunchHostFunc(null_mut(), Some(log_arg), null_mut()) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

#[test]
fn async_copies_and_location_rules() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let d = malloc(1 << 16);
    let h = malloc_host(1 << 16);
    let data: Vec<u8> = (0..1 << 16).map(|i| (i * 7) as u8).collect();
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), h.cast::<u8>(), data.len()) };
    // Pinned → device: queued; a host function in front holds the stream so the copy has not
    // run when the call returns.
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 50 as *mut c_void) });
    ok(unsafe { aclrtMemsetAsync(d, 1 << 16, 0, 1 << 16, s) });
    ok(unsafe { aclrtMemcpyAsync(d, 1 << 16, h, 1 << 16, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    let mut st = 0;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut out = vec![0u8; 1 << 16];
    d2h(&mut out, d);
    assert_eq!(out, data);
    // Pageable → device: completes before the call returns, even behind queued work.
    let page: Vec<u8> = vec![0x5a; 4096];
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 20 as *mut c_void) });
    ok(unsafe {
        aclrtMemcpyAsync(
            d,
            4096,
            page.as_ptr().cast(),
            4096,
            ACL_MEMCPY_HOST_TO_DEVICE,
            s,
        )
    });
    let mut first = [0u8; 4096];
    d2h(&mut first, d);
    assert_eq!(first, [0x5a; 4096]);
    // Checks, in order.
    let p = page.as_ptr().cast::<c_void>();
    ok(unsafe { aclrtMemcpyAsync(null_mut(), 0, null(), 0, 99, s) });
    err(
        unsafe { aclrtMemcpyAsync(null_mut(), 8, p, 8, 1, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsync(d, 8, null(), 8, 1, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsync(d, 8, p, 8, 6, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsync(d, 8, p, 8, 1, 0xbad as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtMemcpyAsync(d, 8, p, 16, 1, s) },
        AclError::PARAM_INVALID,
    );
    // Location/kind: pageable → device with D2H is rejected.
    err(
        unsafe { aclrtMemcpyAsync(d, 8, p, 8, ACL_MEMCPY_DEVICE_TO_HOST, s) },
        AclError::PARAM_INVALID,
    );
    // Device → pageable with H2D is rejected; DEFAULT picks D2H.
    let mut back = vec![0u8; 8];
    err(
        unsafe {
            aclrtMemcpyAsync(
                back.as_mut_ptr().cast(),
                8,
                d,
                8,
                ACL_MEMCPY_HOST_TO_DEVICE,
                s,
            )
        },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemcpyAsync(back.as_mut_ptr().cast(), 8, d, 8, ACL_MEMCPY_DEFAULT, s) });
    assert_eq!(back, vec![0x5a; 8], "pageable destination: done on return");
    // Pinned → pinned is forced to H2H: not supported asynchronously.
    let h2 = malloc_host(64);
    err(
        unsafe { aclrtMemcpyAsync(h2, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Pageable → pageable, DEFAULT → H2H: 207000.
    let mut q = [0u8; 8];
    err(
        unsafe { aclrtMemcpyAsync(q.as_mut_ptr().cast(), 8, p, 8, ACL_MEMCPY_DEFAULT, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // dst == src (device to device): success.
    ok(unsafe { aclrtMemcpyAsync(d, 8, d, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s) });
    // HOST_TO_BUF_TO_DEVICE stages the bytes at enqueue time.
    unsafe { std::ptr::write_bytes(h2.cast::<u8>(), 0x11, 64) };
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 20 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h2, 64, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s) });
    unsafe { std::ptr::write_bytes(h2.cast::<u8>(), 0x22, 64) };
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut staged = [0u8; 64];
    d2h(&mut staged, d);
    assert_eq!(staged, [0x11; 64]);
    // Out of bounds is checked before queueing.
    err(
        unsafe { aclrtMemcpyAsync(d, 1 << 17, h, (1 << 16) + 1, 1, s) },
        AclError::PARAM_INVALID,
    );
    free_host(h2);
    free_host(h);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn stream_of_another_context() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let d = malloc(64);
    let h = malloc_host(64);
    let mut ctx = null_mut();
    let mut orig = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut orig) });
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    err(
        unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) },
        AclError::STREAM_CONTEXT,
    );
    err(
        unsafe { aclrtMemsetAsync(d, 64, 0, 64, s) },
        AclError::STREAM_CONTEXT,
    );
    err(
        unsafe { aclrtLaunchHostFunc(s, Some(log_arg), null_mut()) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtSetCurrentContext(orig) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyContext(ctx) });
    err(
        unsafe { aclrtDestroyContext(ctx) },
        AclError::INVALID_HANDLE,
    );
    free(d);
    free_host(h);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn memset_async_checks() {
    let _d = Dev::new(0);
    let s = stream();
    let d = malloc(64);
    ok(unsafe { aclrtMemsetAsync(null_mut(), 0, 0, 0, s) });
    err(
        unsafe { aclrtMemsetAsync(null_mut(), 8, 0, 8, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemsetAsync(d, 8, 0, 8, 0x77 as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtMemsetAsync(d, 8, 0, 16, s) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemsetAsync(d, 128, 0, 100, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemsetAsync(d, 64, 0x33, 64, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut o = [0u8; 64];
    d2h(&mut o, d);
    assert_eq!(o, [0x33; 64]);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn memcpy_2d_async() {
    let _d = Dev::new(0);
    let s = stream();
    let a = malloc(256);
    let b = malloc(256);
    h2d(a, &[9u8; 256]);
    ok(unsafe { aclrtMemcpy2dAsync(b, 16, a, 32, 8, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut o = [0u8; 256];
    d2h(&mut o, b);
    for r in 0..8 {
        assert_eq!(&o[r * 16..r * 16 + 8], &[9u8; 8]);
    }
    err(
        unsafe {
            aclrtMemcpy2dAsync(
                b,
                16,
                a,
                32,
                8,
                8,
                ACL_MEMCPY_DEVICE_TO_DEVICE,
                0x99 as aclrtStream,
            )
        },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtMemcpy2dAsync(b, 4, a, 32, 8, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s) },
        AclError::INVALID_PARAM,
    );
    free(a);
    free(b);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn events_record_query_sync_time() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let (a, b) = (event(), event());
    let mut st = 9;
    err(
        unsafe { aclrtQueryEventStatus(a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtQueryEventStatus(null_mut(), &mut st) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtQueryEventStatus(a, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY, "never recorded");
    let mut ms = 0f32;
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, b) },
        AclError::RT_INTERNAL_ERROR,
    );
    let mut ts = 0u64;
    err(
        unsafe { aclrtEventGetTimestamp(a, &mut ts) },
        AclError::RT_INTERNAL_ERROR,
    );
    ok(unsafe { aclrtRecordEvent(a, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 30 as *mut c_void) });
    ok(unsafe { aclrtRecordEvent(b, s) });
    ok(unsafe { aclrtQueryEventStatus(b, &mut st) });
    assert_eq!(
        st, ACL_EVENT_RECORDED_STATUS_NOT_READY,
        "stream has not reached it"
    );
    err(
        unsafe { aclrtSynchronizeEventWithTimeout(b, 1) },
        AclError::EVENT_SYNC_TIMEOUT,
    );
    err(
        unsafe { aclrtSynchronizeEventWithTimeout(b, -5) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSynchronizeEvent(b) });
    ok(unsafe { aclrtQueryEventStatus(b, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    ok(unsafe { aclrtEventElapsedTime(&mut ms, a, b) });
    assert!((29.0..5000.0).contains(&ms), "{ms} ms");
    err(
        unsafe { aclrtEventElapsedTime(null_mut(), a, b) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, null_mut(), b) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtEventGetTimestamp(b, &mut ts) });
    let mut ta = 0;
    ok(unsafe { aclrtEventGetTimestamp(a, &mut ta) });
    assert!(ts >= ta + 29_000, "microseconds: {ta} .. {ts}");
    err(
        unsafe { aclrtEventGetTimestamp(b, null_mut()) },
        AclError::INVALID_PARAM,
    );
    // Reset on the stream: not ready again.
    ok(unsafe { aclrtResetEvent(b, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtQueryEventStatus(b, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
    err(
        unsafe { aclrtResetEvent(null_mut(), s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtRecordEvent(null_mut(), s) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtDestroyEvent(a) });
    ok(unsafe { aclrtDestroyEvent(b) });
    err(unsafe { aclrtDestroyEvent(a) }, AclError::INVALID_HANDLE);
    err(unsafe { aclrtRecordEvent(a, s) }, AclError::INVALID_HANDLE);
    err(
        unsafe { aclrtDestroyEvent(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtSynchronizeEvent(null_mut()) },
        AclError::INVALID_PARAM,
    );
    // Wrong handle type: a stream passed as an event.
    err(unsafe { aclrtDestroyEvent(s) }, AclError::INVALID_HANDLE);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn event_flags() {
    let _d = Dev::new(0);
    let mut e = null_mut();
    err(
        unsafe { aclrtCreateEvent(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtCreateEventWithFlag(&mut e, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCreateEventWithFlag(&mut e, 0x4) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCreateEventWithFlag(null_mut(), ACL_EVENT_SYNC) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtCreateEventExWithFlag(&mut e, 0x80) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtCreateEventWithFlag(&mut e, ACL_EVENT_SYNC) });
    let mut t = null_mut();
    ok(unsafe { aclrtCreateEventExWithFlag(&mut t, ACL_EVENT_TIME_LINE) });
    ok(unsafe { aclrtRecordEvent(e, null_mut()) });
    ok(unsafe { aclrtRecordEvent(t, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(null_mut()) });
    let mut ms = 0f32;
    // Without TIME_LINE an event cannot be timed.
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, e, t) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtEventElapsedTime(&mut ms, t, t) });
    assert_eq!(ms, 0.0);
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyEvent(t) });
    std::thread::spawn(|| {
        let mut e = null_mut();
        err(unsafe { aclrtCreateEvent(&mut e) }, AclError::CONTEXT_NULL);
    })
    .join()
    .unwrap();
}

#[test]
fn cross_stream_wait() {
    let _device = whole_device();
    let _d = Dev::new(0);
    let (s1, s2) = (stream(), stream());
    let e = event();
    let d = malloc(4096);
    let h = malloc_host(4096);
    unsafe { std::ptr::write_bytes(h.cast::<u8>(), 0x42, 4096) };
    // s1: slow, then write d; record e. s2: wait e, then read d back into h (pinned) .
    ok(unsafe { aclrtLaunchHostFunc(s1, Some(sleep_ms), 40 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 4096, h, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s1) });
    ok(unsafe { aclrtRecordEvent(e, s1) });
    err(
        unsafe { aclrtStreamWaitEvent(s2, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtStreamWaitEvent(s2, e) });
    let h2 = malloc_host(4096);
    ok(unsafe { aclrtMemcpyAsync(h2, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s2) });
    ok(unsafe { aclrtSynchronizeStream(s2) });
    let got = unsafe { std::slice::from_raw_parts(h2.cast::<u8>(), 4096) };
    assert!(got.iter().all(|b| *b == 0x42), "s2 waited for s1");
    ok(unsafe { aclrtSynchronizeDevice() });
    ok(unsafe { aclrtSynchronizeDeviceWithTimeout(-1) });
    err(
        unsafe { aclrtSynchronizeDeviceWithTimeout(-3) },
        AclError::PARAM_INVALID,
    );
    free_host(h);
    free_host(h2);
    free(d);
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyStream(s1) });
    ok(unsafe { aclrtDestroyStream(s2) });
}

#[test]
fn callbacks_through_process_report() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let n = Arc::new(AtomicUsize::new(0));
    // Launching on an unsubscribed stream: 107015.
    err(
        unsafe { aclrtLaunchCallback(Some(bump), Arc::as_ptr(&n) as *mut c_void, 0, s) },
        AclError::STREAM_NO_CB_REG,
    );
    err(
        unsafe { aclrtLaunchCallback(None, null_mut(), 0, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtLaunchCallback(Some(bump), null_mut(), 2, s) },
        AclError::INVALID_PARAM,
    );
    // ProcessReport on a thread without subscription: 107012.
    err(
        unsafe { aclrtProcessReport(10) },
        AclError::THREAD_SUBSCRIBE,
    );
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let worker = std::thread::spawn(move || {
        let tid = unsafe { libc::pthread_self() } as u64;
        tx.send(tid).unwrap();
        let mut timeouts = 0;
        while !stop2.load(Ordering::SeqCst) {
            match AclError(unsafe { aclrtProcessReport(20) }) {
                AclError::SUCCESS => {}
                AclError::REPORT_TIMEOUT => timeouts += 1,
                AclError::THREAD_SUBSCRIBE => std::thread::sleep(Duration::from_millis(1)),
                other => panic!("aclrtProcessReport: {other}"),
            }
        }
        timeouts
    });
    let tid = rx.recv().unwrap();
    ok(unsafe { aclrtSubscribeReport(tid, s) });
    err(
        unsafe { aclrtSubscribeReport(tid, s) },
        AclError::STREAM_SUBSCRIBE,
    );
    for _ in 0..5 {
        ok(unsafe {
            aclrtLaunchCallback(
                Some(bump),
                Arc::as_ptr(&n) as *mut c_void,
                ACL_CALLBACK_BLOCK,
                s,
            )
        });
    }
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(
        n.load(Ordering::SeqCst),
        5,
        "blocking callbacks ran before the sync returned"
    );
    // Let the reporting thread wait without work, so it sees a timeout.
    std::thread::sleep(Duration::from_millis(60));
    ok(unsafe { aclrtUnSubscribeReport(tid, s) });
    err(
        unsafe { aclrtUnSubscribeReport(tid, s) },
        AclError::STREAM_NO_CB_REG,
    );
    stop.store(true, Ordering::SeqCst);
    let timeouts = worker.join().unwrap();
    assert!(timeouts >= 1, "ProcessReport times out with 507012");
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn failure_mode_and_sticky_task_errors() {
    let _device = whole_device();
    let _d = Dev::new(0);
    // A context of its own: STOP mode and its failure belong to the context.
    let mut outer = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut outer) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let s = stream();
    let other = stream();
    let d = malloc(64);
    let h = malloc_host(64);
    ok(unsafe { aclrtSetStreamFailureMode(s, 1) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 30 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    let n = Arc::new(AtomicUsize::new(0));
    let np = Arc::as_ptr(&n) as *mut c_void;
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), np) });
    // Free while the copy is still queued: the task fails when it runs.
    free(d);
    assert_eq!(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR
    );
    assert!(take_msg().contains("freed"));
    assert_eq!(
        n.load(Ordering::SeqCst),
        0,
        "STOP mode skipped the later task"
    );
    // The stream stays failed: synchronisations and new work report the error ...
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    let r = unsafe { aclrtLaunchHostFunc(s, Some(bump), np) };
    let msg = take_msg();
    assert_eq!(r, AclError::RT_INTERNAL_ERROR);
    assert!(msg.contains("STOP failure mode"), "{msg}");
    // ... and so does every stream of the context, the default one included.
    err(
        unsafe { aclrtLaunchHostFunc(other, Some(bump), np) },
        AclError::RT_INTERNAL_ERROR,
    );
    err(
        unsafe { aclrtSynchronizeStream(other) },
        AclError::RT_INTERNAL_ERROR,
    );
    err(
        unsafe { aclrtLaunchHostFunc(null_mut(), Some(bump), np) },
        AclError::RT_INTERNAL_ERROR,
    );
    err(
        unsafe { aclrtSynchronizeDevice() },
        AclError::RT_INTERNAL_ERROR,
    );
    assert_eq!(n.load(Ordering::SeqCst), 0, "nothing ran");
    // Other contexts are unaffected.
    ok(unsafe { aclrtSetCurrentContext(outer) });
    let t = stream();
    ok(unsafe { aclrtLaunchHostFunc(t, Some(bump), np) });
    ok(unsafe { aclrtSynchronizeStream(t) });
    assert_eq!(n.load(Ordering::SeqCst), 1);
    ok(unsafe { aclrtDestroyStream(t) });
    free_host(h);
    // Destroying the context clears the failure with it.
    ok(unsafe { aclrtDestroyContext(ctx) });
}

#[test]
fn continue_mode_reports_a_failure_once_and_keeps_running() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    // A context of its own: another test may switch device 0's default context to STOP.
    let mut outer = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut outer) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let s = stream();
    let d = malloc(64);
    let h = malloc_host(64);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 30 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    let n = Arc::new(AtomicUsize::new(0));
    ok(unsafe { aclrtLaunchHostFunc(s, Some(bump), Arc::as_ptr(&n) as *mut c_void) });
    free(d);
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    assert_eq!(n.load(Ordering::SeqCst), 1, "CONTINUE ran the later task");
    ok(unsafe { aclrtSynchronizeStream(s) });
    free_host(h);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetCurrentContext(outer) });
}

#[test]
fn many_streams_many_threads() {
    let _d = Dev::new(0);
    std::thread::scope(|sc| {
        for t in 0..6usize {
            sc.spawn(move || {
                let _d = Dev::new(0);
                let streams: Vec<aclrtStream> = (0..8).map(|_| stream()).collect();
                let h = malloc_host(1 << 14);
                let bufs: Vec<*mut c_void> = (0..8).map(|_| malloc(1 << 14)).collect();
                for round in 0..20u8 {
                    unsafe { std::ptr::write_bytes(h.cast::<u8>(), round ^ t as u8, 1 << 14) };
                    for (s, b) in streams.iter().zip(&bufs) {
                        ok(unsafe { aclrtMemcpyAsync(*b, 1 << 14, h, 1 << 14, 1, *s) });
                    }
                    for s in &streams {
                        ok(unsafe { aclrtSynchronizeStream(*s) });
                    }
                    for b in &bufs {
                        let mut o = vec![0u8; 1 << 14];
                        d2h(&mut o, *b);
                        assert!(o.iter().all(|x| *x == round ^ t as u8));
                    }
                }
                for b in bufs {
                    free(b);
                }
                free_host(h);
                for s in streams {
                    ok(unsafe { aclrtDestroyStream(s) });
                }
            });
        }
    });
}

#[test]
fn device_reference_churn_across_threads() {
    // Threads set and reset device 1 over and over while working on it: the device is released
    // and re-created many times, and no thread may lose memory or streams it still holds.
    std::thread::scope(|sc| {
        for t in 0..6u8 {
            sc.spawn(move || {
                for i in 0..40u8 {
                    let _d = Dev::new(1);
                    let s = stream();
                    let d = malloc(4096);
                    let h = malloc_host(4096);
                    unsafe { std::ptr::write_bytes(h.cast::<u8>(), t ^ i, 4096) };
                    ok(unsafe { aclrtMemcpyAsync(d, 4096, h, 4096, 1, s) });
                    ok(unsafe { aclrtSynchronizeStream(s) });
                    let mut o = vec![0u8; 4096];
                    d2h(&mut o, d);
                    assert!(o.iter().all(|x| *x == t ^ i));
                    free(d);
                    free_host(h);
                    ok(unsafe { aclrtDestroyStream(s) });
                }
            });
        }
    });
}

static CHAIN: Mutex<Vec<usize>> = Mutex::new(Vec::new());
extern "C" fn chain_push(arg: *mut c_void) {
    CHAIN.lock().unwrap().push(arg as usize);
}

#[test]
fn event_chain_orders_work_across_streams() {
    let _device = whole_device();
    // Stream k waits for the event recorded on stream k-1 after its step: the steps run in
    // chain order although every stream has its own worker thread and earlier streams sleep
    // longer.
    let _d = Dev::new(0);
    let n = 12;
    let streams: Vec<aclrtStream> = (0..n).map(|_| stream()).collect();
    let events: Vec<aclrtEvent> = (0..n).map(|_| event()).collect();
    CHAIN.lock().unwrap().clear();
    for k in 0..n {
        if k > 0 {
            ok(unsafe { aclrtStreamWaitEvent(streams[k], events[k - 1]) });
        }
        ok(unsafe { aclrtLaunchHostFunc(streams[k], Some(sleep_ms), (n - k) as *mut c_void) });
        ok(unsafe { aclrtLaunchHostFunc(streams[k], Some(chain_push), k as *mut c_void) });
        ok(unsafe { aclrtRecordEvent(events[k], streams[k]) });
    }
    ok(unsafe { aclrtSynchronizeDevice() });
    assert_eq!(*CHAIN.lock().unwrap(), (0..n).collect::<Vec<_>>());
    for e in events {
        ok(unsafe { aclrtDestroyEvent(e) });
    }
    for s in streams {
        ok(unsafe { aclrtDestroyStream(s) });
    }
}

#[test]
fn the_overflow_switch_is_the_stream_attribute() {
    let _d = Dev::new(0);
    let s = stream();
    let mut f = 9u32;
    ok(unsafe { aclrtGetStreamOverflowSwitch(s, &mut f) });
    assert_eq!(f, 0);
    ok(unsafe { aclrtSetStreamOverflowSwitch(s, 1) });
    ok(unsafe { aclrtGetStreamOverflowSwitch(s, &mut f) });
    assert_eq!(f, 1);
    let mut v = aclrtStreamAttrValue::default();
    ok(unsafe { aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &mut v) });
    assert_eq!(unsafe { v.overflowSwitch }, 1);
    // The flag first (the ACL layer), then the handle; a NULL output.
    let null_param = AclError::INVALID_PARAM.code();
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(unsafe { aclrtSetStreamOverflowSwitch(dead, 2) }, null_param);
    err(
        unsafe { aclrtSetStreamOverflowSwitch(dead, 0) },
        AclError::INVALID_HANDLE.code(),
    );
    err(
        unsafe { aclrtGetStreamOverflowSwitch(s, null_mut()) },
        null_param,
    );
    err(
        unsafe { aclrtGetStreamOverflowSwitch(dead, &mut f) },
        AclError::INVALID_HANDLE.code(),
    );
    // NULL is the default stream.
    ok(unsafe { aclrtGetStreamOverflowSwitch(null_mut(), &mut f) });
    ok(unsafe { aclrtDestroyStream(s) });
}
