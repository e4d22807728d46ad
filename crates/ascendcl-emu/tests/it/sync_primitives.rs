//! `aclrtValueWrite` / `aclrtValueWait` and notifies, in one process: stream-ordered writes and
//! waits with every comparison, one-shot notifies, timeouts, cancellation, and the codes of every
//! documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Host-function counters, one per test (tests run in parallel).
static VALUE_HITS: AtomicUsize = AtomicUsize::new(0);
static NOTIFY_HITS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn hit(counter: *mut c_void) {
    unsafe { &*(counter as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

fn counter(c: &'static AtomicUsize) -> *mut c_void {
    (c as *const AtomicUsize).cast_mut().cast()
}

fn word(p: *mut c_void) -> u64 {
    let mut b = [0u8; 8];
    d2h(&mut b, p);
    u64::from_ne_bytes(b)
}

#[test]
fn value_write_and_wait_checks() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let p = malloc(64);
    let s = stream();
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    let mut host = [0u64; 2];
    let hp = host.as_mut_ptr().cast::<c_void>();
    // NULL first, then the stream handle, then the flag, then the address.
    err(
        unsafe { aclrtValueWrite(null_mut(), 1, 9, dead) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtValueWrite(p, 1, 9, dead) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtValueWrite(p, 1, 1, s) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtValueWait(p, 1, 4, s) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtValueWrite(hp, 1, 0, s) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtValueWait(hp, 1, 0, s) },
        AclError::PARAM_INVALID,
    );
    // The word must lie inside the allocation.
    err(
        unsafe { aclrtValueWrite(p.cast::<u8>().add(60).cast(), 1, 0, s) },
        AclError::PARAM_INVALID,
    );
    // Another context's stream: 107003; no context: 107002.
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let foreign = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    err(
        unsafe { aclrtValueWrite(p, 1, 0, foreign) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtDestroyContext(other) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
    let pu = p as usize;
    std::thread::spawn(move || {
        err(
            unsafe { aclrtValueWrite(pu as *mut c_void, 1, 0, null_mut()) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    // A write lands in stream order.
    ok(unsafe { aclrtValueWrite(p, 0xfeed_0000_0001, 0, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(word(p), 0xfeed_0000_0001);
    // NULL is the default stream.
    ok(unsafe { aclrtValueWrite(p, 5, 0, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(null_mut()) });
    assert_eq!(word(p), 5);
    ok(unsafe { aclrtDestroyStream(s) });
    free(p);
}

/// Queues a wait with `flag` and `value` on a fresh stream, followed by a host function; checks
/// that it is still blocked after `blocked` is written to the word and released after `release`.
fn wait_case(p: *mut c_void, flag: u32, value: u64, blocked: u64, release: u64) {
    let s = stream();
    let w = stream();
    ok(unsafe { aclrtValueWrite(p, blocked, 0, w) });
    ok(unsafe { aclrtSynchronizeStream(w) });
    let before = VALUE_HITS.load(Ordering::SeqCst);
    ok(unsafe { aclrtValueWait(p, value, flag, s) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(hit), counter(&VALUE_HITS)) });
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        VALUE_HITS.load(Ordering::SeqCst),
        before,
        "flag {flag}: {blocked:#x} vs {value:#x} must not satisfy the wait"
    );
    let mut st = 9;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    // Another stream's write releases it.
    ok(unsafe { aclrtValueWrite(p, release, 0, w) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(VALUE_HITS.load(Ordering::SeqCst), before + 1);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(w) });
}

#[test]
fn value_wait_blocks_only_its_stream_until_the_condition_holds() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let p = malloc(64);
    wait_case(p, ACL_STREAM_WAIT_VALUE_GEQ, 10, 9, 10);
    // GEQ is wrap-around safe: a counter that wrapped past the value is "at least" it.
    wait_case(p, ACL_STREAM_WAIT_VALUE_GEQ, u64::MAX - 1, u64::MAX - 3, 1);
    wait_case(p, ACL_STREAM_WAIT_VALUE_EQ, 123, 122, 123);
    wait_case(p, ACL_STREAM_WAIT_VALUE_AND, 0b100, 0b011, 0b110);
    wait_case(p, ACL_STREAM_WAIT_VALUE_NOR, 0b01, u64::MAX, 0b01);
    // A plain copy from the host satisfies a wait as well.
    let s = stream();
    h2d(p, &0u64.to_ne_bytes());
    ok(unsafe { aclrtValueWait(p, 7, ACL_STREAM_WAIT_VALUE_EQ, s) });
    let mut st = 9;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    h2d(p, &7u64.to_ne_bytes());
    ok(unsafe { aclrtSynchronizeStream(s) });
    // A wait that never completes ends when the stream is aborted.
    ok(unsafe { aclrtValueWait(p, 99, ACL_STREAM_WAIT_VALUE_EQ, s) });
    ok(unsafe { aclrtStreamAbort(s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyStream(s) });
    free(p);
}

#[test]
fn notify_checks() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let mut n = null_mut();
    err(
        unsafe { aclrtCreateNotify(null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtCreateNotify(&mut n, 2) },
        AclError::PARAM_INVALID,
    );
    std::thread::spawn(|| {
        let mut n = null_mut();
        err(
            unsafe { aclrtCreateNotify(&mut n, 0) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    ok(unsafe { aclrtCreateNotify(&mut n, ACL_NOTIFY_DEFAULT as u64) });
    let mut m = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut m, ACL_NOTIFY_DEVICE_USE_ONLY as u64) });
    let (mut a, mut b) = (0, 0);
    err(
        unsafe { aclrtGetNotifyId(n, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetNotifyId(null_mut(), &mut a) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetNotifyId(n, &mut a) });
    ok(unsafe { aclrtGetNotifyId(m, &mut b) });
    assert_ne!(a, b);
    let s = stream();
    err(
        unsafe { aclrtRecordNotify(null_mut(), s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtWaitAndResetNotify(null_mut(), s, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtRecordNotify(s.cast(), s) },
        AclError::INVALID_HANDLE,
    );
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(
        unsafe { aclrtRecordNotify(n, dead) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtWaitAndResetNotify(n, dead, 0) },
        AclError::INVALID_HANDLE,
    );
    let mut batch = [n, m];
    err(
        unsafe { aclrtNotifyBatchReset(null_mut(), 2) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtNotifyBatchReset(batch.as_mut_ptr(), 0) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtNotifyBatchReset(batch.as_mut_ptr(), 2) });
    err(
        unsafe { aclrtDestroyNotify(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtDestroyNotify(m) });
    err(unsafe { aclrtDestroyNotify(m) }, AclError::INVALID_HANDLE);
    err(
        unsafe { aclrtGetNotifyId(m, &mut b) },
        AclError::INVALID_HANDLE,
    );
    let mut bad = [n, m];
    err(
        unsafe { aclrtNotifyBatchReset(bad.as_mut_ptr(), 2) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtDestroyNotify(n) });
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn a_record_satisfies_one_wait() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let mut n = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut n, 0) });
    let (waiter, recorder) = (stream(), stream());
    let before = NOTIFY_HITS.load(Ordering::SeqCst);
    // Two waits, each followed by a host function.
    for _ in 0..2 {
        ok(unsafe { aclrtWaitAndResetNotify(n, waiter, 0) });
        ok(unsafe { aclrtLaunchHostFunc(waiter, Some(hit), counter(&NOTIFY_HITS)) });
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(NOTIFY_HITS.load(Ordering::SeqCst), before, "no record yet");
    ok(unsafe { aclrtRecordNotify(n, recorder) });
    ok(unsafe { aclrtSynchronizeStream(recorder) });
    // The first wait consumed the record; the second still waits.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while NOTIFY_HITS.load(Ordering::SeqCst) < before + 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(NOTIFY_HITS.load(Ordering::SeqCst), before + 1);
    ok(unsafe { aclrtRecordNotify(n, recorder) });
    ok(unsafe { aclrtSynchronizeStream(waiter) });
    assert_eq!(NOTIFY_HITS.load(Ordering::SeqCst), before + 2);
    // A record before the wait is kept until a wait consumes it; a reset clears it.
    ok(unsafe { aclrtRecordNotify(n, recorder) });
    ok(unsafe { aclrtSynchronizeStream(recorder) });
    ok(unsafe { aclrtWaitAndResetNotify(n, waiter, 0) });
    ok(unsafe { aclrtSynchronizeStream(waiter) });
    ok(unsafe { aclrtRecordNotify(n, recorder) });
    ok(unsafe { aclrtSynchronizeStream(recorder) });
    let mut one = [n];
    ok(unsafe { aclrtNotifyBatchReset(one.as_mut_ptr(), 1) });
    // After the reset a wait with a 1 s timeout expires: the task fails with 107020.
    ok(unsafe { aclrtWaitAndResetNotify(n, waiter, 1) });
    err(
        unsafe { aclrtSynchronizeStream(waiter) },
        AclError::TASK_TIMEOUT,
    );
    ok(unsafe { aclrtDestroyNotify(n) });
    ok(unsafe { aclrtDestroyStream(waiter) });
    ok(unsafe { aclrtDestroyStream(recorder) });
}
