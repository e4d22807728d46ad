//! Build AscendC kernels from a build script and launch them from safe Rust — the `cc` crate
//! for AscendC.
//!
//! ```no_run
//! // in build.rs's `main`
//! ascendc_build::Build::new()
//!     .file("kernels/vector_add.cpp")
//!     .compile("vector_add");
//! ```
//!
//! ```text
//! // src/lib.rs
//! mod kernels {
//!     ascendc_build::include_kernels!("vector_add");
//! }
//!
//! stream.scope(|s| {
//!     kernels::vector_add(s, 8, &x, &y, &mut z, n)?; // typed: f32 buffers, u32 length
//!     Ok(())
//! })?;
//! ```
//!
//! # Two modes, one API
//!
//! * **NPU** ([`Mode::Npu`]): a CANN install with `ascendc.cmake` was found (or NPU mode was
//!   asked for). The sources are compiled by CANN's `ascendc_library()` for `SOC_VERSION`
//!   through CMake (the `cmake` crate), and the launchers use `<<<blockDim, l2ctrl, stream>>>`.
//! * **Host** ([`Mode::Host`]): otherwise. The same sources are compiled by the host C++ compiler
//!   (the `cc` crate; no cmake needed) against this crate's AscendC host layer
//!   ([`include_dir`]) into a static library (the host-side C++) and a kernel binary
//!   ([`Output::binary`]): a shared object with one entry per kernel (the binary ABI of
//!   `include/ascendc_host/binary.h`) that the emulator loads and launches as the runtime does,
//!   every block on a pool of host threads, a failing kernel failing the stream's task with the
//!   runtime's code. The `kernel<<<blockDim, l2ctrl, stream>>>(args...)` launches of host-side
//!   wrappers in the sources are rewritten into launches through the runtime, so a kernel file
//!   written for CANN builds unchanged.
//!
//! The mode is [`Build::mode`], else `$ASCENDC_BUILD_MODE` (`auto`, `host`, `npu`), else `auto`.
//!
//! # Generated launchers
//!
//! For every `__global__` function at file scope the build writes, into
//! `OUT_DIR/ascendc-build/<lib>.rs`, a descriptor `static <NAME>: Kernel` (with a launch
//! builder: `NAME.launch(scope, blocks).input(..).output(..).scalar(..).run()`) and — when
//! every parameter has a Rust type — a typed launcher taking a `&ascendcl::Scope`, the block
//! count and one argument per parameter:
//!
//! | C++ parameter | Rust argument |
//! |---|---|
//! | `__gm__ const T*` | `impl In<'scope, T>`: `&DeviceBuffer<T>`, `&DeviceSlice<T>`, a `Claimed<T>` |
//! | `__gm__ T*` | `impl Out<'scope, T>`: `&mut DeviceBuffer<T>`, `&mut DeviceSliceMut<T>`, a `Claimed<T>` |
//! | `GM_ADDR`, `__gm__ void*`, pointer to an unknown type | as above, any element type |
//! | `float`, `int32_t`, `uint32_t`, ... | `f32`, `i32`, `u32`, ... |
//! | `half`, `bfloat16_t` | `u16` (the bits) |
//! | anything else (a struct by value) | no typed launcher: the builder's `unsafe fn value(bytes)` |
//!
//! Launches go through the scope, so the buffers stay borrowed until the stream has run the
//! kernel; an element type that does not match does not compile; a buffer of another device
//! or host memory is a typed error before anything is enqueued. In host mode a launch is
//! `aclrtKernelArgs*` and `aclrtLaunchKernelWithConfig` on the library's binary (loaded once);
//! a kernel that fails makes the scope's synchronisation return the runtime's error. See
//! `docs/kernels.md` of the repository for the binary ABI and the supported AscendC API of the
//! host layer.
#![warn(missing_docs)]

mod codegen;
mod detect;
mod host;
mod npu;
mod parse;
pub mod program;
mod unit;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

