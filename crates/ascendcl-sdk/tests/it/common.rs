//! Helpers of the discovery tests: fake install trees in temporary directories.

use ascendcl_sdk::SearchEnv;
use std::fs;
use std::path::Path;

/// Creates an empty file, and the directories above it.
pub fn touch(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, b"").unwrap();
}

/// A search environment whose only root is `root`, named by the environment variable `var`.
pub fn env_with_root(var: &str, root: &Path) -> SearchEnv {
    let mut env = SearchEnv::empty();
    env.env_roots.push((var.to_string(), root.to_path_buf()));
    env
}
