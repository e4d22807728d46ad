//! The exception callback as a closure, and the thread's last error. The callback is
//! process-wide: it sees every failed task of the process, so these tests run alone
//! (`exclusive`).

use crate::common::*;
use crate::exclusive;
use ascendcl::{Error, ExceptionCallback, ExceptionInfo, Notify};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn a_failed_task_reaches_the_exception_closure() {
    let _x = exclusive();
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let seen: Arc<Mutex<Vec<ExceptionInfo>>> = Arc::default();
    let log = seen.clone();
    let cb = ExceptionCallback::register(move |i| log.lock().unwrap().push(*i)).unwrap();
    // One per process.
    let second = ExceptionCallback::register(|_| {}).unwrap_err();
    assert!(matches!(second, Error::Argument { .. }), "{second}");

    // A wait on a notify nobody records fails when its timeout expires.
    let n = Notify::new(&d).unwrap();
    let mut task = None;
    let e = s
        .scope(|sc| {
            sc.wait_notify(&n, Some(Duration::from_secs(1)))?;
            task = Some(ascendcl::last_task_id()?);
            Ok(())
        })
        .unwrap_err();
    let task = task.expect("the wait was enqueued");
    assert_eq!(e.code(), Some(AclError::TASK_TIMEOUT), "{e}");
    let sid = u32::try_from(s.id().unwrap()).unwrap();
    let got = seen.lock().unwrap().clone();
    assert!(
        got.iter().any(|i| i.task_id == task
            && i.stream_id == sid
            && i.device_id == 0
            && i.error == AclError::TASK_TIMEOUT),
        "{got:?} lacks the failed wait {task} of stream {sid}"
    );
    cb.unregister().unwrap();

    // After unregistering, nothing more is reported; a new registration is accepted.
    let before = seen.lock().unwrap().len();
    let _ = s.scope(|sc| sc.wait_notify(&n, Some(Duration::from_secs(1))));
    assert_eq!(seen.lock().unwrap().len(), before);

    // A panicking closure is caught and reported when it is unregistered.
    let cb = ExceptionCallback::register(|_| panic!("exception boom")).unwrap();
    let _ = s.scope(|sc| sc.wait_notify(&n, Some(Duration::from_secs(1))));
    match cb.unregister() {
        Err(Error::CallbackPanicked { message, .. }) => assert_eq!(message, "exception boom"),
        other => panic!("expected the panic, got {other:?}"),
    }
    // The closure was dropped on unregistering: `seen` is the last handle.
    assert_eq!(Arc::strong_count(&seen), 1);
}

#[test]
fn the_thread_last_error_is_peeked_and_taken() {
    let _x = exclusive();
    let r = rt();
    let _d = r.device(0).unwrap();
    let _ = ascendcl::last_error();
    assert_eq!(ascendcl::peek_last_error(), None);
    // A refused call sets the thread's last error.
    // SAFETY: a plain value; the runtime refuses it before anything changes.
    let e = unsafe { ascendcl::raw::aclrtSetDevice(i32::MAX) }.unwrap_err();
    let code = e.code().unwrap();
    assert_eq!(ascendcl::peek_last_error(), Some(code));
    assert_eq!(ascendcl::peek_last_error(), Some(code), "peeking keeps it");
    assert_eq!(ascendcl::last_error(), Some(code));
    assert_eq!(ascendcl::last_error(), None, "taking clears it");
}

#[test]
fn the_recent_message_is_read_once() {
    let _x = exclusive();
    let r = rt();
    let _d = r.device(0).unwrap();
    let _ = ascendcl::recent_error_message();
    // SAFETY: NULL is the documented invalid argument; the runtime checks it before writing.
    let e = unsafe { ascendcl::raw::aclrtGetRunMode(std::ptr::null_mut()) }.unwrap_err();
    // The error took the message with it: nothing is left to read.
    match &e {
        Error::Acl { message, .. } => assert!(message.is_some(), "{e}"),
        other => panic!("expected a runtime error, got {other:?}"),
    }
    assert_eq!(ascendcl::recent_error_message(), None);
    // The last error is still there, and reading the message did not clear it.
    assert_eq!(ascendcl::last_error(), e.code());
}

#[test]
fn an_exception_closure_that_synchronises_gets_an_error_not_a_hang() {
    // The closure runs on the failing stream's worker: synchronising that stream there waited
    // for the worker itself.
    let _x = exclusive();
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let (log, stream) = (got.clone(), s.clone());
    let cb = ExceptionCallback::register(move |_| {
        let e = stream.synchronize().unwrap_err();
        log.lock().unwrap().push(e.to_string());
    })
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let n = Notify::new(&d).unwrap();
        let failed = s.scope(|sc| sc.wait_notify(&n, Some(Duration::from_secs(1))));
        let _ = tx.send(failed.is_err());
    });
    let failed = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the scope returns");
    assert!(failed);
    cb.unregister().unwrap();
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("callback thread"), "{got:?}");
}
