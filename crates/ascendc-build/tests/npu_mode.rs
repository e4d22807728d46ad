//! Mode choice and NPU mode as far as it can go without CANN: a fake install whose stand-in
//! `ascendc.cmake` records what `ascendc_library()` is given and builds a stub library; the
//! failures a user outside this workspace meets (no install, no SoC, no cmake), and what they say.
//!
//! One test function, in a binary of its own: it changes the process environment step by step
//! (which every process another test started would inherit).

use ascendc_build::{Build, Mode};
use std::path::{Path, PathBuf};

const STAND_IN: &str = r#"# Stand-in for CANN's ascendc.cmake: records the calls and builds a stub library.
set(RECORD "${CMAKE_BINARY_DIR}/ascendc_calls.txt")
file(WRITE "${RECORD}" "SOC_VERSION=${SOC_VERSION}\nASCEND_CANN_PACKAGE_PATH=${ASCEND_CANN_PACKAGE_PATH}\nRUN_MODE=${RUN_MODE}\n")
function(ascendc_library target type)
  file(APPEND "${RECORD}" "ascendc_library(${target} ${type} ${ARGN})\n")
  file(WRITE "${CMAKE_BINARY_DIR}/stub.cpp" "extern \"C\" int ascendc_build_stub() { return 7; }\n")
  add_library(${target} ${type} "${CMAKE_BINARY_DIR}/stub.cpp")
  set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "m")
endfunction()
function(ascendc_include_directories target)
  file(APPEND "${RECORD}" "ascendc_include_directories(${target} ${ARGN})\n")
endfunction()
function(ascendc_compile_definitions target)
  file(APPEND "${RECORD}" "ascendc_compile_definitions(${target} ${ARGN})\n")
endfunction()
"#;

const KERNEL: &str = r#"#include "kernel_operator.h"
#include "shared.h"
extern "C" __global__ __aicore__ void add(__gm__ const float* x, __gm__ float* y, uint32_t n)
{
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(y, n);
    g.SetValue(0, x[0] + SHARED);
}
"#;

fn cmake() -> PathBuf {
    if let Some(c) = std::env::var_os("CMAKE").filter(|c| !c.is_empty()) {
        return c.into();
    }
    let provisioned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tools/cmake/data/bin/cmake");
    if provisioned.is_file() {
        return provisioned;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("cmake"))
        .find(|p| p.is_file())
        .expect("this test needs cmake: set CMAKE, put cmake on PATH or run `cargo xtask tools`")
}

fn build(out: &Path, kernel: &Path, include: &Path) -> Build {
    let mut b = Build::new();
    b.file(kernel)
        .include(include)
        .define("LANES", Some("4"))
        .out_dir(out)
        .crate_name("t")
        .cargo_metadata(false)
        .target(&triple())
        .host(&triple())
        .opt_level("0");
    b
}

/// The triple of this (Linux) machine, for the compilers outside a build script.
fn triple() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

fn set(var: &str, value: impl AsRef<std::ffi::OsStr>) {
    // SAFETY: this test binary has one test, and it does not read the environment from other
    // threads while it changes it.
    unsafe { std::env::set_var(var, value) };
}

fn unset(var: &str) {
    // SAFETY: as in `set`.
    unsafe { std::env::remove_var(var) };
}

