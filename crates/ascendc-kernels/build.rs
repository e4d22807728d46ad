//! Builds the AscendC kernels and links them.
//!
//! Mode (`$ASCENDC_KERNELS_MODE`: `auto` by default, `host` or `npu`):
//! - **NPU**: a CANN install (the one `ascendcl-sys` found, published as `DEP_ACL_RT_ROOT`, else
//!   `ascendcl_sdk` discovery) whose `ascendc.cmake` is found (`$ASCENDC_CMAKE_DIR`, else under
//!   the install), and a SoC version (see `detect::detect_soc_version`). CMake
//!   (cpp/CMakeLists.txt, through the `cmake` crate) compiles the kernels with CANN's
//!   `ascendc_library()`, and Rust calls them through `extern "C"` launchers that use `<<<...>>>`.
//!   cmake is `$CMAKE`, else `cmake` on `PATH`.
//! - **Host**: otherwise. The same kernel sources compiled by the host C++ compiler (the `cc`
//!   crate; no cmake) against a small compatibility header; the Rust side runs them on an
//!   emulated stream.
//!
//! Every failure says what was tried and how to fix it (install cmake or set `CMAKE`, set
//! `ASCEND_HOME_PATH` or source CANN's `set_env.sh`, set `SOC_VERSION`), and stops the build.

#[path = "build/detect.rs"]
mod detect;

use std::path::{Path, PathBuf};

use detect::{Mode, ModeRequest};

/// Configuration passed to CMake in NPU mode.
struct Npu {
    root: PathBuf,
    cmake_dir: PathBuf,
    soc: detect::Soc,
    lib_dir: PathBuf,
    library: PathBuf,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("\nerror: ascendc-kernels build failed\n{e}");
        std::process::exit(1);
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn run() -> Result<(), String> {
    let manifest_dir =
        PathBuf::from(env("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR not set")?);
    let out_dir = PathBuf::from(env("OUT_DIR").ok_or("OUT_DIR not set")?);
    let cpp = manifest_dir.join("cpp");

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/detect.rs");
    println!("cargo:rerun-if-changed=cpp");
    for file in [
        "cpp/CMakeLists.txt",
        "cpp/kernels/write_read_value.cpp",
        "cpp/host/kernel_operator.h",
        "cpp/host/host_runtime.cpp",
    ] {
        println!("cargo:rerun-if-changed={file}");
    }
    for var in ascendcl_sdk::ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }
    for var in [detect::ENV_MODE, "CMAKE", "CXX", "CC", "CXXFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(ascendc_kernels_npu)");

    let workspace = detect::workspace_root(&manifest_dir);
    if let Some(ws) = &workspace {
        println!(
            "cargo:rerun-if-changed={}",
            ws.join("soc_version").display()
        );
    }
    let request = detect::parse_mode_request(env(detect::ENV_MODE).as_deref())?;
    let npu = match request {
        ModeRequest::Host => None,
        ModeRequest::Auto => match find_npu_toolchain(workspace.as_deref()) {
            Ok(npu) => Some(npu?),
            Err(why) => {
                if env("ASCENDC_CMAKE_DIR").is_some() {
                    println!(
                        "cargo:warning=ASCENDC_CMAKE_DIR is set but NPU mode is not possible, building host kernels: {}",
                        why.replace('\n', " ")
                    );
                }
                None
            }
        },
        ModeRequest::Npu => Some(
            find_npu_toolchain(workspace.as_deref())
                .map_err(|why| format!("{}=npu, but {why}", detect::ENV_MODE))??,
        ),
    };
    let mode = if npu.is_some() { Mode::Npu } else { Mode::Host };
    let (library, cmake) = match &npu {
        None => (build_host(&cpp, &out_dir)?, None),
        Some(npu) => {
            let (library, cmake) = build_npu(&cpp, &out_dir, npu)?;
            (library, Some(cmake))
        }
    };

