//! Loads a real shared library built here (a fixture exporting a few `acl*` symbols) to prove
//! symbol resolution, the missing-symbol path and the call path through the table; and resolves
//! backend choices against fake install trees: CANN when found, the emulator only when nothing
//! of CANN is there, an error naming the loader's reason when CANN is there but broken.

use ascendcl_sys as sys;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build_fixture(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/acl_fixture.c");
    let out = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(status.success(), "{cc} failed to build the fixture");
    out
}

#[test]
fn resolves_present_symbols_and_stubs_missing_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture(tmp.path(), "libacl_rt.so");
    let backend = sys::load_library(&lib).expect("fixture loads");
    assert_eq!(backend.kind, sys::BackendKind::Cann);
    assert_eq!(backend.library.as_deref(), Some(lib.as_path()));
    assert!(backend.missing.contains(&"aclrtMalloc"));
    assert!(!backend.missing.contains(&"aclInit"));
    assert_eq!(backend.missing.len(), sys::AclApi::NAMES.len() - 4);

    let api = &backend.api;
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: the fixture implements aclrtGetVersion with the header's signature.
    let rc = unsafe { (api.aclrtGetVersion)(&mut a, &mut b, &mut c) };
    assert_eq!((rc, a, b, c), (0, 1, 17, 42));
    // SAFETY: as above; NULL pointers are checked by the fixture.
    let rc = unsafe { (api.aclrtGetVersion)(std::ptr::null_mut(), &mut b, &mut c) };
    assert_eq!(rc, sys::ACL_ERROR_INVALID_PARAM);
    // SAFETY: aclInit takes a nullable path; aclFinalize takes nothing.
    unsafe {
        assert_eq!((api.aclInit)(std::ptr::null()), 0);
        assert_eq!(
            (api.aclInit)(std::ptr::null()),
            sys::ACL_ERROR_REPEAT_INITIALIZE
        );
        assert_eq!((api.aclFinalize)(), 0);
    }
    // SAFETY: returns a static string.
    let soc = unsafe { CStr::from_ptr((api.aclrtGetSocName)()) };
    assert_eq!(soc.to_str().unwrap(), "FixtureSoc");

    // A missing symbol: 207000 at the C level, and its name recorded for this thread.
    assert_eq!(sys::take_missing_symbol(), None);
    let mut p = std::ptr::null_mut();
    // SAFETY: the stub ignores its arguments.
    let rc = unsafe { (api.aclrtMalloc)(&mut p, 64, sys::ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_eq!(rc, sys::FEATURE_NOT_SUPPORT);
    assert_eq!(sys::take_missing_symbol(), Some("aclrtMalloc"));
    assert_eq!(sys::take_missing_symbol(), None, "taking clears it");
    // A missing pointer-returning function returns NULL.
    // SAFETY: the stub ignores its arguments.
    assert!(unsafe { (api.aclGetRecentErrMsg)() }.is_null());
    assert_eq!(sys::take_missing_symbol(), Some("aclGetRecentErrMsg"));
}

/// The functions of the profiling, data-channel and dump headers are looked up in the
/// runtime's companion libraries next to it, as CANN installs them.
#[test]
fn functions_the_runtime_lacks_resolve_from_its_companions() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture(tmp.path(), "libacl_rt.so");
    let src = tmp.path().join("prof.c");
    std::fs::write(
        &src,
        "int aclprofInit(const char *p, unsigned long n) { (void)p; return (int)n + 1; }\n",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(tmp.path().join("libmsprofiler.so"))
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let backend = sys::load_library(&lib).expect("fixture loads");
    assert!(!backend.missing.contains(&"aclprofInit"));
    assert!(backend.missing.contains(&"aclprofStart"), "not in either");
    assert!(backend.missing.contains(&"acltdtCreateChannel"));
    assert_eq!(backend.missing.len(), sys::AclApi::NAMES.len() - 5);
    // SAFETY: the companion implements aclprofInit with the header's signature.
    assert_eq!(unsafe { (backend.api.aclprofInit)(c"/tmp".as_ptr(), 4) }, 5);
}

#[test]
fn discovery_loads_the_first_usable_candidate_and_lists_failures() {
    let tmp = tempfile::tempdir().unwrap();
    // A root whose lib64 holds an old-name library that is not a shared object at all,
    // then a root with a real one under <arch>-linux/lib64.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(bad.join("lib64")).unwrap();
    std::fs::write(bad.join("lib64/libascendcl.so"), b"not an ELF file").unwrap();
    let good = tmp.path().join("good");
    let dir = good.join(format!("{}-linux/lib64", ascendcl_sdk::arch()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = build_fixture(&dir, "libascendcl.so");

    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), bad.clone()));
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), good.clone()));
    let backend = sys::load_cann_from(&env).expect("loads the good root");
    assert_eq!(backend.library.as_deref(), Some(lib.as_path()));

    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), bad.clone()));
    env.lib = Some(tmp.path().join("missing.so"));
    // Bare names may resolve on a machine with CANN on the loader path; only check the listing.
    if let Err(sys::LoadError::NotFound { tried }) = sys::load_cann_from(&env) {
        let text = sys::LoadError::NotFound {
            tried: tried.clone(),
        }
        .to_string();
        assert!(text.contains("missing.so"), "{text}");
        assert!(
            tried
                .iter()
                .any(|t| t.path == bad.join("lib64/libascendcl.so")
                    && t.why.contains("dlopen failed: ")
                    && t.why.contains(&t.path.display().to_string())),
            "{text}"
        );
        assert!(
            tried
                .iter()
                .any(|t| t.path == bad.join("lib64/libacl_rt.so") && t.why == "no such file"),
            "{text}"
        );
    }
}

