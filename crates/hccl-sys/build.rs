//! Finds HCCL's library in a CANN install (when there is one) and publishes it to dependent build
//! scripts as `DEP_HCCL_ROOT`, `DEP_HCCL_LIB_DIR`, `DEP_HCCL_LIBRARY`, `DEP_HCCL_INCLUDE` and
//! `DEP_HCCL_VERSION`. Nothing is required: without CANN the crate builds and a backend is loaded
//! at run time. With the `link` feature, links the library found here.

use ascendcl_sdk::SearchEnv;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ascendcl_sdk::ENV_VARS
        .into_iter()
        .chain([ascendcl_sdk::ENV_HCCL_LIB, "PKG_CONFIG_PATH"])
    {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let mut env = SearchEnv::from_process();
    // pkg-config files, where a packaging provides them, name a root ahead of the default paths.
    for package in ["hccl", "acl_rt", "ascendcl"] {
        if let Some(prefix) = ascendcl_sdk::pkg_config_prefix(package) {
            env.env_roots
                .push((format!("pkg-config {package}"), prefix));
        }
    }
    let link = std::env::var_os("CARGO_FEATURE_LINK").is_some();
    match env.find_hccl() {
        Ok(install) => {
            for line in install.cargo_metadata(link) {
                println!("{line}");
            }
        }
        Err(not_found) if link => {
            panic!("feature `link` needs libhccl.so at build time: {not_found}")
        }
        Err(_) => {}
    }
}
