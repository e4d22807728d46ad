//! Stream-state callbacks (`aclrtRegStreamStateCallback`): they see every stream the process
//! creates, so they run here, where no other test creates streams meanwhile.

use crate::common::*;
use crate::exclusive;
use ascendcl::{Error, StreamState, StreamStateCallback, StreamStateEvent};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn state_callbacks_see_creation_and_destruction() {
    let _x = exclusive();
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
    let _x = exclusive();
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
