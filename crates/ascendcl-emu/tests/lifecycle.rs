//! Lifecycle: init/finalize, devices and reference counts, contexts, diagnostics. The tests of
//! this binary share one process-wide runtime and tear it down, so they run one at a time.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn init() {
    let r = unsafe { aclInit(null()) };
    assert!(r == 0 || r == AclError::REPEAT_INITIALIZE);
    take_msg();
}

#[test]
fn init_finalize_and_reinit() {
    let _g = serial();
    init();
    assert_eq!(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    assert!(
        unsafe { aclGetRecentErrMsg() }.is_null(),
        "a repeat adds no message"
    );
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        AclError::REPEAT_INITIALIZE
    );
    ok(unsafe { aclFinalize() });
    err(unsafe { aclFinalize() }, AclError::REPEAT_FINALIZE);
    // Re-initialisation in the same process is allowed (see docs/emulator.md).
    ok(unsafe { aclInit(c"".as_ptr()) });
    ok(unsafe { aclFinalize() });
}

#[test]
fn init_config_files() {
    let _g = serial();
    if unsafe { aclInit(null()) } == 0 {
        ok(unsafe { aclFinalize() });
    } else {
        take_msg();
        ok(unsafe { aclFinalize() });
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = std::ffi::CString::new(dir.path().join("nope.json").to_str().unwrap()).unwrap();
    err(unsafe { aclInit(missing.as_ptr()) }, AclError::INVALID_FILE);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ \"dump\": ").unwrap();
    let bad = std::ffi::CString::new(bad.to_str().unwrap()).unwrap();
    err(unsafe { aclInit(bad.as_ptr()) }, AclError::PARSE_FILE);
    let good = dir.path().join("acl.json");
    std::fs::write(&good, "{\"dump\": {\"dump_list\": []}}").unwrap();
    let good = std::ffi::CString::new(good.to_str().unwrap()).unwrap();
    ok(unsafe { aclInit(good.as_ptr()) });
    ok(unsafe { aclFinalize() });
}

/// A freshly initialised runtime with one reference.
fn fresh() {
    if unsafe { aclInit(null()) } != 0 {
        take_msg();
        ok(unsafe { aclFinalize() });
        ok(unsafe { aclInit(null()) });
    }
}

#[test]
fn finalize_reference_counts() {
    let _g = serial();
    fresh();
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    let mut rc = 99u64;
    // NULL: the header's "don't report the count"; the reference is still dropped.
    ok(unsafe { aclFinalizeReference(null_mut()) });
    ok(unsafe { aclFinalizeReference(&mut rc) });
    assert_eq!(rc, 1);
    ok(unsafe { aclFinalizeReference(&mut rc) });
    assert_eq!(rc, 0);
    err(
        unsafe { aclFinalizeReference(&mut rc) },
        AclError::REPEAT_FINALIZE,
    );
    err(
        unsafe { aclFinalizeReference(null_mut()) },
        AclError::REPEAT_FINALIZE,
    );
}

#[test]
fn finalize_tears_down_devices() {
    let _g = serial();
    init();
    ok(unsafe { aclrtSetDevice(0) });
    let p = malloc(64);
    let s = stream();
    ok(unsafe { aclFinalize() });
    // Everything is gone: the context, the stream, the memory.
    let mut d = 0;
    err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::INVALID_HANDLE,
    );
    // aclrtFree is a memory call: without a current context, 107002 first.
    err(unsafe { aclrtFree(p) }, AclError::CONTEXT_NULL);
    let last = ascendcl_emu::release_reports().pop().unwrap();
    assert_eq!(last.device, None);
    assert!(last.allocations >= 1 && last.streams >= 1, "{last}");
    // With a context again, the pointer is known to be freed.
    init();
    ok(unsafe { aclrtSetDevice(0) });
    err(unsafe { aclrtFree(p) }, AclError::MEMORY_FREE);
    ok(unsafe { aclrtResetDevice(0) });
}