    // For the crate (env!) and for dependents' build scripts (DEP_ASCENDC_KERNELS_*).
    println!("cargo:rustc-env=ASCENDC_KERNELS_BUILT_MODE={}", mode.name());
    println!(
        "cargo:rustc-env=ASCENDC_KERNELS_LIBRARY={}",
        library.display()
    );
    let (cmake, cmake_origin) = cmake
        .map(|(path, origin)| (path.display().to_string(), origin))
        .unwrap_or_default();
    println!("cargo:rustc-env=ASCENDC_KERNELS_CMAKE={cmake}");
    println!("cargo:rustc-env=ASCENDC_KERNELS_CMAKE_ORIGIN={cmake_origin}");
    println!("cargo:mode={}", mode.name());
    let (soc, soc_origin, cmake_dir, root) = match &npu {
        Some(n) => (
            n.soc.version.clone(),
            n.soc.origin.clone(),
            n.cmake_dir.display().to_string(),
            n.root.display().to_string(),
        ),
        None => Default::default(),
    };
    println!("cargo:rustc-env=ASCENDC_KERNELS_SOC_VERSION={soc}");
    println!("cargo:rustc-env=ASCENDC_KERNELS_SOC_ORIGIN={soc_origin}");
    println!("cargo:rustc-env=ASCENDC_KERNELS_ASCENDC_CMAKE_DIR={cmake_dir}");
    println!("cargo:rustc-env=ASCENDC_KERNELS_CANN_ROOT={root}");
    if npu.is_some() {
        println!("cargo:soc_version={soc}");
    }
    Ok(())
}

/// Host mode: the kernel sources and the host runtime support, compiled by the host C++
/// compiler through the `cc` crate (which also links the C++ standard library). Returns the
/// static library built.
fn build_host(cpp: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        // host/ first, so that "kernel_operator.h" is the compatibility header.
        .include(cpp.join("host"))
        .define("ASCENDC_KERNELS_HOST", "1")
        .file(cpp.join("kernels/write_read_value.cpp"))
        .file(cpp.join("host/host_runtime.cpp"))
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror=format");
    build.try_compile(Mode::Host.library()).map_err(|e| {
        format!(
            "compiling the host kernels ({}) with the C++ compiler failed: {e}\n\
             Host mode needs a C++17 compiler: install g++ or clang++, or set CXX to one. \
             The compiler's own output, if it ran, is above.",
            cpp.join("kernels").display()
        )
    })?;
    Ok(out_dir.join(format!("lib{}.a", Mode::Host.library())))
}

