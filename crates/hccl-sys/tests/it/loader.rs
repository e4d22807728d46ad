//! Loads a real shared library built here (a fixture exporting a few `Hccl*` symbols) to prove
//! symbol resolution, the missing-symbol path, refusal of a library that is not HCCL, and
//! discovery through the install roots.

use hccl_sys as sys;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The functions the fixture exports.
const EXPORTED: [&str; 5] = [
    "HcclGetErrorString",
    "HcclGetRankSize",
    "HcclGetCommConfigCapability",
    "HcclGroupStart",
    "HcclGroupEnd",
];

fn compile(source: &Path, out: &Path) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(source)
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(status.success(), "{cc} failed to build {}", out.display());
}

fn build_fixture(dir: &Path) -> PathBuf {
    let out = dir.join("libhccl.so");
    compile(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/hccl_fixture.c"),
        &out,
    );
    out
}

fn build_from_text(dir: &Path, name: &str, c: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, c).unwrap();
    let out = dir.join(format!("lib{name}.so"));
    compile(&src, &out);
    out
}

#[test]
fn resolves_present_symbols_and_stubs_missing_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture(tmp.path());
    let backend = sys::load_library(&lib).expect("fixture loads");
    assert_eq!(backend.kind, sys::BackendKind::Cann);
    assert_eq!(backend.library.as_deref(), Some(lib.as_path()));
    assert_eq!(
        backend.missing.len(),
        sys::HcclApi::NAMES.len() - EXPORTED.len()
    );
    for name in EXPORTED {
        assert!(!backend.missing.contains(&name), "{name}");
    }
    assert!(backend.missing.contains(&"HcclAllReduce"));
    assert!(
        backend.description.contains("5 of 47"),
        "{}",
        backend.description
    );

    let api = &backend.api;
    // SAFETY: HcclGetErrorString returns a static string for every code.
    let text = unsafe { CStr::from_ptr((api.HcclGetErrorString)(sys::HCCL_E_NOT_SUPPORT)) };
    assert_eq!(text.to_str().unwrap(), "not support feature");
    let mut ranks: u32 = 4;
    let comm: sys::HcclComm = (&mut ranks as *mut u32).cast();
    let mut size = 0u32;
    // SAFETY: the fixture's handle is a pointer to a live u32; `size` is a live out-pointer.
    unsafe {
        assert_eq!((api.HcclGetRankSize)(comm, &mut size), sys::HCCL_SUCCESS);
        assert_eq!(size, 4);
        assert_eq!(
            (api.HcclGetRankSize)(comm, std::ptr::null_mut()),
            sys::HCCL_E_PTR
        );
        assert_eq!((api.HcclGetCommConfigCapability)(), 12);
        assert_eq!((api.HcclGroupEnd)(), sys::HCCL_E_NOT_SUPPORT);
        assert_eq!((api.HcclGroupStart)(), sys::HCCL_SUCCESS);
        assert_eq!((api.HcclGroupEnd)(), sys::HCCL_SUCCESS);
    }
    assert_eq!(
        sys::take_missing_symbol(),
        None,
        "present functions record nothing"
    );

    // A missing symbol: HCCL_E_NOT_SUPPORT at the C level, and its name recorded for this thread.
    let mut buf = [0u8; 16];
    // SAFETY: the stub ignores its arguments.
    let rc = unsafe {
        (api.HcclAllReduce)(
            buf.as_mut_ptr().cast(),
            buf.as_mut_ptr().cast(),
            4,
            sys::HCCL_DATA_TYPE_FP32,
            sys::HCCL_REDUCE_SUM,
            comm,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, sys::HCCL_E_NOT_SUPPORT);
    assert_eq!(rc.0, 5, "the header's value of HCCL_E_NOT_SUPPORT");
    assert_eq!(sys::take_missing_symbol(), Some("HcclAllReduce"));
    assert_eq!(sys::take_missing_symbol(), None, "taking clears it");
    // The record is per thread.
    // SAFETY: the stub ignores its arguments.
    let rc = unsafe { (api.HcclBarrier)(comm, std::ptr::null_mut()) };
    assert_eq!(rc, sys::HCCL_E_NOT_SUPPORT);
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(sys::take_missing_symbol(), None));
    });
    assert_eq!(sys::take_missing_symbol(), Some("HcclBarrier"));
}

