//! Helpers shared by the emulator's integration tests.
#![allow(dead_code, clippy::undocumented_unsafe_blocks)]

pub use ascendcl_emu::capi::*;
pub use ascendcl_sys::*;
pub use std::ffi::c_void;
pub use std::ptr::{null, null_mut};

/// Asserts success, showing the recent messages otherwise.
#[track_caller]
pub fn ok(code: aclError) {
    assert_eq!(
        code,
        0,
        "expected success; messages: {:?}",
        ascendcl_emu::recent_messages()
    );
}

/// Asserts a specific code (an `AclError` constant) and clears the thread's messages.
#[track_caller]
pub fn err(code: aclError, want: impl Into<AclError>) {
    assert_eq!(
        AclError(code),
        want.into(),
        "messages: {:?}",
        ascendcl_emu::recent_messages()
    );
    unsafe { aclGetRecentErrMsg() };
}

/// The calling thread's recent messages joined, cleared.
pub fn take_msg() -> String {
    let p = unsafe { aclGetRecentErrMsg() };
    if p.is_null() {
        String::new()
    } else {
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A device reference held for the scope (`aclrtSetDevice` / `aclrtResetDevice`).
pub struct Dev(pub i32);

impl Dev {
    pub fn new(id: i32) -> Dev {
        let r = unsafe { aclInit(null()) };
        assert!(r == 0 || r == AclError::REPEAT_INITIALIZE, "aclInit: {r}");
        take_msg();
        ok(unsafe { aclrtSetDevice(id) });
        Dev(id)
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let r = unsafe { aclrtResetDevice(self.0) };
        if !std::thread::panicking() {
            ok(r);
        }
    }
}

pub fn malloc(size: usize) -> *mut c_void {
    malloc_policy(size, ACL_MEM_MALLOC_NORMAL_ONLY)
}

pub fn malloc_policy(size: usize, policy: aclrtMemMallocPolicy) -> *mut c_void {
    let mut p = null_mut();
    ok(unsafe { aclrtMalloc(&mut p, size, policy) });
    p
}

pub fn malloc_host(size: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(unsafe { aclrtMallocHost(&mut p, size) });
    p
}

pub fn free(p: *mut c_void) {
    ok(unsafe { aclrtFree(p) });
}

pub fn free_host(p: *mut c_void) {
    ok(unsafe { aclrtFreeHost(p) });
}

pub fn stream() -> aclrtStream {
    let mut s = null_mut();
    ok(unsafe { aclrtCreateStream(&mut s) });
    s
}

pub fn event() -> aclrtEvent {
    let mut e = null_mut();
    ok(unsafe { aclrtCreateEvent(&mut e) });
    e
}

pub fn h2d(dst: *mut c_void, src: &[u8]) {
    ok(unsafe {
        aclrtMemcpy(
            dst,
            src.len(),
            src.as_ptr().cast(),
            src.len(),
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

pub fn d2h(dst: &mut [u8], src: *const c_void) {
    ok(unsafe {
        aclrtMemcpy(
            dst.as_mut_ptr().cast(),
            dst.len(),
            src,
            dst.len(),
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
}

/// Orders the tests of a binary, whose tests share one process, around the device-wide
/// synchronisations (`aclrtSynchronizeDevice*`, the frees that synchronise the device): these
/// wait for every stream of the device and report, and take, the failure of any of them.
static DEVICE_WIDE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that synchronises a whole device: no test whose tasks fail or wait on purpose
/// runs meanwhile.
pub fn whole_device() -> std::sync::RwLockWriteGuard<'static, ()> {
    DEVICE_WIDE.write().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test whose tasks fail, park or wait on purpose (failing tasks, gates, value and
/// notify waits, timed waits, stopped streams, model executions): such tests run alongside each
/// other, never alongside a device-wide synchronisation.
pub fn failing_tasks() -> std::sync::RwLockReadGuard<'static, ()> {
    DEVICE_WIDE.read().unwrap_or_else(|e| e.into_inner())
}