#[test]
fn a_library_without_acl_symbols_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("empty.c");
    std::fs::write(&src, "int unrelated(void) { return 1; }\n").unwrap();
    let out = tmp.path().join("libempty.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    assert!(
        Command::new(cc)
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .unwrap()
            .success()
    );
    let err = sys::load_library(&out).unwrap_err();
    assert!(err.why.contains("none of the AscendCL"), "{}", err.why);
}

#[test]
fn choice_parses_the_environment_values() {
    assert_eq!("cann".parse::<sys::Choice>().unwrap(), sys::Choice::Cann);
    assert_eq!(
        "Emulator".parse::<sys::Choice>().unwrap(),
        sys::Choice::Emulator
    );
    assert_eq!("auto".parse::<sys::Choice>().unwrap(), sys::Choice::Auto);
    assert_eq!("".parse::<sys::Choice>().unwrap(), sys::Choice::Default);
    let err = "gpu".parse::<sys::Choice>().unwrap_err();
    assert!(err.to_string().contains("\"gpu\""));
}

#[test]
fn the_table_holds_the_whole_runtime_api() {
    for name in [
        "aclInit",
        "aclFinalize",
        "aclrtMalloc",
        "aclrtMemcpyAsync",
        "aclrtGetSocName",
        "aclGetRecentErrMsg",
        "aclrtLaunchHostFunc",
        "aclrtMemcpyBatch",
    ] {
        assert!(sys::AclApi::NAMES.contains(&name), "{name}");
    }
    assert!(sys::AclApi::NAMES.len() > 300);
    // The unresolved table reports every function missing.
    let api = sys::AclApi::unresolved();
    // SAFETY: the stub ignores its arguments.
    assert_eq!(unsafe { (api.aclFinalize)() }, sys::FEATURE_NOT_SUPPORT);
    assert_eq!(sys::take_missing_symbol(), Some("aclFinalize"));
}

#[test]
fn bindings_hold_every_memcpy_kind_and_malloc_policy() {
    let kinds = [
        sys::ACL_MEMCPY_HOST_TO_HOST,
        sys::ACL_MEMCPY_HOST_TO_DEVICE,
        sys::ACL_MEMCPY_DEVICE_TO_HOST,
        sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
        sys::ACL_MEMCPY_DEFAULT,
        sys::ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
        sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
        sys::ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
    ];
    assert_eq!(kinds, [0, 1, 2, 3, 4, 5, 6, 7]);
    let policies = [
        sys::ACL_MEM_MALLOC_HUGE_FIRST,
        sys::ACL_MEM_MALLOC_HUGE_ONLY,
        sys::ACL_MEM_MALLOC_NORMAL_ONLY,
        sys::ACL_MEM_MALLOC_HUGE_FIRST_P2P,
        sys::ACL_MEM_MALLOC_HUGE_ONLY_P2P,
        sys::ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
        sys::ACL_MEM_MALLOC_HUGE1G_ONLY,
        sys::ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    ];
    assert_eq!(policies, [0, 1, 2, 3, 4, 5, 6, 7]);
}

