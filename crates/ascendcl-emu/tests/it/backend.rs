//! The in-process backend: the table points at the emulator; other functions keep the stub.
#![allow(clippy::undocumented_unsafe_blocks)]

use ascendcl_sys::{AclApi, AclError, BackendKind, take_missing_symbol};
use std::ptr::null_mut;

#[test]
fn table_calls_the_emulator_and_stubs_the_rest() {
    let b = ascendcl_emu::backend();
    assert_eq!(b.kind, BackendKind::Emulator);
    assert_eq!(
        b.missing.len() + ascendcl_emu::IMPLEMENTED.len(),
        AclApi::NAMES.len()
    );
    for n in ascendcl_emu::IMPLEMENTED {
        assert!(AclApi::NAMES.contains(n), "{n} is a real runtime function");
    }
    let api = b.api;
    let r = unsafe { (api.aclInit)(std::ptr::null()) };
    assert!(r == 0 || r == AclError::REPEAT_INITIALIZE);
    assert_eq!(unsafe { (api.aclrtSetDevice)(0) }, 0);
    let mut p = null_mut();
    assert_eq!(unsafe { (api.aclrtMalloc)(&mut p, 64, 0) }, 0);
    assert_eq!(unsafe { (api.aclrtFree)(p) }, 0);
    // Not implemented: the sys stub, 207000 with the name recorded. Never a silent success.
    let mut q = [0u8; 64];
    assert_eq!(
        unsafe { (api.aclrtMemFlush)(q.as_mut_ptr().cast(), q.len()) },
        AclError::FEATURE_NOT_SUPPORT
    );
    assert_eq!(take_missing_symbol(), Some("aclrtMemFlush"));
    // ... and, like every failure of the emulator, a recent-error message naming the function
    // and the thread's last error.
    let msg = ascendcl_emu::recent_messages().join("\n");
    assert!(
        msg.contains("aclrtMemFlush") && msg.contains("207000"),
        "{msg}"
    );
    assert_eq!(
        unsafe { (api.aclrtGetLastError)(ascendcl_sys::ACL_RT_THREAD_LEVEL) },
        AclError::FEATURE_NOT_SUPPORT
    );
    // Pointer and value returns: NULL and zero.
    assert!(unsafe { (api.aclrtCreateGroupInfo)() }.is_null());
    assert_eq!(take_missing_symbol(), Some("aclrtCreateGroupInfo"));
    assert_eq!(unsafe { (api.aclrtResetDevice)(0) }, 0);
    // The backend installs as the process's backend.
    let active = ascendcl_sys::install(ascendcl_emu::backend()).unwrap_or_else(|a| a);
    assert_eq!(active.kind, BackendKind::Emulator);
    let mut n = 0u32;
    assert_eq!(
        unsafe { (ascendcl_sys::api().aclrtGetDeviceCount)(&mut n) },
        0
    );
    assert_eq!(n, ascendcl_emu::config().devices);
}
