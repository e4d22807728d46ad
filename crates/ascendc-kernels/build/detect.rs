//! What the kernels build needs to find (mode, cmake, SoC), and how a CMake step is run.
//!
//! One file, included with `#[path]` by the build script, by the crate's CMake tests and by
//! `cargo xtask env`, so that all three give the same answer. Only `std` is used.
#![allow(dead_code)]

use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Environment variable that forces the kernels' build mode: `host`, `npu` or `auto` (default).
pub const ENV_MODE: &str = "ASCENDC_KERNELS_MODE";

/// How many lines of CMake output a failure report keeps.
pub const TAIL_LINES: usize = 40;

/// The cmake binary under a workspace, where this repository's `cargo xtask tools` provisions it.
/// Only the crate's own tests and the xtask look there; the build script does not.
pub fn provisioned_cmake(workspace_root: &Path) -> PathBuf {
    workspace_root.join("target/tools/cmake/data/bin/cmake")
}

/// Finds the workspace root above `start`: the nearest directory whose `Cargo.toml` has a
/// `[workspace]` table.
pub fn workspace_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        text.lines()
            .any(|l| l.trim() == "[workspace]")
            .then(|| dir.to_path_buf())
    })
}

/// Finds cmake for an NPU build: `$CMAKE`, else `cmake` on `PATH` (`path` is the value of
/// `PATH`). The error says what was tried and how to provide one.
pub fn find_cmake(
    cmake_env: Option<OsString>,
    path: Option<OsString>,
) -> Result<(PathBuf, &'static str), String> {
    let tried = match cmake_env.filter(|v| !v.is_empty()) {
        Some(cmake) => {
            let cmake = PathBuf::from(cmake);
            if cmake.is_file() {
                return Ok((cmake, "$CMAKE"));
            }
            format!("$CMAKE = {} (no such file)", cmake.display())
        }
        None => "$CMAKE (not set)".to_string(),
    };
    if let Some(found) = path.and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(CMAKE_EXE))
            .find(|p| p.is_file())
    }) {
        return Ok((found, "PATH"));
    }
    Err(format!(
        "cmake was not found; tried {tried}, cmake on PATH (none).\n\
         Install cmake 3.16 or later (a package manager's `cmake`, or `pip install cmake`), \
         or set CMAKE to the cmake binary."
    ))
}

/// [`find_cmake`], else the binary `cargo xtask tools` provisions under `workspace_root`: what
/// the crate's CMake tests and `cargo xtask env` use.
pub fn find_cmake_or_provisioned(
    workspace_root: Option<&Path>,
) -> Result<(PathBuf, &'static str), String> {
    find_cmake(std::env::var_os("CMAKE"), std::env::var_os("PATH")).or_else(|e| {
        workspace_root
            .map(provisioned_cmake)
            .filter(|p| p.is_file())
            .map(|p| (p, "target/tools"))
            .ok_or(e)
    })
}

/// Environment variable that makes the crate's CMake tests fail, instead of passing with a note,
/// when no cmake is found (`cargo xtask test` sets it after provisioning cmake).
pub const ENV_REQUIRE_CMAKE: &str = "ASCENDC_KERNELS_REQUIRE_CMAKE";

/// The cmake the crate's tests run: [`find_cmake_or_provisioned`] from this crate's workspace.
/// When there is none, `None` with a note on stderr, or a panic when [`ENV_REQUIRE_CMAKE`] is
/// set.
pub fn cmake_for_tests(manifest_dir: &Path) -> Option<PathBuf> {
    match find_cmake_or_provisioned(workspace_root(manifest_dir).as_deref()) {
        Ok((cmake, _)) => Some(cmake),
        Err(e) if std::env::var_os(ENV_REQUIRE_CMAKE).is_some() => {
            panic!("{ENV_REQUIRE_CMAKE} is set, but {e}")
        }
        Err(e) => {
            eprintln!("not run: this test runs cmake, and {e}");
            None
        }
    }
}

/// The name of the cmake executable.
const CMAKE_EXE: &str = if cfg!(windows) { "cmake.exe" } else { "cmake" };

/// A CMake step that failed: the command line, how it ended, and the tail of its output.
#[derive(Debug)]
pub struct CmakeFailure {
    /// What the step was doing (`configure`, `build`).
    pub step: String,
    /// The command line, shell-quoted for copy and paste.
    pub command: String,
    /// How it ended: an exit status, or why it could not start.
    pub outcome: String,
    /// The last [`TAIL_LINES`] lines of its combined output.
    pub tail: Vec<String>,
}

