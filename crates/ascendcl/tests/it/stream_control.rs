//! Stream control: ids, stop and abort, per-stream resource limits, capacity queries and
//! stream attributes. (Stream-state callbacks see every stream of the process: they are in the
//! `isolated` binary.)

use crate::common::*;
use ascendcl::{Error, FailureMode, HostBuffer, ResourceKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[test]
fn ids_are_distinct_and_capacity_is_reported() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let (ia, ib) = (a.id().unwrap(), b.id().unwrap());
    assert!(ia >= 0 && ib >= 0 && ia != ib, "{ia} {ib}");
    assert_eq!(a.clone().id().unwrap(), ia, "a clone is the same stream");
    // Asked from another thread, the id is the same.
    let a2 = a.clone();
    assert_eq!(
        std::thread::spawn(move || a2.id().unwrap()).join().unwrap(),
        ia
    );
    assert!(d.available_streams().unwrap() > 0);
    assert!(d.available_events().unwrap() > 0);
}

#[test]
fn stop_holds_the_queue_and_abort_discards_it() {
    let r = rt();
    // A stopped stream fails every synchronisation of its device until it is aborted.
    let d = failure_device(&r);
    let s = d.create_stream().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    s.launch_host_fn(|| std::thread::sleep(Duration::from_millis(50)))
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let ran = ran.clone();
            s.launch_host_fn(move || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    s.stop().unwrap();
    // A synchronisation reports the held queue at once.
    assert!(s.synchronize().is_err());
    s.abort().unwrap();
    s.synchronize().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "aborted closures never ran");
    for h in handles {
        assert!(matches!(h.wait(), Err(Error::HostFnDiscarded)));
    }
    // The stream works again.
    let again = ran.clone();
    s.launch_host_fn(move || {
        again.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap()
    .wait()
    .unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // A scope on an aborted stream returns, and its copy never touched the buffer; the scope
    // says its work was discarded (it used to report success for the copy that never ran).
    // Pinned memory: a copy into it is asynchronous (one into pageable memory is not).
    let mut host = HostBuffer::from_slice(&d, &[7u32; 16]).unwrap();
    let dev = d.clone_htod(&[1u32; 16]).unwrap();
    s.launch_host_fn(|| std::thread::sleep(Duration::from_millis(30)))
        .unwrap();
    let r = s.scope(|sc| {
        sc.copy(&mut host, &dev)?;
        s.abort()
    });
    assert!(matches!(r, Err(Error::Aborted { .. })), "{r:?}");
    assert_eq!(host[..], [7; 16], "the aborted copy did not run");
    s.destroy().unwrap();
}

#[test]
fn stream_limits_override_the_device_and_apply_to_the_thread() {
    let _g = device_limits();
    let r = rt();
    let d = r.device(0).unwrap();
    let vector = d.res_limit(ResourceKind::VectorCore).unwrap();
    let s = d.create_stream().unwrap();
    assert_eq!(s.res_limit(ResourceKind::VectorCore).unwrap(), vector);
    let e = s
        .set_res_limit(ResourceKind::VectorCore, vector + 1)
        .unwrap_err();
    assert_eq!(e.code(), Some(AclError::PARAM_INVALID), "{e}");
    s.set_res_limit(ResourceKind::VectorCore, 4).unwrap();
    assert_eq!(s.res_limit(ResourceKind::VectorCore).unwrap(), 4);
    assert_eq!(
        d.thread_res_limit(ResourceKind::VectorCore).unwrap(),
        vector
    );
    {
        let _use = s.use_res_limits().unwrap();
        assert_eq!(d.thread_res_limit(ResourceKind::VectorCore).unwrap(), 4);
        // Only this thread.
        let d2 = d.clone();
        let other = std::thread::spawn(move || d2.thread_res_limit(ResourceKind::VectorCore));
        assert_eq!(other.join().unwrap().unwrap(), vector);
    }
    assert_eq!(
        d.thread_res_limit(ResourceKind::VectorCore).unwrap(),
        vector
    );
    s.use_res_limits().unwrap().release().unwrap();
    s.reset_res_limits().unwrap();
    assert_eq!(s.res_limit(ResourceKind::VectorCore).unwrap(), vector);
}

#[test]
fn attributes_are_typed() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    assert_eq!(s.failure_mode().unwrap(), FailureMode::Continue);
    assert!(!s.float_overflow_check().unwrap());
    s.set_float_overflow_check(true).unwrap();
    assert!(s.float_overflow_check().unwrap());
    assert!(!s.cache_op_info().unwrap());
    s.set_cache_op_info(true).unwrap();
    assert!(s.cache_op_info().unwrap());
    s.set_cache_op_info(false).unwrap();
    assert!(!s.cache_op_info().unwrap());
    assert_eq!(s.user_tag().unwrap(), 0);
    s.set_user_tag(0xabc).unwrap();
    assert_eq!(s.user_tag().unwrap(), 0xabc);
    // STOP applies to the whole context (and refuses submissions there): one of its own, as
    // tests run in parallel.
    let ctx = d.create_context().unwrap();
    let s = ctx.create_stream().unwrap();
    s.set_failure_mode(FailureMode::Stop).unwrap();
    assert_eq!(s.failure_mode().unwrap(), FailureMode::Stop);
}

/// An abort made through another handle of the stream, on another thread, while a scope's copy
/// is queued: the scope reports the discarded work (`Error::Aborted`) once the stream is idle; it
/// never returns `Ok` for a copy that did not run.
#[test]
fn an_abort_through_another_handle_fails_the_running_scope() {
    let r = rt();
    let d = failure_device(&r);
    let s = d.create_stream().unwrap();
    let other = s.clone();
    let (go, wait_go) = std::sync::mpsc::channel::<()>();
    let aborter = std::thread::spawn(move || {
        wait_go.recv().unwrap();
        other.abort()
    });
    // Pinned memory: a copy into it is asynchronous. The host function keeps the copy queued.
    let mut host = HostBuffer::from_slice(&d, &[7u32; 16]).unwrap();
    let dev = d.clone_htod(&[1u32; 16]).unwrap();
    s.launch_host_fn(|| std::thread::sleep(Duration::from_millis(500)))
        .unwrap();
    let r = s.scope(|sc| {
        sc.copy(&mut host, &dev)?;
        go.send(()).unwrap();
        aborter.join().unwrap()
    });
    assert!(matches!(r, Err(Error::Aborted { .. })), "{r:?}");
    assert_eq!(host[..], [7; 16], "the aborted copy did not run");
    s.destroy().unwrap();
}

#[test]
fn a_host_function_launched_during_an_abort_is_never_dropped_while_the_runtime_keeps_it() {
    // An abort waits for the running task; a host function another thread launched meanwhile
    // was queued after the runtime's discard, yet the crate took it from the pending list and
    // dropped it as discarded: it never ran, though the runtime ran its task.
    let r = rt();
    let d = failure_device(&r);
    let s = d.create_stream().unwrap();
    let (open, hold) = std::sync::mpsc::channel::<()>();
    let started = Arc::new(AtomicUsize::new(0));
    let st = started.clone();
    s.launch_host_fn(move || {
        st.fetch_add(1, Ordering::SeqCst);
        let _ = hold.recv();
    })
    .unwrap();
    while started.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let ran = Arc::new(AtomicUsize::new(0));
    let handle = std::thread::scope(|t| {
        let aborting = t.spawn(|| s.abort());
        std::thread::sleep(Duration::from_millis(30)); // the abort waits for the running task
        let ran = ran.clone();
        let launching = t.spawn(|| {
            s.launch_host_fn(move || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
        });
        std::thread::sleep(Duration::from_millis(30));
        open.send(()).unwrap();
        aborting.join().unwrap().unwrap();
        launching.join().unwrap().unwrap()
    });
    // Launched after the abort (it waited for it): it runs.
    handle.wait().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}
