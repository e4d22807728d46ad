//! The callbacks of `aclInit` and `aclFinalize` (`aclInitCallbackRegister`,
//! `aclFinalizeCallbackRegister` and their unregistrations): the runtime's order of types, the
//! configuration text, a failing callback failing the call, a late init callback running at
//! once, and the codes of every documented check. The tests of this binary initialise and
//! finalise the runtime, so they run one at a time.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::ffi::c_char;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn code(e: AclError) -> aclError {
    e.code()
}

/// What the callbacks saw, in order: (callback tag, configuration text).
static LOG: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
/// The code the callback with a tag returns (0 unless set).
static FAIL: Mutex<Vec<(usize, aclError)>> = Mutex::new(Vec::new());

fn answer(tag: usize) -> aclError {
    FAIL.lock()
        .unwrap()
        .iter()
        .find(|(t, _)| *t == tag)
        .map_or(0, |(_, c)| *c)
}

unsafe extern "C" fn on_init(cfg: *const c_char, len: usize, user: *mut c_void) -> aclError {
    let text = unsafe { std::slice::from_raw_parts(cfg.cast::<u8>(), len) };
    let tag = user as usize;
    LOG.lock()
        .unwrap()
        .push((tag, String::from_utf8_lossy(text).into_owned()));
    answer(tag)
}

/// A second function, so that one type can hold two different callbacks.
unsafe extern "C" fn on_init_other(cfg: *const c_char, len: usize, user: *mut c_void) -> aclError {
    unsafe { on_init(cfg, len, user) }
}

unsafe extern "C" fn on_finalize(user: *mut c_void) -> aclError {
    let tag = user as usize;
    LOG.lock().unwrap().push((tag, String::new()));
    answer(tag)
}

fn tags() -> Vec<usize> {
    LOG.lock().unwrap().drain(..).map(|(t, _)| t).collect()
}

fn tag(t: usize) -> *mut c_void {
    t as *mut c_void
}

/// Not initialised, whatever the state was.
fn down() {
    let _ = unsafe { aclFinalize() };
    take_msg();
}

#[test]
fn init_and_finalize_call_the_callbacks_in_the_runtimes_order() {
    let _g = serial();
    down();
    // Registered in another order than they run; OP_EXECUTOR runs only with a file, CBLAS and
    // the other types aclInit does not name never.
    for (ty, t) in [
        (ACL_REG_TYPE_OTHER, 40),
        (ACL_REG_TYPE_ACL_DVPP, 30),
        (ACL_REG_TYPE_ACL_OP_EXECUTOR, 20),
        (ACL_REG_TYPE_ACL_MODEL, 10),
        (ACL_REG_TYPE_ACL_OP_CBLAS, 99),
    ] {
        ok(unsafe { aclInitCallbackRegister(ty, Some(on_init), tag(t)) });
    }
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_OTHER, Some(on_init_other), tag(41)) });
    for (ty, t) in [
        (ACL_REG_TYPE_OTHER, 4),
        (ACL_REG_TYPE_ACL_MODEL, 2),
        (ACL_REG_TYPE_ACL_DVPP, 3),
        (ACL_REG_TYPE_ACL_OP_COMPILER, 1),
        (ACL_REG_TYPE_ACL_TDT_QUEUE, 98),
    ] {
        ok(unsafe { aclFinalizeCallbackRegister(ty, Some(on_finalize), tag(t)) });
    }
    tags();
    ok(unsafe { aclInit(null()) });
    let seen = LOG.lock().unwrap().clone();
    assert_eq!(
        seen.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        [10, 30, 40, 41]
    );
    assert!(
        seen.iter().all(|(_, c)| c.is_empty()),
        "no file: empty text"
    );
    tags();
    ok(unsafe { aclFinalize() });
    assert_eq!(tags(), [1, 2, 3, 4]);
    // With a configuration file the callbacks get its text, and OP_EXECUTOR runs.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acl.json");
    std::fs::write(&path, "{\"dump\": {}}").unwrap();
    let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    ok(unsafe { aclInit(path.as_ptr()) });
    let seen = LOG.lock().unwrap().drain(..).collect::<Vec<_>>();
    assert_eq!(
        seen.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        [10, 20, 30, 40, 41]
    );
    assert!(seen.iter().all(|(_, c)| c == "{\"dump\": {}}"), "{seen:?}");
    // A repeated aclInit calls nothing; the last reference's finalize does.
    err(
        unsafe { aclInit(null()) },
        code(AclError::REPEAT_INITIALIZE),
    );
    let mut left = 9u64;
    ok(unsafe { aclFinalizeReference(&mut left) });
    assert_eq!(left, 1);
    assert!(tags().is_empty());
    // An init callback registered now runs at once with the text.
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_ACL_TDT_CHANNEL, Some(on_init), tag(50)) });
    let late = LOG.lock().unwrap().drain(..).collect::<Vec<_>>();
    assert_eq!(late, [(50, "{\"dump\": {}}".to_string())]);
    ok(unsafe { aclFinalize() });
    assert_eq!(tags(), [1, 2, 3, 4]);
    unregister_all();
}

