//! Discovery of HCCL's library (`libhccl.so`) against fake install trees: the same roots and
//! layouts as the runtime library, with `HCCL_LIB` as the explicit override.

use crate::common::{env_with_root, touch};
use ascendcl_sdk::arch;
use std::fs;
use std::path::{Path, PathBuf};

#[test]
fn every_layout_is_found() {
    for layout in [
        "lib64".to_string(),
        format!("{}-linux/lib64", arch()),
        "runtime/lib64".to_string(),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let lib = tmp.path().join(&layout).join("libhccl.so");
        touch(&lib);
        touch(&tmp.path().join("include/hccl/hccl.h"));
        let found = env_with_root("ASCEND_TOOLKIT_HOME", tmp.path())
            .find_hccl()
            .unwrap();
        assert_eq!(found.library, lib, "layout {layout}");
        assert_eq!(found.lib_dir, tmp.path().join(&layout));
        assert_eq!(found.root, tmp.path());
        assert_eq!(found.include_dir, Some(tmp.path().join("include")));
        assert_eq!(found.origin, "$ASCEND_TOOLKIT_HOME");
    }
}

#[test]
fn a_root_with_only_the_runtime_is_not_an_hccl_install() {
    // The runtime library alone makes an ACL install, not an HCCL one: the next root wins.
    let runtime_only = tempfile::tempdir().unwrap();
    touch(&runtime_only.path().join("lib64/libacl_rt.so"));
    touch(&runtime_only.path().join("include/acl/acl.h"));
    let full = tempfile::tempdir().unwrap();
    touch(&full.path().join("lib64/libacl_rt.so"));
    touch(&full.path().join("lib64/libhccl.so"));

    let mut env = env_with_root("ASCEND_INSTALL_PATH", runtime_only.path());
    env.env_roots
        .push(("ASCEND_HOME_PATH".into(), full.path().into()));
    assert_eq!(env.find_install().unwrap().root, runtime_only.path());
    let hccl = env.find_hccl().unwrap();
    assert_eq!(hccl.root, full.path());
    assert_eq!(hccl.library, full.path().join("lib64/libhccl.so"));
    assert_eq!(hccl.include_dir, None, "no hccl/hccl.h in that root");

    let err = env_with_root("ASCEND_INSTALL_PATH", runtime_only.path())
        .find_hccl()
        .unwrap_err();
    assert_eq!(err.tried.len(), 1);
    let text = err.to_string();
    assert!(text.contains("none of libhccl.so under lib64"), "{text}");
}

#[test]
fn hccl_lib_beats_every_root_and_is_independent_of_ascendcl_lib() {
    let root = tempfile::tempdir().unwrap();
    touch(&root.path().join("lib64/libhccl.so"));
    touch(&root.path().join("lib64/libacl_rt.so"));
    let explicit = tempfile::tempdir().unwrap();
    let lib = explicit.path().join("lib64/libhccl_custom.so");
    touch(&lib);
    touch(&explicit.path().join("include/hccl/hccl.h"));

    let mut env = env_with_root("ASCEND_HOME_PATH", root.path());
    env.hccl_lib = Some(lib.clone());
    let found = env.find_hccl().unwrap();
    assert_eq!(found.library, lib);
    assert_eq!(found.origin, "$HCCL_LIB");
    assert_eq!(found.root, explicit.path());
    assert_eq!(found.include_dir, Some(explicit.path().join("include")));
    assert_eq!(env.hccl_candidates()[0].path, lib);
    assert_eq!(env.hccl_candidates()[0].origin, "$HCCL_LIB");
    // HCCL_LIB does not steer the runtime library, nor ASCENDCL_LIB HCCL's.
    assert_eq!(
        env.find_install().unwrap().library,
        root.path().join("lib64/libacl_rt.so")
    );
    env.hccl_lib = None;
    env.lib = Some(explicit.path().join("lib64/libacl_rt.so"));
    assert_eq!(
        env.find_hccl().unwrap().library,
        root.path().join("lib64/libhccl.so")
    );
}

#[test]
fn a_missing_hccl_lib_is_reported_and_the_roots_still_searched() {
    let root = tempfile::tempdir().unwrap();
    touch(&root.path().join("runtime/lib64/libhccl.so"));
    let mut env = env_with_root("ASCEND_HOME_PATH", root.path());
    env.hccl_lib = Some(root.path().join("absent/libhccl.so"));
    assert_eq!(
        env.find_hccl().unwrap().library,
        root.path().join("runtime/lib64/libhccl.so")
    );
    env.env_roots.clear();
    let err = env.find_hccl().unwrap_err();
    assert_eq!(err.tried.len(), 1);
    assert!(
        err.tried[0]
            .why
            .contains("$HCCL_LIB names a file that does not exist"),
        "{err}"
    );
}

#[test]
fn candidates_cover_every_root_and_directory_then_the_bare_name() {
    let home = tempfile::tempdir().unwrap();
    let mut env = env_with_root("ASCEND_INSTALL_PATH", Path::new("/nonexistent/cann"));
    env.home = Some(home.path().into());
    env.hccl_lib = Some(PathBuf::from("/nonexistent/libhccl.so"));
    let candidates = env.hccl_candidates();
    // HCCL_LIB, 3 roots (one from the environment, two under the home) × 3 directories, the bare name.
    assert_eq!(candidates.len(), 1 + 3 * 3 + 1);
    let paths: Vec<PathBuf> = candidates.iter().map(|c| c.path.clone()).collect();
    assert_eq!(
        paths[1],
        PathBuf::from("/nonexistent/cann/lib64/libhccl.so")
    );
    assert_eq!(
        paths[2],
        PathBuf::from(format!(
            "/nonexistent/cann/{}-linux/lib64/libhccl.so",
            arch()
        ))
    );
    assert_eq!(
        paths[3],
        PathBuf::from("/nonexistent/cann/runtime/lib64/libhccl.so")
    );
    assert_eq!(paths[4], home.path().join("Ascend/cann/lib64/libhccl.so"));
    let last = candidates.last().unwrap();
    assert!(last.bare && last.worth_trying());
    assert_eq!(last.path, PathBuf::from("libhccl.so"));
    assert_eq!(last.origin, "dynamic loader search path");
    assert!(
        candidates
            .iter()
            .filter(|c| !c.bare)
            .all(|c| !c.worth_trying())
    );
    assert!(
        candidates
            .iter()
            .all(|c| !c.path.to_string_lossy().contains("devlib"))
    );
}

#[test]
fn cargo_metadata_publishes_the_install_and_links_by_file_name() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib64/libhccl.so");
    touch(&lib);
    touch(&tmp.path().join("include/hccl/hccl.h"));
    fs::write(tmp.path().join("version.cfg"), "version=9.0.0\n").unwrap();
    let found = env_with_root("ASCEND_HOME_PATH", tmp.path())
        .find_hccl()
        .unwrap();
    assert_eq!(found.link_name(), "hccl");
    let root = tmp.path().display();
    let plain = found.cargo_metadata(false);
    assert_eq!(
        plain,
        [
            format!("cargo:root={root}"),
            format!("cargo:lib_dir={root}/lib64"),
            format!("cargo:library={root}/lib64/libhccl.so"),
            format!("cargo:include={root}/include"),
            "cargo:version=9.0.0".to_string(),
        ]
    );
    let linked = found.cargo_metadata(true);
    assert_eq!(linked[..plain.len()], plain[..]);
    assert_eq!(
        linked[plain.len()..],
        [
            format!("cargo:rustc-link-search=native={root}/lib64"),
            "cargo:rustc-link-lib=dylib=hccl".to_string(),
        ]
    );
}