pub use detect::ENV_MODE;

/// Environment variable: `1` builds host kernels for the CPU of the build machine
/// (`-march=native`, `-mcpu=native` on Arm), `0` does not; [`Build::native_cpu`] comes first.
pub const ENV_NATIVE: &str = "ASCENDC_HOST_NATIVE";

/// The launcher support code written next to every generated module.
const RT_SOURCE: &str = include_str!("../rt/launch.rs");

/// Where a library's generated files go, under `OUT_DIR`.
const GEN_DIR: &str = "ascendc-build";

/// How kernels are compiled, and so where they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Compiled by the host C++ compiler against the host layer; run on the emulator.
    Host,
    /// Compiled by CANN's `ascendc_library()`; run on an NPU.
    Npu,
}

impl Mode {
    /// `host` or `npu`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Host => "host",
            Mode::Npu => "npu",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The directory of the AscendC host layer (`kernel_operator.h` and `ascendc_host/`), for
/// compiling kernel sources for the host outside a [`Build`] (C++ unit tests of kernels).
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Why a build failed. The message says what was tried and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A kernel the build found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelInfo {
    /// The function name.
    pub name: String,
    /// The source file.
    pub file: PathBuf,
    /// 1-based line of the name.
    pub line: usize,
    /// Whether a typed launcher was generated (every parameter has a Rust type).
    pub typed_launcher: bool,
}

/// What a build produced.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Output {
    /// The mode it was built in.
    pub mode: Mode,
    /// The generated Rust module (what [`include_kernels!`] includes).
    pub rust_file: PathBuf,
    /// The kernel binary (host mode): a shared object the emulator loads with
    /// `aclrtBinaryLoadFromFile` (or from its bytes), one entry per kernel. The generated module
    /// embeds it; a program may also load it by path (`ascendcl::Module::load`).
    pub binary: Option<PathBuf>,
    /// The kernels, in source order.
    pub kernels: Vec<KernelInfo>,
    /// The SoC (NPU mode).
    pub soc_version: Option<String>,
    /// Where the SoC came from (`Build::soc_version`, `$SOC_VERSION`, `npu-smi info`, the
    /// install's platform configuration; NPU mode).
    pub soc_origin: Option<String>,
    /// The CANN install root (NPU mode).
    pub cann_root: Option<PathBuf>,
    /// The directory of `ascendc.cmake` (NPU mode).
    pub ascendc_cmake_dir: Option<PathBuf>,
    /// The cmake binary that built the kernels (NPU mode; host mode needs none).
    pub cmake: Option<PathBuf>,
    /// Things in the sources the build could not use (also printed as cargo warnings).
    pub notes: Vec<String>,
    /// What the host C++ compiler wrote about the kernel sources (host mode): its warnings, line
    /// by line, as the `cc` crate also prints them as cargo warnings; a native CPU build that
    /// could not be honoured says why here too. Empty in NPU mode.
    pub compiler_warnings: Vec<String>,
    /// The command line of each compilation (host mode): compiler, then arguments.
    pub compile_commands: Vec<Vec<String>>,
}

/// A kernels library to build: the AscendC sources and how to compile them.
#[derive(Debug, Clone, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    host_flags: Vec<String>,
    mode: Option<Mode>,
    soc: Option<String>,
    out_dir: Option<PathBuf>,
    crate_name: Option<String>,
    no_metadata: bool,
    target: Option<String>,
    host: Option<String>,
    opt_level: Option<String>,
    no_warnings: bool,
    native: Option<bool>,
}

impl Build {
    /// An empty build.
    pub fn new() -> Self {
        Build::default()
    }

    /// Adds a kernel source (relative paths are relative to the package root, where build
    /// scripts run).
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds several kernel sources.
    pub fn files<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Self {
        for p in paths {
            self.file(p);
        }
        self
    }