/// A library file that `dlopen` refuses, and the reason the loader gave.
fn not_a_library(dir: &Path) -> PathBuf {
    let lib = dir.join("lib64/libacl_rt.so");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::write(&lib, b"not an ELF file").unwrap();
    lib
}

/// The emulator stand-in for resolution tests: an empty in-process table.
fn fake_emulator() -> sys::Backend {
    sys::Backend::in_process(
        sys::BackendKind::Emulator,
        sys::AclApi::unresolved(),
        "fake emulator",
    )
}

/// On a machine whose loader path holds a CANN runtime, the bare names find it: the tests that
/// need "nothing of CANN here" say so and stop.
fn cann_on_loader_path(r: &Result<sys::Backend, sys::LoadError>) -> bool {
    let found = matches!(r, Ok(b) if b.kind == sys::BackendKind::Cann);
    if found {
        eprintln!("skipped: a CANN runtime is on this machine's loader path");
    }
    found
}

#[test]
fn nothing_found_picks_the_emulator_and_says_why() {
    let r = sys::Choice::Default.resolve(&ascendcl_sdk::SearchEnv::empty(), Some(fake_emulator));
    if cann_on_loader_path(&r) {
        return;
    }
    let b = r.expect("the emulator when nothing of CANN is there");
    assert_eq!(b.kind, sys::BackendKind::Emulator);
    assert!(
        b.reason
            .starts_with("no backend was named and no CANN install was found ("),
        "{}",
        b.reason
    );
}

#[test]
fn a_broken_cann_is_an_error_never_the_emulator() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cann");
    let lib = not_a_library(&root);
    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), root.clone()));
    for choice in [sys::Choice::Default, sys::Choice::Auto, sys::Choice::Cann] {
        let e = choice.resolve(&env, Some(fake_emulator)).unwrap_err();
        let sys::LoadError::Unusable { tried } = &e else {
            panic!("{choice:?}: {e}");
        };
        let bad = tried.iter().find(|t| t.path == lib).expect("the bad file");
        assert!(bad.present);
        // The loader's own reason, not just "dlopen failed".
        assert!(bad.why.contains(&lib.display().to_string()), "{}", bad.why);
        assert_ne!(bad.why, "dlopen failed");
        let text = e.to_string();
        assert!(text.contains("a CANN install was found"), "{text}");
        assert!(text.contains("ASCENDCL_BACKEND=emulator"), "{text}");
    }
}

#[test]
fn an_install_root_without_a_runtime_library_is_broken() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ascend-toolkit/latest");
    std::fs::create_dir_all(root.join("include/acl")).unwrap();
    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_TOOLKIT_HOME".into(), root.clone()));
    let e = sys::Choice::Default
        .resolve(&env, Some(fake_emulator))
        .unwrap_err();
    let sys::LoadError::Unusable { tried } = &e else {
        panic!("{e}");
    };
    let t = tried.iter().find(|t| t.path == root).expect("the root");
    assert!(t.present && t.origin == "$ASCEND_TOOLKIT_HOME", "{t:?}");
    assert!(t.why.contains("holds none of libacl_rt.so"), "{}", t.why);
}

