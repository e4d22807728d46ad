//! An in-process backend installed once: calls go through `api()` to the functions it filled,
//! the rest report themselves missing, and a second install is refused. (One process-wide
//! backend, so this is its own test binary.)

use hccl_sys as sys;

unsafe extern "C" fn rank_size(comm: sys::HcclComm, size: *mut u32) -> sys::HcclResult {
    if comm.is_null() || size.is_null() {
        return sys::HCCL_E_PTR;
    }
    // SAFETY: checked non-NULL; the caller passes a live out-pointer.
    unsafe { *size = 3 };
    sys::HCCL_SUCCESS
}

#[test]
fn the_first_backend_wins_and_calls_reach_it() {
    assert!(sys::try_api().is_none());
    assert!(sys::active().is_none());
    let mut api = sys::HcclApi::unresolved();
    api.HcclGetRankSize = rank_size;
    let backend = sys::Backend::in_process(sys::BackendKind::Custom, api, "test backend");
    let active = sys::install(backend).expect("first install");
    assert_eq!(active.kind, sys::BackendKind::Custom);
    assert_eq!(active.description, "test backend");
    assert!(active.library.is_none());

    let mut size = 0;
    let comm: sys::HcclComm = std::ptr::NonNull::<u8>::dangling().as_ptr().cast();
    // SAFETY: `rank_size` only writes through the out-pointer.
    unsafe {
        assert_eq!(
            (sys::api().HcclGetRankSize)(comm, &mut size),
            sys::HCCL_SUCCESS
        );
        assert_eq!(
            (sys::api().HcclGetRankSize)(std::ptr::null_mut(), &mut size),
            sys::HCCL_E_PTR
        );
    }
    assert_eq!(size, 3);
    let mut rank = 0;
    // SAFETY: the stub ignores its arguments.
    let rc = unsafe { (sys::api().HcclGetRankId)(comm, &mut rank) };
    assert_eq!(rc, sys::HCCL_E_NOT_SUPPORT);
    assert_eq!(sys::take_missing_symbol(), Some("HcclGetRankId"));

    let second = sys::Backend::in_process(
        sys::BackendKind::Emulator,
        sys::HcclApi::unresolved(),
        "second",
    );
    let kept = sys::install(second).expect_err("a backend is already installed");
    assert_eq!(kept.description, "test backend");
    assert!(std::ptr::eq(kept, sys::active().unwrap()));
}