#[test]
fn version_soc_run_mode() {
    let _g = serial();
    let (mut a, mut b, mut c) = (0, 0, 0);
    ok(unsafe { aclrtGetVersion(&mut a, &mut b, &mut c) });
    assert_eq!((a, b, c), (1, 17, 0));
    err(
        unsafe { aclrtGetVersion(null_mut(), &mut b, &mut c) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetVersion(&mut a, &mut b, null_mut()) },
        AclError::INVALID_PARAM,
    );
    let soc = unsafe { std::ffi::CStr::from_ptr(aclrtGetSocName()) };
    assert_eq!(soc.to_str().unwrap(), ascendcl_emu::config().soc);
    let mut mode = 7;
    ok(unsafe { aclrtGetRunMode(&mut mode) });
    assert_eq!(mode, ACL_HOST);
    err(
        unsafe { aclrtGetRunMode(null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut buf = [0 as std::ffi::c_char; 128];
    ok(unsafe { aclsysGetVersionStr(c"runtime".as_ptr().cast_mut(), buf.as_mut_ptr()) });
    let v = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    assert_eq!(v.to_str().unwrap(), "9.0.0");
    err(
        unsafe { aclsysGetVersionStr(c"nonesuch".as_ptr().cast_mut(), buf.as_mut_ptr()) },
        AclError::INVALID_FILE,
    );
    err(
        unsafe { aclsysGetVersionStr(null_mut(), buf.as_mut_ptr()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclsysGetVersionStr(c"cann".as_ptr().cast_mut(), null_mut()) },
        AclError::INVALID_PARAM,
    );
}

#[test]
fn recent_messages_and_last_error() {
    let _g = serial();
    take_msg();
    assert!(
        unsafe { aclGetRecentErrMsg() }.is_null(),
        "NULL when there is none"
    );
    let mut p = null_mut();
    assert_eq!(
        unsafe { aclrtMalloc(&mut p, 0, 0) },
        AclError::INVALID_PARAM
    );
    assert_eq!(
        unsafe { aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    assert_eq!(
        unsafe { aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    let m = take_msg();
    assert!(m.contains("aclrtMalloc") && m.contains("size"), "{m}");
    assert!(
        unsafe { aclGetRecentErrMsg() }.is_null(),
        "cleared by the read"
    );
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        0,
        "reset by the read"
    );
    assert_eq!(unsafe { aclrtGetLastError(5) }, AclError::INVALID_PARAM);
    // Messages are per thread.
    assert_eq!(
        unsafe { aclrtMalloc(null_mut(), 8, 0) },
        AclError::INVALID_PARAM
    );
    std::thread::spawn(|| assert!(unsafe { aclGetRecentErrMsg() }.is_null()))
        .join()
        .unwrap();
    assert!(take_msg().contains("devPtr"));
}

#[test]
fn devices_and_reference_counts() {
    let _g = serial();
    init();
    let mut n = 0u32;
    ok(unsafe { aclrtGetDeviceCount(&mut n) });
    assert_eq!(n, ascendcl_emu::config().devices);
    err(
        unsafe { aclrtGetDeviceCount(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(unsafe { aclrtSetDevice(-1) }, AclError::INVALID_DEVICEID);
    err(
        unsafe { aclrtSetDevice(n as i32) },
        AclError::INVALID_DEVICEID,
    );
    err(
        unsafe { aclrtResetDevice(n as i32) },
        AclError::INVALID_DEVICEID,
    );
    let mut d = -1;
    std::thread::spawn(|| {
        let mut d = 0;
        err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
        err(unsafe { aclrtSynchronizeDevice() }, AclError::CONTEXT_NULL);
    })
    .join()
    .unwrap();
    err(
        unsafe { aclrtResetDevice(1) },
        AclError::CONTEXT_RELEASE_ERROR,
    );
    ok(unsafe { aclrtSetDevice(1) });
    ok(unsafe { aclrtGetDevice(&mut d) });
    assert_eq!(d, 1);
    err(
        unsafe { aclrtGetDevice(null_mut()) },
        AclError::INVALID_PARAM,
    );
    // Two threads share the default context.
    let mut mine = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut mine) });
    let theirs = std::thread::spawn(|| {
        ok(unsafe { aclrtSetDevice(1) });
        let mut c = null_mut();
        ok(unsafe { aclrtGetCurrentContext(&mut c) });
        c as usize
    })
    .join()
    .unwrap();
    assert_eq!(mine as usize, theirs);
    assert_eq!(ascendcl_emu::device_refs(1), 2);
    ok(unsafe { aclrtResetDevice(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    // Still usable: one reference left.
    let p = malloc(64);
    free(p);
    ok(unsafe { aclrtResetDevice(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    err(
        unsafe { aclrtResetDevice(1) },
        AclError::CONTEXT_RELEASE_ERROR,
    );
    err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
    // Force: releases whatever the count.
    ok(unsafe { aclrtSetDevice(1) });
    ok(unsafe { aclrtSetDevice(1) });
    let s = stream();
    ok(unsafe { aclrtResetDeviceForce(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtResetDeviceForce(1) },
        AclError::CONTEXT_RELEASE_ERROR,
    );
}

#[test]
fn contexts() {
    let _g = serial();
    init();
    let mut c = null_mut();
    err(
        unsafe { aclrtCreateContext(null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtCreateContext(&mut c, 5) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtSetDevice(0) });
    let mut def = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut def) });
    err(
        unsafe { aclrtGetCurrentContext(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtCreateContext(&mut c, 0) });
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    assert_eq!(cur, c, "the new context is current");
    // Each context has its own default stream.
    let mut s1 = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut s1) });
    ok(unsafe { aclrtSetCurrentContext(def) });
    let mut s0 = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut s0) });
    assert_ne!(s0, s1);
    err(
        unsafe { aclrtSetCurrentContext(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtSetCurrentContext(0x1234 as aclrtContext) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtDestroyContext(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(unsafe { aclrtDestroyContext(def) }, AclError::PARAM_INVALID);
    ok(unsafe { aclrtDestroyContext(c) });
    err(
        unsafe { aclrtSetCurrentContext(c) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtResetDevice(0) });
    // A context created without aclrtSetDevice opens the device until it is destroyed.
    std::thread::spawn(|| {
        let mut c = null_mut();
        ok(unsafe { aclrtCreateContext(&mut c, 1) });
        let p = malloc(16);
        free(p);
        ok(unsafe { aclrtDestroyContext(c) });
        let mut d = 0;
        err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
    })
    .join()
    .unwrap();
}

/// A device holds 65536 events; the next creation is 207007, another device is not affected,
/// and destroying one makes room again. Creating them counts nothing under the registry's lock
/// (the per-device count is kept as events come and go), so filling a device is quick; the
/// tests of this binary run one at a time, so the count is this test's own.
#[test]
fn a_device_holds_65536_events() {
    let _g = serial();
    fresh();
    let _d1 = Dev::new(1);
    let _d0 = Dev::new(0);
    let mut avail = 0;
    ok(unsafe { aclrtGetEventAvailNum(&mut avail) });
    assert_eq!(avail, 65536);
    let mut events = Vec::with_capacity(65536);
    for i in 0..65536 {
        let mut e = null_mut();
        let r = unsafe { aclrtCreateEvent(&mut e) };
        assert_eq!(r, 0, "event {i}: {}", take_msg());
        events.push(e);
    }
    ok(unsafe { aclrtGetEventAvailNum(&mut avail) });
    assert_eq!(avail, 0);
    let mut e = null_mut();
    err(
        unsafe { aclrtCreateEventWithFlag(&mut e, ACL_EVENT_SYNC) },
        AclError::NO_EVENT_RESOURCE,
    );
    // Device 1 has its own budget.
    std::thread::spawn(|| {
        ok(unsafe { aclrtSetDevice(1) });
        let mut e = null_mut();
        ok(unsafe { aclrtCreateEvent(&mut e) });
        ok(unsafe { aclrtDestroyEvent(e) });
        ok(unsafe { aclrtResetDevice(1) });
    })
    .join()
    .unwrap();
    ok(unsafe { aclrtDestroyEvent(events.pop().unwrap()) });
    ok(unsafe { aclrtCreateEvent(&mut e) });
    events.push(e);
    for e in events {
        ok(unsafe { aclrtDestroyEvent(e) });
    }
    ok(unsafe { aclrtGetEventAvailNum(&mut avail) });
    assert_eq!(avail, 65536);
}