#[test]
fn a_missing_dependency_is_reported_with_the_loaders_words() {
    let tmp = tempfile::tempdir().unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let dep_src = tmp.path().join("dep.c");
    std::fs::write(&dep_src, "int acl_fixture_dep(void) { return 7; }\n").unwrap();
    let dep = tmp.path().join("libacl_fixture_dep.so");
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&dep)
        .arg(&dep_src)
        .status()
        .unwrap();
    assert!(status.success());
    let root = tmp.path().join("cann");
    let lib = root.join("lib64/libacl_rt.so");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/acl_fixture.c");
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg(format!("-L{}", tmp.path().display()))
        .arg("-Wl,--no-as-needed")
        .arg("-lacl_fixture_dep")
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_file(&dep).unwrap();
    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.lib = Some(lib.clone());
    let Err(e) = sys::Choice::Default.resolve(&env, Some(fake_emulator)) else {
        panic!("a library whose dependency is missing loaded");
    };
    let sys::LoadError::Unusable { tried } = &e else {
        panic!("{e}");
    };
    let t = tried.iter().find(|t| t.path == lib).expect("the library");
    assert_eq!(t.origin, "$ASCENDCL_LIB");
    assert!(t.why.contains("libacl_fixture_dep.so"), "{}", t.why);
}

#[test]
fn asking_for_cann_when_there_is_none_ends_with_what_to_try() {
    let r = sys::Choice::Cann.resolve(&ascendcl_sdk::SearchEnv::empty(), Some(fake_emulator));
    if cann_on_loader_path(&r) {
        return;
    }
    let e = r.unwrap_err();
    assert!(matches!(e, sys::LoadError::NotFound { .. }), "{e}");
    let text = e.to_string();
    for hint in ["ASCENDCL_LIB", "set_env.sh", "ASCENDCL_BACKEND=emulator"] {
        assert!(text.contains(hint), "{hint}: {text}");
    }
    // Bare names left to the loader: its own reason, not "dlopen failed".
    assert!(text.contains("cannot open shared object file"), "{text}");
}

#[test]
fn a_found_cann_is_chosen_and_says_where_from() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cann");
    let dir = root.join("lib64");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = build_fixture(&dir, "libacl_rt.so");
    let mut env = ascendcl_sdk::SearchEnv::empty();
    env.env_roots.push(("ASCEND_HOME_PATH".into(), root));
    let b = sys::Choice::Default
        .resolve(&env, Some(fake_emulator))
        .unwrap();
    assert_eq!(b.kind, sys::BackendKind::Cann);
    assert_eq!(b.library.as_deref(), Some(lib.as_path()));
    assert_eq!(
        b.reason,
        "no backend was named and a CANN install was found through $ASCEND_HOME_PATH"
    );
}

#[test]
fn the_emulator_missing_from_the_build_names_the_feature() {
    let e = sys::Choice::Emulator
        .resolve(&ascendcl_sdk::SearchEnv::empty(), None)
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("`emulator` feature of the `ascendcl` crate"),
        "{text}"
    );
    let b = sys::Choice::Emulator
        .resolve(&ascendcl_sdk::SearchEnv::empty(), Some(fake_emulator))
        .unwrap();
    assert!(b.reason.contains("the emulator was named"), "{}", b.reason);
}

#[test]
fn without_cann_or_emulator_every_choice_but_the_emulator_says_there_is_no_backend() {
    // A production build (`ascendcl` without its `emulator` feature) on a machine without CANN.
    for choice in [sys::Choice::Default, sys::Choice::Cann, sys::Choice::Auto] {
        let e = choice
            .resolve(&ascendcl_sdk::SearchEnv::empty(), None)
            .unwrap_err();
        assert!(
            matches!(e, sys::LoadError::NoBackend { .. }),
            "{choice:?}: {e}"
        );
        let text = e.to_string();
        for needle in [
            "no CANN runtime library was found",
            "does not include the host emulator",
            "default-features = false",
            "set_env.sh",
            "ASCENDCL_LIB",
        ] {
            assert!(
                text.contains(needle),
                "{choice:?}: {needle:?} missing from {text}"
            );
        }
        // The emulator is not there to choose: the message must not suggest it.
        assert!(
            !text.contains("ASCENDCL_BACKEND=emulator"),
            "{choice:?}: {text}"
        );
    }
    // With an emulator compiled in, the same search keeps its own errors (or falls back).
    let e = sys::Choice::Cann
        .resolve(&ascendcl_sdk::SearchEnv::empty(), Some(fake_emulator))
        .unwrap_err();
    assert!(matches!(e, sys::LoadError::NotFound { .. }), "{e}");
}
