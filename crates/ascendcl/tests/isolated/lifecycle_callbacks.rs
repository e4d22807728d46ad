//! Rust closures run by `aclInit` and `aclFinalize` ([`InitCallback`], [`FinalizeCallback`]).
//! The test initialises and finalises the runtime itself, so it runs alone (`exclusive`), with
//! no runtime handle alive; it needs a backend that allows initialising again after finalising
//! (the emulator).

use crate::common::*;
use crate::exclusive;
use ascendcl::{
    AclError, BackendChoice, CallbackKind, Error, FinalizeCallback, InitCallback, Runtime,
};
use std::sync::{Arc, Mutex};

#[test]
fn lifecycle_callbacks() {
    let _x = exclusive();
    ascendcl::install_backend(BackendChoice::from_env().unwrap()).unwrap();
    if !needs_emulator("lifecycle_callbacks", "repeated aclInit and aclFinalize") {
        return;
    }
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let push = |l: &Arc<Mutex<Vec<String>>>, s: String| l.lock().unwrap().push(s);
    let take = |l: &Arc<Mutex<Vec<String>>>| std::mem::take(&mut *l.lock().unwrap());

    // Registered before the first aclInit; run by it in the runtime's order.
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let other = InitCallback::register(CallbackKind::Other, move |cfg| {
        push(&l1, format!("init other {cfg:?}"));
        Ok(())
    })
    .unwrap();
    let model = InitCallback::register(CallbackKind::Model, move |cfg| {
        push(&l2, format!("init model {cfg:?}"));
        Ok(())
    })
    .unwrap();
    assert_eq!(model.kind(), CallbackKind::Model);
    let fin = FinalizeCallback::register(CallbackKind::Other, move || {
        push(&l3, "finalize other".into());
        Ok(())
    })
    .unwrap();
    assert_eq!(fin.kind(), CallbackKind::Other);
    // A kind other than Other holds one callback: the runtime refuses a second.
    let err = InitCallback::register(CallbackKind::Model, |_| Ok(())).unwrap_err();
    assert_eq!(err.code(), Some(AclError::INTERNAL_ERROR), "{err}");
    // Other holds several.
    let l4 = log.clone();
    let second = InitCallback::register(CallbackKind::Other, move |_| {
        push(&l4, "init other 2".into());
        Ok(())
    })
    .unwrap();

    let rt = Runtime::new().unwrap();
    assert_eq!(
        take(&log),
        ["init model \"\"", "init other \"\"", "init other 2"]
    );
    // Registered while initialised: runs at once.
    let l5 = log.clone();
    let late = InitCallback::register(CallbackKind::Dvpp, move |_| {
        push(&l5, "init dvpp (late)".into());
        Ok(())
    })
    .unwrap();
    assert_eq!(take(&log), ["init dvpp (late)"]);
    rt.finalize().unwrap();
    assert_eq!(take(&log), ["finalize other"]);

    // Unregistered closures no longer run.
    second.unregister().unwrap();
    late.unregister().unwrap();
    drop(model);
    let rt = Runtime::new().unwrap();
    assert_eq!(take(&log), ["init other \"\""]);
    drop(rt);
    assert_eq!(take(&log), ["finalize other"]);

    // An Err fails aclInit with its code; the runtime is not initialised.
    let failing = InitCallback::register(CallbackKind::Model, |_| Err(AclError(123_456))).unwrap();
    let err = Runtime::new().unwrap_err();
    assert_eq!(err.code(), Some(AclError(123_456)), "{err}");
    assert_eq!(err.api(), Some("aclInit"));
    failing.unregister().unwrap();
    take(&log);

    // A panic is caught at the FFI boundary: aclInit fails, the panic is reported on
    // unregistering.
    let panicking = InitCallback::register(CallbackKind::Model, |_| panic!("boom")).unwrap();
    let err = Runtime::new().unwrap_err();
    assert_eq!(err.code(), Some(AclError::FAILURE), "{err}");
    let err = panicking.unregister().unwrap_err();
    match err {
        Error::CallbackPanicked { what, message } => {
            assert_eq!(what, "init callback");
            assert!(message.contains("boom"), "{message}");
        }
        other => panic!("{other}"),
    }
    take(&log);

    // A failing finalize callback fails aclFinalize and the runtime stays initialised.
    let fin_fail =
        FinalizeCallback::register(CallbackKind::Model, || Err(AclError(654_321))).unwrap();
    let rt = Runtime::new().unwrap();
    take(&log);
    let err = rt.finalize().unwrap_err();
    assert_eq!(err.error().code(), Some(AclError(654_321)), "{err}");
    let rt = err.into_handle();
    assert!(rt.device_count().unwrap() >= 1);
    fin_fail.unregister().unwrap();
    take(&log);
    rt.finalize().unwrap();
    assert_eq!(take(&log), ["finalize other"]);

    // A panicking finalize callback: caught, reported on unregistering.
    let fin_panic = FinalizeCallback::register(CallbackKind::Dvpp, || panic!("bang")).unwrap();
    let rt = Runtime::new().unwrap();
    let err = rt.finalize().unwrap_err();
    assert_eq!(err.error().code(), Some(AclError::FAILURE));
    let rt = err.into_handle();
    let err = fin_panic.unregister().unwrap_err();
    assert!(
        matches!(
            err,
            Error::CallbackPanicked {
                what: "finalize callback",
                ..
            }
        ),
        "{err}"
    );
    rt.finalize().unwrap();
    take(&log);

    // The pool of trampolines is finite: at most MAX_LIFECYCLE_CALLBACKS at once.
    let many: Vec<InitCallback> = (0..ascendcl::MAX_LIFECYCLE_CALLBACKS - 1)
        .map(|_| InitCallback::register(CallbackKind::Other, |_| Ok(())).unwrap())
        .collect();
    let err = InitCallback::register(CallbackKind::Other, |_| Ok(())).unwrap_err();
    assert!(matches!(err, Error::Argument { .. }), "{err}");
    drop(many);
    drop((other, fin));
    assert!(ascendcl::take_drop_errors().is_empty());
}

#[test]
fn callbacks_that_ask_for_the_runtime_do_not_hang() {
    // A lock was held across aclInit and aclFinalize, and the callbacks they run asking for
    // the handle count (or a handle) waited for it for ever.
    let _x = exclusive();
    ascendcl::install_backend(BackendChoice::from_env().unwrap()).unwrap();
    if !needs_emulator(
        "callbacks_that_ask_for_the_runtime_do_not_hang",
        "repeated aclInit and aclFinalize",
    ) {
        return;
    }
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let (s1, s2) = (seen.clone(), seen.clone());
    let init = InitCallback::register(CallbackKind::Other, move |_| {
        let again = Runtime::new().map(drop);
        s1.lock().unwrap().push(format!(
            "init: {} handle(s), a new one {}",
            Runtime::handle_count(),
            if again.is_err() { "refused" } else { "made" }
        ));
        Ok(())
    })
    .unwrap();
    let fin = FinalizeCallback::register(CallbackKind::Other, move || {
        let again = Runtime::new().map(drop);
        s2.lock().unwrap().push(format!(
            "finalize: {} handle(s), a new one {}",
            Runtime::handle_count(),
            if again.is_err() { "refused" } else { "made" }
        ));
        Ok(())
    })
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Runtime::new().and_then(|rt| rt.finalize().map_err(|e| e.into_error()));
        let _ = tx.send(r);
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("aclInit and aclFinalize return")
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "init: 0 handle(s), a new one refused",
            "finalize: 1 handle(s), a new one refused"
        ]
    );
    init.unregister().unwrap();
    fin.unregister().unwrap();
}