fn unregister_all() {
    let inits: [(aclRegisterCallbackType, aclInitCallbackFunc); 7] = [
        (ACL_REG_TYPE_OTHER, Some(on_init)),
        (ACL_REG_TYPE_OTHER, Some(on_init_other)),
        (ACL_REG_TYPE_ACL_DVPP, Some(on_init)),
        (ACL_REG_TYPE_ACL_OP_EXECUTOR, Some(on_init)),
        (ACL_REG_TYPE_ACL_MODEL, Some(on_init)),
        (ACL_REG_TYPE_ACL_OP_CBLAS, Some(on_init)),
        (ACL_REG_TYPE_ACL_TDT_CHANNEL, Some(on_init)),
    ];
    for (ty, f) in inits {
        let _ = unsafe { aclInitCallbackUnRegister(ty, f) };
    }
    for ty in [
        ACL_REG_TYPE_OTHER,
        ACL_REG_TYPE_ACL_MODEL,
        ACL_REG_TYPE_ACL_DVPP,
        ACL_REG_TYPE_ACL_OP_COMPILER,
        ACL_REG_TYPE_ACL_TDT_QUEUE,
    ] {
        let _ = unsafe { aclFinalizeCallbackUnRegister(ty, Some(on_finalize)) };
    }
    take_msg();
    FAIL.lock().unwrap().clear();
    tags();
}

#[test]
fn a_failing_callback_fails_the_call() {
    let _g = serial();
    down();
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, Some(on_init), tag(10)) });
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_OTHER, Some(on_init), tag(40)) });
    FAIL.lock().unwrap().push((10, 123_456));
    let r = unsafe { aclInit(null()) };
    let msg = take_msg();
    assert_eq!(r, 123_456);
    assert!(msg.contains("init callback"), "{msg}");
    assert_eq!(tags(), [10], "the first failure stops the others");
    // Not initialised: finalize says so.
    err(unsafe { aclFinalize() }, code(AclError::REPEAT_FINALIZE));
    FAIL.lock().unwrap().clear();
    ok(unsafe { aclInit(null()) });
    assert_eq!(tags(), [10, 40]);
    // A failing finalize callback fails aclFinalize, and the runtime stays initialised.
    ok(unsafe { aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, Some(on_finalize), tag(2)) });
    FAIL.lock().unwrap().push((2, 654_321));
    err(unsafe { aclFinalize() }, 654_321);
    let mut n = 0u32;
    ok(unsafe { aclrtGetDeviceCount(&mut n) });
    err(
        unsafe { aclInit(null()) },
        code(AclError::REPEAT_INITIALIZE),
    );
    FAIL.lock().unwrap().clear();
    ok(unsafe { aclFinalizeReference(null_mut()) });
    ok(unsafe { aclFinalize() });
    unregister_all();
}

#[test]
fn registration_checks() {
    let _g = serial();
    let null_param = code(AclError::INVALID_PARAM);
    let internal = code(AclError::INTERNAL_ERROR);
    err(
        unsafe { aclInitCallbackRegister(ACL_REG_TYPE_OTHER, None, null_mut()) },
        null_param,
    );
    err(
        unsafe { aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, None, null_mut()) },
        null_param,
    );
    err(
        unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, None) },
        null_param,
    );
    err(
        unsafe { aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, None) },
        null_param,
    );
    // One callback per type, except OTHER, which takes several (even the same one twice).
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_init), tag(1)) });
    err(
        unsafe { aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_init_other), tag(2)) },
        internal,
    );
    ok(unsafe { aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_finalize), tag(1)) });
    err(
        unsafe { aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_finalize), tag(2)) },
        internal,
    );
    for _ in 0..2 {
        ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_OTHER, Some(on_init), tag(3)) });
        ok(unsafe { aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, Some(on_finalize), tag(3)) });
    }
    // Unregistering: a type with no callback, or a function not registered for it, is 500000.
    err(
        unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, Some(on_init)) },
        internal,
    );
    err(
        unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_init_other)) },
        internal,
    );
    err(
        unsafe { aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, Some(on_finalize)) },
        internal,
    );
    ok(unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_init)) });
    err(
        unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_init)) },
        internal,
    );
    ok(unsafe { aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, Some(on_finalize)) });
    for _ in 0..2 {
        ok(unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, Some(on_init)) });
        ok(unsafe { aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, Some(on_finalize)) });
    }
    err(
        unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, Some(on_init)) },
        internal,
    );
}

/// The configuration texts the C-string callback read, in order.
static TEXTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A callback written as C code writes it: `configStr` read as a C string (up to its NUL), and
/// the length checked against it.
unsafe extern "C" fn read_as_c_string(cfg: *const c_char, len: usize, _: *mut c_void) -> aclError {
    let text = unsafe { std::ffi::CStr::from_ptr(cfg) };
    let text = text.to_string_lossy().into_owned();
    let ok = text.len() == len;
    TEXTS.lock().unwrap().push(text);
    if ok { 0 } else { 999_999 }
}

#[test]
fn the_configuration_text_is_a_c_string() {
    let _g = serial();
    down();
    TEXTS.lock().unwrap().clear();
    ok(unsafe { aclInitCallbackRegister(ACL_REG_TYPE_OTHER, Some(read_as_c_string), null_mut()) });
    // No configuration file: an empty C string (a valid pointer to a NUL), length 0.
    ok(unsafe { aclInit(null()) });
    ok(unsafe { aclFinalize() });
    // A file: its text, NUL-terminated, and its length; also for a callback registered late.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acl.json");
    std::fs::write(&path, "{\"dump\": {\"dump_mode\": \"all\"}}").unwrap();
    let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    ok(unsafe { aclInit(path.as_ptr()) });
    ok(unsafe {
        aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, Some(read_as_c_string), null_mut())
    });
    ok(unsafe { aclFinalize() });
    let file = "{\"dump\": {\"dump_mode\": \"all\"}}".to_string();
    assert_eq!(
        *TEXTS.lock().unwrap(),
        [String::new(), file.clone(), file],
        "what the callbacks read as C strings"
    );
    ok(unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, Some(read_as_c_string)) });
    ok(unsafe { aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, Some(read_as_c_string)) });
    TEXTS.lock().unwrap().clear();
}
