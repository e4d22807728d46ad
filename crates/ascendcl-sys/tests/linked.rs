//! The `link` feature: the function table linked at build time. `cargo xtask test` runs this
//! against the emulator's install root (`cargo xtask emu-root`); built only with the feature
//! (`required-features` in Cargo.toml), in a binary of its own: it installs the backend of the
//! process.

use ascendcl_sys as sys;

#[test]
fn the_linked_table_calls_the_library_linked_at_build_time() {
    let backend = sys::install(sys::Backend::linked()).expect("first backend of the process");
    assert_eq!(backend.kind, sys::BackendKind::Linked);
    assert!(backend.library.is_none());
    let api = sys::api();
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: out-pointers to live integers.
    let rc = unsafe { (api.aclrtGetVersion)(&mut major, &mut minor, &mut patch) };
    assert_eq!((rc, major, minor, patch), (0, 1, 17, 0));
    // SAFETY: NULL is "no configuration"; count is a live out-pointer.
    unsafe {
        assert_eq!((api.aclInit)(std::ptr::null()), 0);
        assert_eq!(
            (api.aclInit)(std::ptr::null()),
            sys::ACL_ERROR_REPEAT_INITIALIZE
        );
        let mut count = 0u32;
        assert_eq!((api.aclrtGetDeviceCount)(&mut count), 0);
        assert!(count >= 1, "the emulator has devices");
        // A device id past the count is refused by the library itself.
        assert_eq!(
            (api.aclrtSetDevice)(count as i32),
            sys::ACL_ERROR_RT_INVALID_DEVICEID as i32
        );
        assert_eq!((api.aclFinalize)(), 0);
        assert_eq!((api.aclFinalize)(), sys::ACL_ERROR_REPEAT_FINALIZE);
    }
}