impl fmt::Display for CmakeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "CMake {} failed: {}", self.step, self.outcome)?;
        writeln!(f, "command: {}", self.command)?;
        if self.tail.is_empty() {
            write!(f, "(no output)")
        } else {
            writeln!(f, "last {} lines of output:", self.tail.len())?;
            for line in &self.tail {
                writeln!(f, "  | {line}")?;
            }
            Ok(())
        }
    }
}

/// Quotes a command line for a shell, for error messages.
pub fn command_line(cmd: &Command) -> String {
    let quote = |s: &std::ffi::OsStr| {
        let s = s.to_string_lossy();
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,@%".contains(c))
        {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut parts = vec![quote(cmd.get_program())];
    parts.extend(cmd.get_args().map(quote));
    parts.join(" ")
}

/// Runs one CMake step and captures its output (stdout and stderr through one pipe, so they
/// stay in the order CMake wrote them). On success returns the output; on failure a
/// [`CmakeFailure`] with the command and the tail of the output.
pub fn run_step(step: &str, cmd: &mut Command) -> Result<String, CmakeFailure> {
    let command = command_line(cmd);
    let fail = |outcome: String, tail: Vec<String>| CmakeFailure {
        step: step.to_string(),
        command: command.clone(),
        outcome,
        tail,
    };
    let (mut reader, writer) =
        std::io::pipe().map_err(|e| fail(format!("could not create a pipe: {e}"), Vec::new()))?;
    let writer2 = writer
        .try_clone()
        .map_err(|e| fail(format!("could not create a pipe: {e}"), Vec::new()))?;
    cmd.stdin(Stdio::null()).stdout(writer).stderr(writer2);
    let child = cmd.spawn();
    // Drop the command's copies of the write end, or the read below never sees the end.
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = child.map_err(|e| fail(format!("could not start: {e}"), Vec::new()))?;
    let mut bytes = Vec::new();
    let read = reader.read_to_end(&mut bytes);
    let status = child
        .wait()
        .map_err(|e| fail(format!("could not wait for it: {e}"), Vec::new()))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Err(e) = read {
        return Err(fail(format!("reading its output failed: {e}"), Vec::new()));
    }
    if status.success() {
        return Ok(text);
    }
    let lines: Vec<String> = text
        .trim_end()
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect();
    let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec();
    Err(fail(status.to_string(), tail))
}

/// Parses the chip name out of `npu-smi info` output: the `Name` column of the first NPU row
/// (`910B2`), turned into a SoC version (`Ascend910B2`).
pub fn soc_from_npu_smi(text: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|l| l.contains("Name") && l.contains("NPU"))?;
    lines.find_map(|l| {
        let mut cells = l.trim_start_matches('|').split_whitespace();
        let npu = cells.next()?;
        let name = cells.next()?;
        (npu.chars().all(|c| c.is_ascii_digit())
            && name.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .then(|| format!("Ascend{name}"))
    })
}

/// Where SOC_VERSION came from, and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Soc {
    /// The SoC version, e.g. `Ascend910B2`.
    pub version: String,
    /// Where it was found.
    pub origin: String,
}

/// Inputs of [`detect_soc_version`], so that tests can supply their own.
#[derive(Debug, Clone, Default)]
pub struct SocInputs {
    /// Value of `SOC_VERSION`.
    pub env: Option<String>,
    /// The workspace root, for its `soc_version` file.
    pub workspace_root: Option<PathBuf>,
    /// Output of `npu-smi info`, when the tool ran.
    pub npu_smi: Option<String>,
    /// The CANN install root, for its platform configuration directory.
    pub install_root: Option<PathBuf>,
    /// Architecture name used in `<arch>-linux` directories.
    pub arch: String,
}

impl SocInputs {
    /// Reads the process environment and runs `npu-smi info` when it exists.
    pub fn from_process(workspace_root: Option<PathBuf>, install_root: Option<PathBuf>) -> Self {
        let npu_smi = Command::new("npu-smi")
            .arg("info")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        SocInputs {
            env: std::env::var("SOC_VERSION")
                .ok()
                .filter(|v| !v.trim().is_empty()),
            workspace_root,
            npu_smi,
            install_root,
            arch: if cfg!(target_arch = "aarch64") {
                "aarch64"
            } else {
                "x86_64"
            }
            .to_string(),
        }
    }
}

/// Finds the SoC to compile kernels for. `aclrtGetSocName` needs a device at run time, so the
/// build looks, in order, at: `$SOC_VERSION`; a `soc_version` file at the workspace root (first
/// non-comment line); the chip `npu-smi info` reports; and an install whose
/// `<arch>-linux/data/platform_config` holds exactly one `<SoC>.ini`. Otherwise an error that
/// lists each place and why it gave nothing.
pub fn detect_soc_version(inputs: &SocInputs) -> Result<Soc, String> {
    let mut tried = Vec::new();
    if let Some(v) = &inputs.env {
        return Ok(Soc {
            version: v.trim().to_string(),
            origin: "$SOC_VERSION".to_string(),
        });
    }
    tried.push("$SOC_VERSION: not set".to_string());
    match &inputs.workspace_root {
        Some(root) => {
            let file = root.join("soc_version");
            let value = std::fs::read_to_string(&file).ok().and_then(|t| {
                t.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
            });
            match value {
                Some(version) => {
                    return Ok(Soc {
                        version,
                        origin: file.display().to_string(),
                    });
                }
                None => tried.push(format!("{}: missing or empty", file.display())),
            }
        }
        None => tried.push("soc_version file: no workspace root".to_string()),
    }
    match inputs.npu_smi.as_deref().map(soc_from_npu_smi) {
        Some(Some(version)) => {
            return Ok(Soc {
                version,
                origin: "npu-smi info".to_string(),
            });
        }
        Some(None) => tried.push("npu-smi info: no chip name in its output".to_string()),
        None => tried.push("npu-smi info: not available".to_string()),
    }
    match &inputs.install_root {
        Some(root) => {
            let dir = root
                .join(format!("{}-linux", inputs.arch))
                .join("data/platform_config");
            let mut socs: Vec<String> = std::fs::read_dir(&dir)
                .map(|entries| {
                    entries
                        .filter_map(|e| {
                            let name = e.ok()?.file_name().into_string().ok()?;
                            name.strip_suffix(".ini").map(str::to_string)
                        })
                        .filter(|n| n.starts_with("Ascend"))
                        .collect()
                })
                .unwrap_or_default();
            socs.sort();
            if let [only] = socs.as_slice() {
                return Ok(Soc {
                    version: only.clone(),
                    origin: dir.display().to_string(),
                });
            }
            tried.push(if socs.is_empty() {
                format!("{}: no Ascend*.ini", dir.display())
            } else {
                format!(
                    "{}: {} SoCs ({}), cannot choose",
                    dir.display(),
                    socs.len(),
                    socs.join(", ")
                )
            });
        }
        None => tried.push("install platform_config: no CANN install".to_string()),
    }
    Err(format!(
        "SOC_VERSION unknown; tried:\n  {}\nSet SOC_VERSION (e.g. SOC_VERSION=Ascend910B2; `npu-smi info` shows the chip \
         name) or write it into <workspace>/soc_version.",
        tried.join("\n  ")
    ))
}

/// The build mode of the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Compiled for the host CPU by the C++ compiler, run on the emulator.
    Host,
    /// Compiled by CANN's `ascendc_library()` for an NPU.
    Npu,
}

impl Mode {
    /// The name the build script and the crate use: `host` or `npu`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Host => "host",
            Mode::Npu => "npu",
        }
    }

    /// The static library that holds the kernels in this mode (in NPU mode, the CMake target
    /// that `ascendc_library()` defines).
    pub fn library(self) -> &'static str {
        match self {
            Mode::Host => "ascendc_kernels_host",
            Mode::Npu => "ascendc_kernels_npu",
        }
    }
}

/// What the mode request (`$ASCENDC_KERNELS_MODE`) asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeRequest {
    /// NPU mode when a CANN install with `ascendc.cmake` is found, else host mode.
    Auto,
    /// Always host mode.
    Host,
    /// NPU mode or a build error.
    Npu,
}

/// Parses `$ASCENDC_KERNELS_MODE`.
pub fn parse_mode_request(value: Option<&str>) -> Result<ModeRequest, String> {
    match value.map(str::trim) {
        None | Some("") | Some("auto") => Ok(ModeRequest::Auto),
        Some("host") => Ok(ModeRequest::Host),
        Some("npu") => Ok(ModeRequest::Npu),
        Some(other) => Err(format!(
            "{ENV_MODE}={other:?}: expected `auto`, `host` or `npu`"
        )),
    }
}
