//! Finds a CANN install (when there is one) and publishes it to dependent build scripts as
//! `DEP_ACL_RT_ROOT`, `DEP_ACL_RT_INCLUDE`, `DEP_ACL_RT_LIB_DIR` and `DEP_ACL_RT_VERSION`.
//! Nothing is required: without CANN the crate builds and loads a backend at run time.
//! With the `link` feature, links the library found here.

use ascendcl_sdk::SearchEnv;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ascendcl_sdk::ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let mut env = SearchEnv::from_process();
    // pkg-config files, where a packaging provides them, name a root ahead of the default paths.
    for package in ["acl_rt", "ascendcl"] {
        if let Some(prefix) = ascendcl_sdk::pkg_config_prefix(package) {
            env.env_roots
                .push((format!("pkg-config {package}"), prefix));
        }
    }
    let link = std::env::var_os("CARGO_FEATURE_LINK").is_some();
    match env.find_install() {
        Ok(install) => {
            for line in install.cargo_metadata(link) {
                println!("{line}");
            }
            // The functions of the profiling, data-channel, queue and dump headers live in the
            // runtime's companion libraries (`COMPANIONS` of src/backend.rs), next to it.
            if link {
                for name in [
                    "msprofiler",
                    "acl_tdt_channel",
                    "acl_tdt_queue",
                    "ascend_dump",
                ] {
                    if install.lib_dir.join(format!("lib{name}.so")).is_file() {
                        println!("cargo:rustc-link-lib=dylib={name}");
                    }
                }
            }
        }
        Err(not_found) if link => {
            panic!(
                "feature `link` needs a CANN install at build time: {not_found}\n\
                 Set ASCEND_HOME_PATH to the CANN install (or source its set_env.sh), or build \
                 without the `link` feature to load the runtime library at run time."
            )
        }
        Err(_) => {}
    }
}
