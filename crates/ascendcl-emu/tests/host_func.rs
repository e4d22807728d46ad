//! Host-function subscription (`aclrtSubscribeHostFunc`, `aclrtProcessHostFunc`,
//! `aclrtUnSubscribeHostFunc`) on an IPV350-class SoC, the one class whose runtime offers it;
//! every test of this binary emulates that SoC (the default SoC's 207000 is in `models.rs`).
//! Also what else that SoC lacks: model runtime instances and labels.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

fn ipv350() -> Dev {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ascendcl_emu::set_config(ascendcl_emu::Config {
            soc: "IPV350".to_string(),
            ..ascendcl_emu::config()
        })
    });
    Dev::new(0)
}

#[track_caller]
fn is(code: aclError, want: AclError) {
    err(code, want.code());
}

fn pthread_self() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

#[test]
fn subscribe_and_unsubscribe_checks() {
    let _d = ipv350();
    let (s, t) = (stream(), stream());
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    is(
        unsafe { aclrtSubscribeHostFunc(7, null_mut()) },
        AclError::PARAM_INVALID,
    );
    is(
        unsafe { aclrtSubscribeHostFunc(7, dead) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtSubscribeHostFunc(7, s) });
    // One thread per stream; one thread may serve several streams.
    is(
        unsafe { aclrtSubscribeHostFunc(8, s) },
        AclError::STREAM_SUBSCRIBE,
    );
    is(
        unsafe { aclrtSubscribeHostFunc(7, s) },
        AclError::STREAM_SUBSCRIBE,
    );
    ok(unsafe { aclrtSubscribeHostFunc(7, t) });
    is(
        unsafe { aclrtUnSubscribeHostFunc(7, null_mut()) },
        AclError::PARAM_INVALID,
    );
    is(
        unsafe { aclrtUnSubscribeHostFunc(8, s) },
        AclError::STREAM_SUBSCRIBE,
    );
    ok(unsafe { aclrtUnSubscribeHostFunc(7, s) });
    is(
        unsafe { aclrtUnSubscribeHostFunc(7, s) },
        AclError::STREAM_SUBSCRIBE,
    );
    ok(unsafe { aclrtUnSubscribeHostFunc(7, t) });
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(t) });
}

#[test]
fn process_checks() {
    let _d = ipv350();
    is(unsafe { aclrtProcessHostFunc(0) }, AclError::PARAM_INVALID);
    is(unsafe { aclrtProcessHostFunc(-2) }, AclError::PARAM_INVALID);
    // This thread is not subscribed.
    is(
        unsafe { aclrtProcessHostFunc(10) },
        AclError::THREAD_SUBSCRIBE,
    );
    // Subscribed, nothing launched: the wait times out.
    let s = stream();
    ok(unsafe { aclrtSubscribeHostFunc(pthread_self(), s) });
    is(
        unsafe { aclrtProcessHostFunc(10) },
        AclError::REPORT_TIMEOUT,
    );
    ok(unsafe { aclrtUnSubscribeHostFunc(pthread_self(), s) });
    is(
        unsafe { aclrtProcessHostFunc(10) },
        AclError::THREAD_SUBSCRIBE,
    );
    ok(unsafe { aclrtDestroyStream(s) });
}

static RAN_ON: AtomicU64 = AtomicU64::new(0);
static DATA: AtomicU64 = AtomicU64::new(0);

extern "C" fn note_thread(arg: *mut c_void) {
    RAN_ON.store(pthread_self(), Ordering::SeqCst);
    DATA.store(unsafe { *arg.cast::<u64>() }, Ordering::SeqCst);
}

#[test]
fn host_functions_of_a_subscribed_stream_run_on_the_subscribed_thread() {
    let _d = ipv350();
    let s = stream();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let worker = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            tx.send(pthread_self()).unwrap();
            let mut ran = 0;
            while !stop.load(Ordering::SeqCst) {
                match unsafe { aclrtProcessHostFunc(5) } {
                    0 => ran += 1,
                    c => assert!(
                        c == AclError::REPORT_TIMEOUT.code()
                            || c == AclError::THREAD_SUBSCRIBE.code(),
                        "{c}"
                    ),
                }
                take_msg();
            }
            ran
        })
    };
    let tid = rx.recv().unwrap();
    ok(unsafe { aclrtSubscribeHostFunc(tid, s) });
    let mut user = 520u64;
    ok(unsafe { aclrtLaunchHostFunc(s, Some(note_thread), (&raw mut user).cast()) });
    // The stream waits for the host function, which runs when the thread processes it.
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(RAN_ON.load(Ordering::SeqCst), tid);
    assert_eq!(DATA.load(Ordering::SeqCst), 520);
    // An unsubscribed stream runs its host functions on its own worker.
    let plain = stream();
    user = 521;
    ok(unsafe { aclrtLaunchHostFunc(plain, Some(note_thread), (&raw mut user).cast()) });
    ok(unsafe { aclrtSynchronizeStream(plain) });
    assert_ne!(RAN_ON.load(Ordering::SeqCst), tid);
    assert_eq!(DATA.load(Ordering::SeqCst), 521);
    ok(unsafe { aclrtUnSubscribeHostFunc(tid, s) });
    stop.store(true, Ordering::SeqCst);
    assert_eq!(worker.join().unwrap(), 1);
    ok(unsafe { aclrtDestroyStream(s) });
    ok(unsafe { aclrtDestroyStream(plain) });
}

#[test]
fn the_soc_has_no_models_or_labels() {
    let _d = ipv350();
    let s = stream();
    let mut ri = null_mut();
    is(
        unsafe { aclmdlRIBuildBegin(&mut ri, 0) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    is(
        unsafe { aclmdlRICaptureBegin(s, 0) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    let mut l = null_mut();
    let e = unsafe { aclrtCreateLabel(&mut l) };
    assert_eq!(e, AclError::FEATURE_NOT_SUPPORT.code());
    let msg = take_msg();
    assert!(msg.contains("IPV350"), "{msg}");
    // The table's figures for the class.
    let mut arch = 0i64;
    ok(unsafe { aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, &mut arch) });
    assert_eq!(arch, 3505);
    ok(unsafe { aclrtDestroyStream(s) });
}
