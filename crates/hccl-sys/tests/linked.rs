//! The `link` feature: the function table linked at build time. `cargo xtask test` runs this
//! against a `libhccl.so` it assembles (the loader fixture plus a C stub for every other function);
//! built only with the feature (`required-features` in Cargo.toml).

use hccl_sys as sys;
use std::ffi::CStr;

#[test]
fn the_linked_table_calls_the_library_linked_at_build_time() {
    let backend = sys::install(sys::Backend::linked()).expect("first backend of the process");
    assert_eq!(backend.kind, sys::BackendKind::Linked);
    assert!(backend.library.is_none());
    assert!(backend.missing.is_empty());
    let api = sys::api();
    // SAFETY: argument-free functions, and a static string for every code.
    unsafe {
        assert_eq!((api.HcclGetCommConfigCapability)(), 12);
        let text = CStr::from_ptr((api.HcclGetErrorString)(sys::HCCL_E_PTR));
        assert_eq!(text.to_str().unwrap(), "empty pointer");
        assert_eq!((api.HcclGroupEnd)(), sys::HCCL_E_NOT_SUPPORT);
        assert_eq!((api.HcclGroupStart)(), sys::HCCL_SUCCESS);
        assert_eq!((api.HcclGroupEnd)(), sys::HCCL_SUCCESS);
    }
    // A function the library answers with its own stub: the code comes from the library, so
    // nothing is recorded as missing on the Rust side.
    // SAFETY: the library's stub ignores its arguments.
    let rc = unsafe { (api.HcclBarrier)(std::ptr::null_mut(), std::ptr::null_mut()) };
    assert_eq!(rc, sys::HCCL_E_NOT_SUPPORT);
    assert_eq!(sys::take_missing_symbol(), None);
}
