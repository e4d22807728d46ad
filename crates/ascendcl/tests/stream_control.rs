//! Stream control: ids, stop and abort, per-stream resource limits, capacity queries and
//! stream-state callbacks.

mod common;

use ascendcl::{
    Error, FailureMode, HostBuffer, ResourceKind, StreamState, StreamStateCallback,
    StreamStateEvent,
};
use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Every test here runs alone: some change device-wide limits, and the state-callback tests see
/// every stream the process creates (a destroyed stream's handle may be reused by the next).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn ids_are_distinct_and_capacity_is_reported() {
    let _g = serial();
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
    let _g = serial();
    let r = rt();
    let d = r.device(0).unwrap();
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
    // A scope on an aborted stream returns, and its copy never touched the buffer.
    // Pinned memory: a copy into it is asynchronous (one into pageable memory is not).
    let mut host = HostBuffer::from_slice(&d, &[7u32; 16]).unwrap();
    let dev = d.clone_htod(&[1u32; 16]).unwrap();
    s.launch_host_fn(|| std::thread::sleep(Duration::from_millis(30)))
        .unwrap();
    let r = s.scope(|sc| {
        sc.copy(&mut host, &dev)?;
        s.abort()
    });
    r.unwrap();
    assert_eq!(host[..], [7; 16], "the aborted copy did not run");
    s.destroy().unwrap();
}

#[test]
fn stream_limits_override_the_device_and_apply_to_the_thread() {
    let _g = serial();
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
fn state_callbacks_see_creation_and_destruction() {
    let _g = serial();
    let r = rt();
    let d = r.device(0).unwrap();
    let seen: Arc<Mutex<Vec<StreamStateEvent>>> = Arc::default();
    let log = seen.clone();
    let cb = StreamStateCallback::register(move |e| log.lock().unwrap().push(e)).unwrap();
    let s = d.create_stream().unwrap();
    let raw = s.as_raw();
    s.destroy().unwrap();
    let mine: Vec<StreamState> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.raw_stream() == raw)
        .map(|e| e.state)
        .collect();
    assert_eq!(mine, [StreamState::Created, StreamState::Destroying]);
    let other = d.create_stream().unwrap();
    let states: Vec<StreamState> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.is_for(&other))
        .map(|e| e.state)
        .collect();
    assert_eq!(states.last(), Some(&StreamState::Created));
    drop(other);
    cb.unregister().unwrap();
    // Nothing more is reported.
    let before = seen.lock().unwrap().len();
    drop(d.create_stream().unwrap());
    assert_eq!(seen.lock().unwrap().len(), before);
    // The closure was dropped on unregistering: `seen` is the last handle.
    assert_eq!(Arc::strong_count(&seen), 1);
}

#[test]
fn a_panicking_state_callback_is_caught_and_reported() {
    let _g = serial();
    let r = rt();
    let d = r.device(0).unwrap();
    let cb = StreamStateCallback::register(|_| panic!("state boom")).unwrap();
    // The panic does not unwind into the runtime: the stream is created and destroyed.
    let s = d.create_stream().unwrap();
    s.destroy().unwrap();
    match cb.unregister() {
        Err(Error::CallbackPanicked { message, .. }) => assert_eq!(message, "state boom"),
        other => panic!("expected the panic, got {other:?}"),
    }
    // Dropping a registration unregisters it too.
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    drop(StreamStateCallback::register(move |_| {
        m.fetch_add(1, Ordering::SeqCst);
    }));
    drop(d.create_stream().unwrap());
    assert_eq!(n.load(Ordering::SeqCst), 0);
}

#[test]
fn attributes_are_typed() {
    let _g = serial();
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
    s.set_failure_mode(FailureMode::Stop).unwrap();
    assert_eq!(s.failure_mode().unwrap(), FailureMode::Stop);
}