#[test]
fn npu_mode_through_a_stand_in_ascendc_cmake_and_the_failures_users_meet() {
    for var in [
        "ASCENDC_BUILD_MODE",
        "ASCENDC_CMAKE_DIR",
        "ASCENDCL_LIB",
        "ASCEND_INSTALL_PATH",
        "ASCEND_HOME_PATH",
        "ASCEND_TOOLKIT_HOME",
        "SOC_VERSION",
        "CMAKE",
    ] {
        unset(var);
    }
    let cmake = cmake();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let inc = tmp.path().join("inc");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&inc).unwrap();
    let kernel = src.join("add.cpp");
    std::fs::write(&kernel, KERNEL).unwrap();
    std::fs::write(inc.join("shared.h"), "#define SHARED 1.0f\n").unwrap();

    // No CANN anywhere: auto mode builds for the host, with no cmake at all.
    set("CMAKE", "/nonexistent/cmake");
    let out = build(&tmp.path().join("out-host"), &kernel, &inc)
        .try_compile("k")
        .unwrap();
    assert_eq!(out.mode, Mode::Host);
    assert_eq!(out.kernels.len(), 1);
    assert!(out.kernels[0].typed_launcher);
    let rust = std::fs::read_to_string(&out.rust_file).unwrap();
    assert!(
        rust.contains("Library::new(\"k\", __binary, &[&ADD])"),
        "{rust}"
    );
    assert!(rust.contains("pub fn add<'scope, 'env>("), "{rust}");
    // The kernel binary the emulator loads, with its table.
    let binary = out
        .binary
        .as_ref()
        .expect("host mode links a kernel binary");
    let bytes = std::fs::read(binary).unwrap();
    assert!(
        bytes.windows(22).any(|w| w == b"ascendc_host_binary_v1"),
        "{} exports no kernel table",
        binary.display()
    );

    // NPU asked for without an install: say where CANN was looked for and what to set.
    let err = build(&tmp.path().join("out-1"), &kernel, &inc)
        .mode(Mode::Npu)
        .try_compile("k")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("NPU mode was asked for, but no CANN install found"),
        "{err}"
    );
    assert!(err.contains("Set ASCEND_HOME_PATH"), "{err}");
    assert!(err.contains("set_env.sh"), "{err}");
    assert!(!err.contains("xtask"), "{err}");

    // A fake install with ascendc.cmake.
    let root = tmp.path().join("cann");
    let arch = if cfg!(target_arch = "aarch64") {
        "aarch64"
    } else {
        "x86_64"
    };
    let cmake_dir = root.join(format!("{arch}-linux/tikcpp/ascendc_kernel_cmake"));
    std::fs::create_dir_all(&cmake_dir).unwrap();
    std::fs::write(cmake_dir.join("ascendc.cmake"), STAND_IN).unwrap();
    std::fs::create_dir_all(root.join("lib64")).unwrap();
    std::fs::write(root.join("lib64/libacl_rt.so"), "").unwrap();
    set("ASCEND_HOME_PATH", &root);

    // Found, but the SoC is unknown: stop, and say how to choose one or build for the host.
    let err = build(&tmp.path().join("out-2"), &kernel, &inc)
        .try_compile("k")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("so the kernels are built for the NPU, but"),
        "{err}"
    );
    assert!(err.contains("Set SOC_VERSION"), "{err}");
    assert!(err.contains("ASCENDC_BUILD_MODE=host"), "{err}");

    // The SoC from the install's only platform configuration; no cmake: say how to get one.
    let platform = root.join(format!("{arch}-linux/data/platform_config"));
    std::fs::create_dir_all(&platform).unwrap();
    std::fs::write(platform.join("Ascend910B3.ini"), "").unwrap();
    set("PATH", "");
    let err = build(&tmp.path().join("out-3"), &kernel, &inc)
        .try_compile("k")
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs cmake 3.16 or later"), "{err}");
    assert!(err.contains("Install cmake"), "{err}");
    assert!(err.contains("or set CMAKE"), "{err}");
    set("PATH", &path);

    // Forced host mode ignores the install.
    let out = build(&tmp.path().join("out-4"), &kernel, &inc)
        .mode(Mode::Host)
        .try_compile("k")
        .unwrap();
    assert_eq!(out.mode, Mode::Host);

    // With cmake, and SOC_VERSION ahead of the platform configuration: ascendc_library() gets
    // the wrapper, which includes the source and launches with <<<...>>>.
    set("CMAKE", &cmake);
    set("SOC_VERSION", "Ascend910B2");
    let out_dir = tmp.path().join("out-npu");
    let out = build(&out_dir, &kernel, &inc).try_compile("k").unwrap();
    assert_eq!(out.mode, Mode::Npu);
    assert_eq!(out.soc_version.as_deref(), Some("Ascend910B2"));
    // What the build found, for the crate's build information; no kernel binary file in NPU
    // mode (the kernels are linked into the crate).
    assert_eq!(out.soc_origin.as_deref(), Some("$SOC_VERSION"));
    assert_eq!(out.cann_root.as_deref(), Some(root.as_path()));
    assert!(
        out.ascendc_cmake_dir
            .as_ref()
            .is_some_and(|d| d.join("ascendc.cmake").is_file())
    );
    assert_eq!(out.cmake.as_deref(), Some(cmake.as_path()));
    assert_eq!(out.binary, None);
    let calls =
        std::fs::read_to_string(out_dir.join("ascendc-build/k/cmake/build/ascendc_calls.txt"))
            .unwrap();
    let wrapper = out_dir.join("ascendc-build/k/npu/0_add.cpp");
    let expected = [
        "SOC_VERSION=Ascend910B2".to_string(),
        format!("ASCEND_CANN_PACKAGE_PATH={}", root.display()),
        "RUN_MODE=npu".to_string(),
        format!(
            "ascendc_library(ascendc_build_t_k STATIC {})",
            wrapper.display()
        ),
        format!(
            "ascendc_include_directories(ascendc_build_t_k PRIVATE;{})",
            inc.display()
        ),
        "ascendc_compile_definitions(ascendc_build_t_k PRIVATE;LANES=4)".to_string(),
    ];
    assert_eq!(calls.lines().collect::<Vec<_>>(), expected);
    let wrapper = std::fs::read_to_string(&wrapper).unwrap();
    assert!(
        wrapper.contains(&format!("#include \"{}\"", kernel.display())),
        "{wrapper}"
    );
    assert!(
        wrapper.contains("add<<<ascendc_build_blocks, nullptr, ascendc_build_stream>>>("),
        "{wrapper}"
    );
    let rust = std::fs::read_to_string(&out.rust_file).unwrap();
    assert!(rust.contains("pub const MODE: Mode = Mode::Npu;"), "{rust}");
    assert!(
        rust.contains("fn ascendc_build_t_k__add__npu(blocks: u32"),
        "{rust}"
    );
    assert!(!rust.contains("__enqueue"), "{rust}");
    assert!(
        out_dir
            .join("ascendc-build/k/cmake/build/lib/libascendc_build_t_k.a")
            .is_file()
    );

    // A broken ascendc.cmake: the error names the generated project, cmake and the SoC.
    std::fs::write(
        cmake_dir.join("ascendc.cmake"),
        "message(FATAL_ERROR \"this ascendc.cmake is broken\")\n",
    )
    .unwrap();
    let err = build(&tmp.path().join("out-broken"), &kernel, &inc)
        .try_compile("k")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("CMake failed on the generated project"),
        "{err}"
    );
    assert!(
        err.contains("SOC_VERSION=Ascend910B2 from $SOC_VERSION"),
        "{err}"
    );
}