    /// Adds an include directory (both modes).
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a preprocessor macro (both modes).
    pub fn define(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        self.defines
            .push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// Adds a flag for the host C++ compiler (host mode only).
    pub fn host_flag(&mut self, flag: &str) -> &mut Self {
        self.host_flags.push(flag.to_string());
        self
    }

    /// Forces the mode, ahead of `$ASCENDC_BUILD_MODE`.
    pub fn mode(&mut self, mode: Mode) -> &mut Self {
        self.mode = Some(mode);
        self
    }

    /// The SoC to compile for in NPU mode (e.g. `Ascend910B2`), ahead of `$SOC_VERSION`.
    pub fn soc_version(&mut self, soc: &str) -> &mut Self {
        self.soc = Some(soc.to_string());
        self
    }

    /// The output directory (default `$OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The crate name used in exported symbol names (default `$CARGO_PKG_NAME`).
    pub fn crate_name(&mut self, name: &str) -> &mut Self {
        self.crate_name = Some(name.to_string());
        self
    }

    /// Whether to print `cargo:` lines (link, rerun, warnings); on by default.
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Self {
        self.no_metadata = !on;
        self
    }

    /// The target triple (default `$TARGET`), for use outside a build script.
    pub fn target(&mut self, target: &str) -> &mut Self {
        self.target = Some(target.to_string());
        self
    }

    /// The host triple (default `$HOST`), for use outside a build script.
    pub fn host(&mut self, host: &str) -> &mut Self {
        self.host = Some(host.to_string());
        self
    }

    /// The optimisation level of host kernels (default `2`, whatever the profile: they stand in
    /// for the device); in NPU mode, passed to CMake as `OPT_LEVEL`.
    pub fn opt_level(&mut self, level: &str) -> &mut Self {
        self.opt_level = Some(level.to_string());
        self
    }

    /// Whether host mode compiles the kernel sources with the compiler's warnings
    /// (`-Wall -Wextra`, printed as cargo warnings and kept in [`Output::compiler_warnings`]);
    /// on by default. The AscendC host layer's own headers never warn: it is a system include
    /// directory, searched first, and the directories of [`Build::include`] follow it as system
    /// directories too (their headers do not warn; those next to a source do). Off gives `-w`.
    pub fn warnings(&mut self, on: bool) -> &mut Self {
        self.no_warnings = !on;
        self
    }

    /// Whether host kernels are built for the CPU of the build machine (`-march=native`;
    /// `-mcpu=native` on Arm), ahead of `$ASCENDC_HOST_NATIVE` ([`ENV_NATIVE`]); off by default,
    /// since such a binary may not run on another machine. Ignored, with a note in
    /// [`Output::compiler_warnings`], when cross-compiling or when the compiler lacks the flag.
    pub fn native_cpu(&mut self, on: bool) -> &mut Self {
        self.native = Some(on);
        self
    }

    /// Whether a native CPU build was asked for ([`Build::native_cpu`], else [`ENV_NATIVE`]).
    fn native_requested(&self) -> bool {
        self.native
            .unwrap_or_else(|| native_from_env(std::env::var(ENV_NATIVE).ok().as_deref()))
    }

    /// Builds the library `name` and writes its launchers; on failure prints the reason and
    /// exits the build script with status 1 (use [`Build::try_compile`] to handle it).
    pub fn compile(&self, name: &str) -> Output {
        match self.try_compile(name) {
            Ok(out) => out,
            Err(e) => {
                eprintln!(
                    "\nerror: ascendc-build could not build the kernels library `{name}`\n{e}"
                );
                std::process::exit(1);
            }
        }
    }

    fn metadata(&self, line: &str) {
        if !self.no_metadata {
            println!("cargo:{line}");
        }
    }

    /// Builds the library `name` and writes its launchers.
    pub fn try_compile(&self, name: &str) -> Result<Output, Error> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(Error::new(format!(
                "`{name}` is not a usable library name: use letters, digits, `_` and `-`"
            )));
        }
        if self.files.is_empty() {
            return Err(Error::new("no kernel source: call Build::file first"));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    Error::new("OUT_DIR is not set: run from a build script or call Build::out_dir")
                })?,
        };
        let crate_name = self
            .crate_name
            .clone()
            .or_else(|| std::env::var("CARGO_PKG_NAME").ok())
            .unwrap_or_else(|| "crate".to_string());
        let prefix = codegen::symbol_prefix(&crate_name, name);
        let gen_dir = out_dir.join(GEN_DIR);
        let lib_dir = gen_dir.join(name);
        std::fs::create_dir_all(&lib_dir)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", lib_dir.display())))?;

        for var in [
            ENV_MODE,
            ENV_NATIVE,
            "SOC_VERSION",
            "CMAKE",
            "CXX",
            "CXXFLAGS",
        ] {
            self.metadata(&format!("rerun-if-env-changed={var}"));
        }
        for var in ascendcl_sdk::ENV_VARS {
            self.metadata(&format!("rerun-if-env-changed={var}"));
        }
        for dir in &self.includes {
            self.metadata(&format!("rerun-if-changed={}", dir.display()));
        }
        self.metadata(&format!("rerun-if-changed={}", include_dir().display()));

        // Read and scan every source.
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut sources = Vec::new();
        for file in &self.files {
            let path = cwd.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Error::new(format!(
                    "cannot read the kernel source {} ({e}); relative paths are relative to the \
                     package root",
                    path.display()
                ))
            })?;
            self.metadata(&format!("rerun-if-changed={}", path.display()));
            // Headers next to the source (included with "...") are not followed one by one.
            if let Some(dir) = path.parent() {
                self.metadata(&format!("rerun-if-changed={}", dir.display()));
            }
            let scan = parse::scan(&text);
            sources.push(host::Source {
                shown: file.clone(),
                path,
                text,
                scan,
            });
        }
        let mut notes = Vec::new();
        for s in &sources {
            for n in &s.scan.notes {
                let note = format!("{}: {n}", s.shown.display());
                self.metadata(&format!("warning=ascendc-build: {note}"));
                notes.push(note);
            }
        }
        let mut seen = std::collections::HashMap::new();
        for s in &sources {
            for k in &s.scan.kernels {
                if let Some(other) = seen.insert(k.name.clone(), s.shown.clone()) {
                    return Err(Error::new(format!(
                        "kernel `{}` is defined in both {} and {}: kernel names must be unique \
                         within a library",
                        k.name,
                        other.display(),
                        s.shown.display()
                    )));
                }
            }
        }

        let mode = self.choose_mode()?;
        let mut npu_info = None;
        let mut report = host::Report::default();
        let binary = match &mode {
            Chosen::Host => {
                let (binary, r) = host::build(self, &prefix, &lib_dir, &sources)?;
                report = r;
                Some(binary)
            }
            Chosen::Npu(tc, soc) => {
                let cmake = npu::build(self, &prefix, &lib_dir, &sources, tc, soc)?;
                npu_info = Some((soc.clone(), tc.root.clone(), tc.cmake_dir.clone(), cmake));
                None
            }
        };
        let mode = match mode {
            Chosen::Host => Mode::Host,
            Chosen::Npu(..) => Mode::Npu,
        };

        let located: Vec<codegen::Located<'_>> = sources
            .iter()
            .flat_map(|s| {
                s.scan.kernels.iter().map(|kernel| codegen::Located {
                    kernel,
                    file: &s.shown,
                })
            })
            .collect();
        let rt_file = format!("{GEN_DIR}/rt.rs");
        write(&out_dir.join(&rt_file), RT_SOURCE)?;
        let binary_rel = binary
            .as_ref()
            .map(|_| format!("{GEN_DIR}/{name}/{}", host::binary_name(&prefix)));
        let rust = codegen::rust_module(
            name,
            &prefix,
            mode,
            &located,
            &rt_file,
            binary_rel.as_deref(),
        );
        let rust_file = gen_dir.join(format!("{name}.rs"));
        write(&rust_file, &rust)?;
        let kernels = located
            .iter()
            .map(|l| KernelInfo {
                name: l.kernel.name.clone(),
                file: l.file.to_path_buf(),
                line: l.kernel.line,
                typed_launcher: l
                    .kernel
                    .params
                    .iter()
                    .all(|p| p.kind != parse::ParamKind::Other),
            })
            .collect();
        let (soc, cann_root, ascendc_cmake_dir, cmake) = match npu_info {
            Some((soc, root, dir, cmake)) => (Some(soc), Some(root), Some(dir), Some(cmake)),
            None => (None, None, None, None),
        };
        Ok(Output {
            mode,
            rust_file,
            binary,
            kernels,
            soc_version: soc.as_ref().map(|s| s.version.clone()),
            soc_origin: soc.map(|s| s.origin),
            cann_root,
            ascendc_cmake_dir,
            cmake,
            notes,
            compiler_warnings: report.warnings,
            compile_commands: report.commands,
        })
    }

    fn choose_mode(&self) -> Result<Chosen, Error> {
        let request = match self.mode {
            Some(Mode::Host) => detect::Request::Host,
            Some(Mode::Npu) => detect::Request::Npu,
            None => detect::parse_request(std::env::var(ENV_MODE).ok().as_deref())
                .map_err(Error::new)?,
        };
        let toolchain = match request {
            detect::Request::Host => return Ok(Chosen::Host),
            detect::Request::Auto => match detect::find_toolchain() {
                Ok(tc) => tc,
                Err(_) => return Ok(Chosen::Host),
            },
            detect::Request::Npu => detect::find_toolchain()
                .map_err(|why| Error::new(format!("NPU mode was asked for, but {why}")))?,
        };
        let inputs =
            detect::SocInputs::from_process(self.soc.clone(), Some(toolchain.root.clone()));
        let soc = detect::detect_soc(&inputs).map_err(|e| {
            Error::new(format!(
                "CANN at {} has ascendc.cmake ({}), so the kernels are built for the NPU, but {e}\n\
                 To build host kernels for the emulator instead, set {ENV_MODE}=host.",
                toolchain.root.display(),
                toolchain.cmake_dir.display()
            ))
        })?;
        Ok(Chosen::Npu(toolchain, soc))
    }

    fn env_or(&self, explicit: &Option<String>, var: &str) -> Option<String> {
        explicit
            .clone()
            .or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
    }

    fn cmake_env() -> (Option<OsString>, Option<OsString>) {
        (std::env::var_os("CMAKE"), std::env::var_os("PATH"))
    }
}

/// `$ASCENDC_HOST_NATIVE`: `1`, `true`, `on`, `yes` ask for a native CPU build.
fn native_from_env(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "on" | "yes"
        )
    })
}

enum Chosen {
    Host,
    Npu(detect::Toolchain, detect::Soc),
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
    }
    // Leave an unchanged file alone, so that its timestamp does not trigger rebuilds.
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
}

/// Includes the launchers generated for the kernels library `name` by [`Build::compile`]:
/// `include!(concat!(env!("OUT_DIR"), "/ascendc-build/", name, ".rs"))`. Put it in a module of
/// its own (one per library).
#[macro_export]
macro_rules! include_kernels {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/ascendc-build/", $name, ".rs"));
    };
}

#[cfg(test)]
mod tests {
    use super::native_from_env;

    #[test]
    fn native_cpu_env_values() {
        for on in ["1", "true", "ON", " yes "] {
            assert!(native_from_env(Some(on)), "{on}");
        }
        for off in ["0", "", "false", "native", "off"] {
            assert!(!native_from_env(Some(off)), "{off}");
        }
        assert!(!native_from_env(None));
    }
}