/// NPU mode: CANN's `ascendc_library()` through CMake (cpp/CMakeLists.txt). Returns the library
/// built, and the cmake binary used with where it was found.
fn build_npu(
    cpp: &Path,
    out_dir: &Path,
    npu: &Npu,
) -> Result<(PathBuf, (PathBuf, &'static str)), String> {
    let (cmake, cmake_origin) =
        detect::find_cmake(std::env::var_os("CMAKE"), std::env::var_os("PATH")).map_err(|e| {
            format!(
                "NPU mode (CANN at {} with ascendc.cmake) builds the kernels with CMake, but {e}",
                npu.root.display()
            )
        })?;
    let build_type = if env("PROFILE").as_deref() == Some("release") {
        "Release"
    } else {
        "Debug"
    };
    // The cmake crate runs `$CMAKE` (else `cmake`): hand it the binary found above.
    if std::env::var_os("CMAKE").is_none() {
        // SAFETY: the build script is single-threaded; nothing reads the environment concurrently.
        unsafe { std::env::set_var("CMAKE", &cmake) };
    }
    let mut config = cmake::Config::new(cpp);
    config
        .out_dir(out_dir.join("cmake"))
        .profile(build_type)
        .build_target(Mode::Npu.library())
        .define("SOC_VERSION", &npu.soc.version)
        .define("ASCENDC_CMAKE_DIR", &npu.cmake_dir)
        .define("ASCEND_CANN_PACKAGE_PATH", &npu.root);
    // The cmake crate prints each command (`running: ...`) and lets CMake's output through, then
    // panics on failure; turn that into this script's error report, which names the step.
    // A quiet panic hook keeps the cmake crate's panic message and backtrace out of the report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| config.build()));
    std::panic::set_hook(default_hook);
    if built.is_err() {
        return Err(format!(
            "CMake failed for {} (cmake: {}, {cmake_origin}); the `running:` line above is the \
             command, and CMake's output above it ends with the cause",
            cpp.display(),
            cmake.display()
        ));
    }
    let build_dir = out_dir.join("cmake").join("build");

    let link_file = build_dir.join("ascendc_kernels_link.txt");
    let link = std::fs::read_to_string(&link_file)
        .map_err(|e| format!("CMake did not write {}: {e}", link_file.display()))?;
    let mut lines = link.lines().map(str::trim).filter(|l| !l.is_empty());
    let archive = PathBuf::from(lines.next().ok_or("ascendc_kernels_link.txt is empty")?);
    link_archive(&archive)?;
    for extra in lines {
        link_interface_library(extra);
    }
    println!("cargo:rustc-link-search=native={}", npu.lib_dir.display());
    if let Some(name) = lib_name(&npu.library) {
        println!("cargo:rustc-link-lib=dylib={name}");
    }
    println!("cargo:rustc-cfg=ascendc_kernels_npu");
    if env("CARGO_CFG_TARGET_OS").as_deref() == Some("macos") {
        println!("cargo:rustc-link-lib=dylib=c++");
    } else {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    Ok((archive, (cmake, cmake_origin)))
}

/// Finds what NPU mode needs. The outer error says why NPU mode is impossible (no install, no
/// `ascendc.cmake`); the inner one that NPU mode was possible but the SoC is unknown, which stops
/// the build even in `auto` mode rather than silently building kernels the NPU cannot run.
fn find_npu_toolchain(workspace: Option<&Path>) -> Result<Result<Npu, String>, String> {
    let (root, lib_dir, library) = match (
        env("DEP_ACL_RT_ROOT"),
        env("DEP_ACL_RT_LIB_DIR"),
        env("DEP_ACL_RT_LIBRARY"),
    ) {
        (Some(root), Some(lib_dir), Some(library)) => {
            (root.into(), lib_dir.into(), PathBuf::from(library))
        }
        _ => {
            let install = ascendcl_sdk::SearchEnv::from_process()
                .find_install()
                .map_err(|e| {
                    format!(
                        "{e}\nSet ASCEND_HOME_PATH to the CANN install (or source its set_env.sh, \
                         which sets it)."
                    )
                })?;
            (install.root, install.lib_dir, install.library)
        }
    };
    let cmake_dir =
        ascendcl_sdk::ascendc_cmake_dir(&root, env("ASCENDC_CMAKE_DIR").map(PathBuf::from))
            .map_err(|e| {
                format!(
                    "the CANN install at {} has no ascendc.cmake: {}\nSet ASCENDC_CMAKE_DIR to \
                     the directory holding ascendc.cmake, or use a CANN toolkit that ships it.",
                    root.display(),
                    e.to_string().replace("no CANN install found; ", "")
                )
            })?;
    let inputs =
        detect::SocInputs::from_process(workspace.map(Path::to_path_buf), Some(root.clone()));
    Ok(detect::detect_soc_version(&inputs)
        .map_err(|e| {
            format!(
                "CANN at {} has ascendc.cmake ({}), so the kernels are built for the NPU, but {e}\n\
                 To build host kernels for the emulator instead, set {}=host.",
                root.display(),
                cmake_dir.display(),
                detect::ENV_MODE
            )
        })
        .map(|soc| Npu {
            root,
            cmake_dir,
            soc,
            lib_dir,
            library,
        }))
}

/// `libfoo.a` / `libfoo.so` → `foo`.
fn lib_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_prefix("lib").unwrap_or(file);
    let stem = stem.split(".so").next()?;
    Some(stem.strip_suffix(".a").unwrap_or(stem).to_string())
}

/// Links the NPU kernels library. It registers its kernel binaries from static constructors that
/// nothing references, so every object is kept (`+whole-archive`).
fn link_archive(archive: &Path) -> Result<(), String> {
    if !archive.is_file() {
        return Err(format!(
            "CMake reported {} as the kernels library, but it does not exist",
            archive.display()
        ));
    }
    let dir = archive.parent().ok_or("kernels library has no directory")?;
    let name = lib_name(archive).ok_or("kernels library has no usable name")?;
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static:+whole-archive={name}");
    Ok(())
}

/// One interface link library CMake reported for the NPU library: a file, `-lname` or a name.
fn link_interface_library(item: &str) {
    let path = Path::new(item);
    if path.is_absolute() && path.is_file() {
        if let (Some(dir), Some(name)) = (path.parent(), lib_name(path)) {
            let kind = if item.ends_with(".a") {
                "static"
            } else {
                "dylib"
            };
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib={kind}={name}");
        }
    } else if let Some(name) = item.strip_prefix("-l") {
        println!("cargo:rustc-link-lib=dylib={name}");
    } else if !item.is_empty()
        && item
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        println!("cargo:rustc-link-lib=dylib={item}");
    } else {
        println!(
            "cargo:warning=ascendc-kernels: not linking interface library {item:?} (not a file or a plain name)"
        );
    }
}