#[test]
fn stubs_return_the_value_each_return_type_calls_for() {
    let api = sys::HcclApi::unresolved();
    // SAFETY: stubs ignore their arguments.
    unsafe {
        assert_eq!((api.HcclGroupStart)(), sys::HCCL_E_NOT_SUPPORT);
        assert_eq!(sys::take_missing_symbol(), Some("HcclGroupStart"));
        // A `uint32_t` capability: zero, "no configuration field supported" (not 5).
        assert_eq!((api.HcclGetCommConfigCapability)(), 0);
        assert_eq!(
            sys::take_missing_symbol(),
            Some("HcclGetCommConfigCapability")
        );
        assert!((api.HcclGetErrorString)(sys::HCCL_SUCCESS).is_null());
        assert_eq!(sys::take_missing_symbol(), Some("HcclGetErrorString"));
    }
}

#[test]
fn a_library_without_hccl_symbols_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let unrelated = build_from_text(tmp.path(), "empty", "int unrelated(void) { return 1; }\n");
    let err = sys::load_library(&unrelated).unwrap_err();
    assert!(
        err.why.contains("none of the HCCL functions"),
        "{}",
        err.why
    );
    // An ACL runtime is not HCCL either.
    let acl = build_from_text(
        tmp.path(),
        "acl_rt",
        "int aclInit(const char *p) { (void)p; return 0; }\nint aclFinalize(void) { return 0; }\n",
    );
    let err = sys::load_library(&acl).unwrap_err();
    assert!(
        err.why.contains("none of the HCCL functions"),
        "{}",
        err.why
    );
    assert_eq!(err.path, acl);
    assert_eq!(err.origin, "explicit path");
}

#[test]
fn a_file_the_loader_rejects_carries_the_loader_s_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let bogus = tmp.path().join("libhccl.so");
    std::fs::write(&bogus, b"not an ELF file").unwrap();
    let err = sys::load_library(&bogus).unwrap_err();
    // dlerror() names the file and says what is wrong with it.
    assert!(
        err.why.contains(&bogus.display().to_string()),
        "{}",
        err.why
    );
    assert_ne!(err.why, "no such file");
}

#[test]
fn discovery_loads_the_first_usable_candidate_and_lists_failures() {
    let tmp = tempfile::tempdir().unwrap();
    // A root whose lib64 holds a libhccl.so that is not a shared object at all, then a root with
    // a real one under <arch>-linux/lib64.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(bad.join("lib64")).unwrap();
    std::fs::write(bad.join("lib64/libhccl.so"), b"not an ELF file").unwrap();
    let good = tmp.path().join("good");
    let dir = good.join(format!("{}-linux/lib64", ascendcl_sdk::arch()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = build_fixture(&dir);

    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), bad.clone()));
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), good.clone()));
    let backend = sys::load_cann_from(&env).expect("loads the good root");
    assert_eq!(backend.library.as_deref(), Some(lib.as_path()));

    // HCCL_LIB names the file directly, ahead of every root.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let explicit = build_fixture(&elsewhere);
    env.hccl_lib = Some(explicit.clone());
    let backend = sys::load_cann_from(&env).expect("loads HCCL_LIB");
    assert_eq!(backend.library.as_deref(), Some(explicit.as_path()));

    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), bad.clone()));
    env.hccl_lib = Some(tmp.path().join("missing.so"));
    // The bare name may resolve on a machine with CANN on the loader path; only check the listing.
    if let Err(sys::LoadError::NotFound { tried }) = sys::load_cann_from(&env) {
        let text = sys::LoadError::NotFound {
            tried: tried.clone(),
        }
        .to_string();
        assert!(text.starts_with("no HCCL library (libhccl.so)"), "{text}");
        assert!(
            tried.iter().any(|t| t.path == tmp.path().join("missing.so")
                && t.origin == "$HCCL_LIB"
                && t.why == "no such file"),
            "{text}"
        );
        let bad_lib = bad.join("lib64/libhccl.so");
        let rejected = tried
            .iter()
            .find(|t| t.path == bad_lib)
            .expect("bad root tried");
        assert!(
            rejected.why.contains(&bad_lib.display().to_string()),
            "{text}"
        );
        assert_eq!(rejected.origin, "$ASCEND_INSTALL_PATH");
        let bare = tried.last().unwrap();
        assert_eq!(bare.path, PathBuf::from("libhccl.so"));
        assert_ne!(bare.why, "no such file", "the loader was asked: {text}");
    }
}
