//! The checked raw layer (`ascendcl::raw`): statuses become the crate's `Error` with the
//! function's name, other results pass through, and a function the backend lacks is reported by
//! name.

use crate::common::*;
use ascendcl::{Error, raw, sys};
use std::ffi::{CStr, c_void};

/// A round trip through device memory with nothing but raw calls (after the safe `Device` made
/// the device current): out-parameters are written on `Ok`.
#[test]
fn raw_calls_move_bytes_and_fill_out_parameters() {
    let r = rt();
    let device = r.device(0).unwrap();
    let mut count = 0u32;
    // SAFETY: a valid out-pointer.
    unsafe { raw::aclrtGetDeviceCount(&mut count) }.unwrap();
    assert_eq!(count, r.device_count().unwrap());

    let data: Vec<u32> = (0..256).collect();
    let bytes = std::mem::size_of_val(data.as_slice());
    let mut dev: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; device 0 is current on this thread (`device`).
    unsafe { raw::aclrtMalloc(&mut dev, bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST) }.unwrap();
    assert!(!dev.is_null());
    let mut back = vec![0u32; data.len()];
    // SAFETY: `dev` holds `bytes` bytes of device memory; the host buffers hold `bytes` bytes.
    unsafe {
        raw::aclrtMemcpy(
            dev,
            bytes,
            data.as_ptr().cast(),
            bytes,
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
        .unwrap();
        raw::aclrtMemcpy(
            back.as_mut_ptr().cast(),
            bytes,
            dev,
            bytes,
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
        .unwrap();
        raw::aclrtFree(dev).unwrap();
    }
    assert_eq!(back, data);
    drop(device);
}

/// A refused call is `Error::Acl` naming the function, with the code as an `AclError` and the
/// runtime's message; the thread's last error reports the same code through the two functions
/// that return it as a value.
#[test]
fn a_refusal_names_the_function_and_its_code() {
    let r = rt();
    let _device = r.device(0).unwrap();
    // Start from a clean last error on this thread.
    let _ = raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL);
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; a size of 0 is refused.
    let e = unsafe { raw::aclrtMalloc(&mut p, 0, sys::ACL_MEM_MALLOC_HUGE_FIRST) }.unwrap_err();
    assert!(p.is_null());
    let Error::Acl { api, code, .. } = &e else {
        panic!("not an Error::Acl: {e:?}");
    };
    assert_eq!(*api, "aclrtMalloc");
    let code = AclError(*code);
    assert_eq!(e.code(), Some(code));
    assert!(!code.is_success());
    if emulator_active() {
        assert_eq!(code, AclError::INVALID_PARAM, "{e}");
        assert!(
            e.to_string()
                .starts_with("aclrtMalloc failed: ACL_ERROR_INVALID_PARAM (100000): "),
            "{e}"
        );
        assert!(e.runtime_message().is_some(), "{e:?}");
    }
    assert_eq!(raw::aclrtPeekAtLastError(sys::ACL_RT_THREAD_LEVEL), code);
    assert_eq!(raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL), code);
    assert_eq!(
        raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL),
        AclError::SUCCESS
    );
}

/// Values and pointers pass through unchanged.
#[test]
fn values_and_pointers_pass_through() {
    let _r = rt();
    let soc = raw::aclrtGetSocName();
    assert!(!soc.is_null());
    // SAFETY: non-NULL and NUL-terminated, owned by the runtime for the process's life.
    let soc = unsafe { CStr::from_ptr(soc) }.to_str().unwrap();
    assert!(!soc.is_empty());
}

/// A function the emulator does not implement: the checked form is `Error::MissingSymbol`
/// naming it, a pass-through form returns zero and leaves its name for `take_missing_symbol`.
#[test]
fn a_function_the_backend_lacks_is_named() {
    let _r = rt();
    if !needs_emulator(
        "a_function_the_backend_lacks_is_named",
        "unimplemented functions",
    ) {
        return;
    }
    let missing = &sys::active().expect("a backend").missing;
    for name in ["aclrtSetOpWaitTimeout", "aclrtCreateGroupInfo"] {
        assert!(
            missing.contains(&name),
            "{name} is implemented now: pick another function"
        );
    }
    let e = raw::aclrtSetOpWaitTimeout(10).unwrap_err();
    assert!(
        matches!(
            e,
            Error::MissingSymbol {
                api: "aclrtSetOpWaitTimeout",
                symbol: "aclrtSetOpWaitTimeout"
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.code(), Some(AclError::FEATURE_NOT_SUPPORT));
    let group = raw::aclrtCreateGroupInfo();
    assert!(group.is_null());
    assert_eq!(sys::take_missing_symbol(), Some("aclrtCreateGroupInfo"));
    assert_eq!(sys::take_missing_symbol(), None);
}

#[test]
fn the_list_is_the_tables() {
    assert_eq!(raw::NAMES, sys::AclApi::NAMES);
}
