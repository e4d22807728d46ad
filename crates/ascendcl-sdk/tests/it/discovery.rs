//! Discovery against fake install trees in temporary directories.

use crate::common::{env_with_root, touch};
use ascendcl_sdk::{SearchEnv, arch};
use std::fs;
use std::path::PathBuf;

#[test]
fn every_layout_is_found() {
    let layouts = [
        "lib64".to_string(),
        format!("{}-linux/lib64", arch()),
        "runtime/lib64".to_string(),
    ];
    for layout in layouts {
        for name in ["libacl_rt.so", "libascendcl.so"] {
            let tmp = tempfile::tempdir().unwrap();
            let lib = tmp.path().join(&layout).join(name);
            touch(&lib);
            touch(&tmp.path().join("include/acl/acl.h"));
            let found = env_with_root("ASCEND_HOME_PATH", tmp.path())
                .find_install()
                .unwrap();
            assert_eq!(found.library, lib, "layout {layout} name {name}");
            assert_eq!(found.root, tmp.path());
            assert_eq!(found.include_dir, Some(tmp.path().join("include")));
            assert_eq!(found.origin, "$ASCEND_HOME_PATH");
        }
    }
}

#[test]
fn new_library_name_wins_over_old() {
    let tmp = tempfile::tempdir().unwrap();
    touch(&tmp.path().join("lib64/libascendcl.so"));
    touch(&tmp.path().join("lib64/libacl_rt.so"));
    let found = env_with_root("ASCEND_HOME_PATH", tmp.path())
        .find_install()
        .unwrap();
    assert!(found.library.ends_with("lib64/libacl_rt.so"));
}

#[test]
fn devlib_stubs_are_never_used() {
    let tmp = tempfile::tempdir().unwrap();
    let a = arch();
    touch(&tmp.path().join(format!("{a}-linux/devlib/libacl_rt.so")));
    touch(
        &tmp.path()
            .join(format!("{a}-linux/devlib/linux/{a}/libascendcl.so")),
    );
    let env = env_with_root("ASCEND_HOME_PATH", tmp.path());
    let err = env.find_install().unwrap_err();
    assert_eq!(err.tried.len(), 1);
    assert!(err.to_string().contains("none of libacl_rt.so"));
    let candidates = env.library_candidates();
    assert!(
        candidates
            .iter()
            .all(|c| !c.path.to_string_lossy().contains("devlib"))
    );
}

#[test]
fn env_precedence() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    touch(&first.path().join("lib64/libascendcl.so"));
    touch(&second.path().join("lib64/libacl_rt.so"));
    let mut env = SearchEnv::empty();
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), first.path().into()));
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), second.path().into()));
    assert_eq!(env.find_install().unwrap().root, first.path());

    // ASCENDCL_LIB beats every root.
    let explicit = tempfile::tempdir().unwrap();
    let lib = explicit.path().join("lib64/libcustom.so");
    touch(&lib);
    env.lib = Some(lib.clone());
    let found = env.find_install().unwrap();
    assert_eq!(found.library, lib);
    assert_eq!(found.origin, "$ASCENDCL_LIB");
    assert_eq!(env.library_candidates()[0].path, lib);
}

#[test]
fn home_roots_follow_env_roots() {
    let home = tempfile::tempdir().unwrap();
    touch(
        &home
            .path()
            .join("Ascend/ascend-toolkit/latest/lib64/libascendcl.so"),
    );
    let mut env = SearchEnv::empty();
    env.home = Some(home.path().into());
    let found = env.find_install().unwrap();
    assert_eq!(found.origin, "~/Ascend/ascend-toolkit/latest");
    let roots: Vec<PathBuf> = env.roots().into_iter().map(|r| r.path).collect();
    assert_eq!(
        roots,
        vec![
            home.path().join("Ascend/cann"),
            home.path().join("Ascend/ascend-toolkit/latest")
        ]
    );
}

#[test]
fn system_roots_are_in_documented_order() {
    let mut env = SearchEnv::empty();
    env.system_roots = true;
    let roots: Vec<String> = env
        .roots()
        .into_iter()
        .map(|r| r.path.display().to_string())
        .collect();
    assert_eq!(
        roots,
        [
            "/usr/local/Ascend/cann",
            "/usr/local/Ascend/ascend-toolkit/latest",
            "/opt/Ascend/cann"
        ]
    );
}

#[test]
fn nothing_found_lists_every_path() {
    let missing = tempfile::tempdir().unwrap();
    let empty_root = tempfile::tempdir().unwrap();
    let mut env = SearchEnv::empty();
    env.lib = Some(missing.path().join("nope.so"));
    env.env_roots
        .push(("ASCEND_INSTALL_PATH".into(), missing.path().join("absent")));
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), empty_root.path().into()));
    let err = env.find_install().unwrap_err();
    let text = err.to_string();
    assert_eq!(err.tried.len(), 3, "{text}");
    assert!(text.contains("nope.so"), "{text}");
    assert!(text.contains("absent"), "{text}");
    assert!(text.contains("no such directory"), "{text}");
    assert!(
        text.contains(&empty_root.path().display().to_string()),
        "{text}"
    );

    // The loader's candidate list covers every root and directory, both names, then bare names.
    let candidates = env.library_candidates();
    assert_eq!(candidates.len(), 1 + 2 * 3 * 2 + 2);
    assert!(candidates.last().unwrap().bare);
    assert_eq!(
        candidates.last().unwrap().path,
        PathBuf::from("libascendcl.so")
    );
    assert!(
        candidates
            .iter()
            .filter(|c| !c.bare)
            .all(|c| !c.worth_trying())
    );
}

#[test]
fn version_and_cmake_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let a = arch();
    fs::create_dir_all(tmp.path().join(format!("{a}-linux"))).unwrap();
    fs::write(
        tmp.path()
            .join(format!("{a}-linux/ascend_toolkit_install.info")),
        "package_name=Ascend-cann-toolkit\nversion=8.5.0\n",
    )
    .unwrap();
    assert_eq!(
        ascendcl_sdk::read_version(tmp.path()).as_deref(),
        Some("8.5.0")
    );

    assert!(ascendcl_sdk::ascendc_cmake_dir(tmp.path(), None).is_err());
    let cmake_dir = tmp
        .path()
        .join(format!("{a}-linux/tikcpp/ascendc_kernel_cmake"));
    touch(&cmake_dir.join("ascendc.cmake"));
    assert_eq!(
        ascendcl_sdk::ascendc_cmake_dir(tmp.path(), None).unwrap(),
        cmake_dir
    );
    let explicit = tempfile::tempdir().unwrap();
    touch(&explicit.path().join("ascendc.cmake"));
    assert_eq!(
        ascendcl_sdk::ascendc_cmake_dir(tmp.path(), Some(explicit.path().into())).unwrap(),
        explicit.path()
    );
}
