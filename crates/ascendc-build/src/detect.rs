//! What an NPU build needs to find: the CANN install with `ascendc.cmake`, the SoC to compile
//! for, and cmake. Every failure lists what was tried and says what to set or install.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable that forces the mode: `host`, `npu` or `auto` (the default).
pub const ENV_MODE: &str = "ASCENDC_BUILD_MODE";

/// What the mode request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// NPU when a CANN install with `ascendc.cmake` is found, host otherwise.
    Auto,
    /// Always host.
    Host,
    /// NPU, or an error.
    Npu,
}

/// Parses the value of [`ENV_MODE`].
pub fn parse_request(value: Option<&str>) -> Result<Request, String> {
    match value.map(str::trim) {
        None | Some("") | Some("auto") => Ok(Request::Auto),
        Some("host") => Ok(Request::Host),
        Some("npu") => Ok(Request::Npu),
        Some(other) => Err(format!(
            "{ENV_MODE}={other:?} is not a mode: use `auto`, `host` or `npu`"
        )),
    }
}

/// Finds cmake for the NPU build: `$CMAKE`, else `cmake` on `PATH`.
pub fn find_cmake(cmake_env: Option<OsString>, path: Option<OsString>) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    match cmake_env.filter(|v| !v.is_empty()) {
        Some(cmake) => {
            let cmake = PathBuf::from(cmake);
            if cmake.is_file() {
                return Ok(cmake);
            }
            tried.push(format!("$CMAKE = {} (no such file)", cmake.display()));
        }
        None => tried.push("$CMAKE (not set)".to_string()),
    }
    if let Some(found) = path.and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("cmake"))
            .find(|p| p.is_file())
    }) {
        return Ok(found);
    }
    tried.push("cmake on PATH (none)".to_string());
    Err(format!(
        "NPU kernels are built with CANN's ascendc.cmake, which needs cmake 3.16 or later, and none \
         was found (tried {}).\nInstall cmake (your package manager, or `pip install cmake`), or set \
         CMAKE to the cmake binary. To build host kernels for the emulator instead, set {ENV_MODE}=host.",
        tried.join(", ")
    ))
}

/// The SoC to compile for, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Soc {
    /// E.g. `Ascend910B2`.
    pub version: String,
    /// Where it was found.
    pub origin: String,
}

/// Inputs of [`detect_soc`], so that tests can supply their own.
#[derive(Debug, Clone, Default)]
pub struct SocInputs {
    /// Set through the build API.
    pub explicit: Option<String>,
    /// `$SOC_VERSION`.
    pub env: Option<String>,
    /// Output of `npu-smi info`, when the tool ran.
    pub npu_smi: Option<String>,
    /// The CANN install root.
    pub install_root: Option<PathBuf>,
    /// The `<arch>` of `<arch>-linux` directories.
    pub arch: String,
}

impl SocInputs {
    /// Reads `$SOC_VERSION` and runs `npu-smi info` when the tool exists.
    pub fn from_process(explicit: Option<String>, install_root: Option<PathBuf>) -> Self {
        let npu_smi = Command::new("npu-smi")
            .arg("info")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        SocInputs {
            explicit,
            env: std::env::var("SOC_VERSION")
                .ok()
                .filter(|v| !v.trim().is_empty()),
            npu_smi,
            install_root,
            arch: ascendcl_sdk::arch().to_string(),
        }
    }
}

/// The chip of the first NPU row of `npu-smi info` (`910B2` in the `Name` column) as a SoC
/// version (`Ascend910B2`).
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

/// Finds the SoC (a build has no device to ask): the build API's value, `$SOC_VERSION`, the
/// chip `npu-smi info` reports, or the only `Ascend*.ini` of the install's
/// `<arch>-linux/data/platform_config`. Otherwise an error listing each place.
pub fn detect_soc(inputs: &SocInputs) -> Result<Soc, String> {
    if let Some(v) = &inputs.explicit {
        return Ok(Soc {
            version: v.trim().to_string(),
            origin: "Build::soc_version".into(),
        });
    }
    let mut tried = vec!["Build::soc_version: not called".to_string()];
    if let Some(v) = &inputs.env {
        return Ok(Soc {
            version: v.trim().to_string(),
            origin: "$SOC_VERSION".into(),
        });
    }
    tried.push("$SOC_VERSION: not set".into());
    match inputs.npu_smi.as_deref().map(soc_from_npu_smi) {
        Some(Some(version)) => {
            return Ok(Soc {
                version,
                origin: "npu-smi info".into(),
            });
        }
        Some(None) => tried.push("npu-smi info: no chip name in its output".into()),
        None => tried.push("npu-smi info: not available".into()),
    }
    if let Some(root) = &inputs.install_root {
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
    Err(format!(
        "the SoC to compile the kernels for is unknown; tried:\n  {}\nSet SOC_VERSION to the chip \
         (for example SOC_VERSION=Ascend910B2; `npu-smi info` shows its name), or call \
         Build::soc_version.",
        tried.join("\n  ")
    ))
}

/// A CANN install able to build NPU kernels.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The install root.
    pub root: PathBuf,
    /// The directory of `ascendc.cmake`.
    pub cmake_dir: PathBuf,
    /// The runtime library's directory.
    pub lib_dir: PathBuf,
    /// The runtime library.
    pub library: PathBuf,
}

/// Finds a CANN install with `ascendc.cmake`, or says why there is none.
pub fn find_toolchain() -> Result<Toolchain, String> {
    let install = ascendcl_sdk::SearchEnv::from_process()
        .find_install()
        .map_err(|e| {
            format!(
                "{e}\nSet ASCEND_HOME_PATH to the CANN install (or source its set_env.sh, e.g. \
                 `source /usr/local/Ascend/ascend-toolkit/set_env.sh`)."
            )
        })?;
    let cmake_dir = ascendcl_sdk::ascendc_cmake_dir(
        &install.root,
        std::env::var_os("ASCENDC_CMAKE_DIR").map(PathBuf::from),
    )
    .map_err(|e| {
        format!(
            "the CANN install at {} has no ascendc.cmake ({}); install the CANN toolkit with \
             AscendC support or set ASCENDC_CMAKE_DIR to the directory holding ascendc.cmake",
            install.root.display(),
            e.to_string().replace("no CANN install found; ", "")
        )
    })?;
    Ok(Toolchain {
        root: install.root,
        cmake_dir,
        lib_dir: install.lib_dir,
        library: install.library,
    })
}

/// `libfoo.a` / `libfoo.so.1` → `foo`.
pub fn lib_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_prefix("lib").unwrap_or(file);
    let stem = stem.split(".so").next()?;
    Some(stem.strip_suffix(".a").unwrap_or(stem).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_requests() {
        assert_eq!(parse_request(None), Ok(Request::Auto));
        assert_eq!(parse_request(Some(" host ")), Ok(Request::Host));
        assert_eq!(parse_request(Some("npu")), Ok(Request::Npu));
        let e = parse_request(Some("gpu")).unwrap_err();
        assert!(e.contains("ASCENDC_BUILD_MODE=\"gpu\""), "{e}");
    }

    #[test]
    fn cmake_search_order_and_advice() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("cmake");
        std::fs::write(&bin, "").unwrap();
        assert_eq!(
            find_cmake(Some(bin.clone().into()), None).unwrap(),
            bin.clone()
        );
        assert_eq!(
            find_cmake(None, Some(dir.path().as_os_str().to_owned())).unwrap(),
            bin
        );
        let e = find_cmake(Some("/nonexistent/cmake".into()), Some("".into())).unwrap_err();
        assert!(
            e.contains("$CMAKE = /nonexistent/cmake (no such file)"),
            "{e}"
        );
        assert!(e.contains("Install cmake"), "{e}");
        assert!(e.contains("ASCENDC_BUILD_MODE=host"), "{e}");
        assert!(!e.contains("xtask"), "{e}");
    }

    #[test]
    fn soc_detection_order() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("x86_64-linux/data/platform_config");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(cfg.join("Ascend310P3.ini"), "").unwrap();
        let smi = "+---+\n| NPU   Name      | Health |\n| 0     910B2     | OK     |\n";
        let mut inputs = SocInputs {
            explicit: Some("Ascend910B3".into()),
            env: Some("Ascend910B4".into()),
            npu_smi: Some(smi.into()),
            install_root: Some(dir.path().to_path_buf()),
            arch: "x86_64".into(),
        };
        assert_eq!(detect_soc(&inputs).unwrap().version, "Ascend910B3");
        inputs.explicit = None;
        assert_eq!(detect_soc(&inputs).unwrap().origin, "$SOC_VERSION");
        inputs.env = None;
        assert_eq!(detect_soc(&inputs).unwrap().version, "Ascend910B2");
        inputs.npu_smi = None;
        assert_eq!(detect_soc(&inputs).unwrap().version, "Ascend310P3");
        std::fs::write(cfg.join("Ascend910B1.ini"), "").unwrap();
        let e = detect_soc(&inputs).unwrap_err();
        assert!(e.contains("2 SoCs (Ascend310P3, Ascend910B1)"), "{e}");
        assert!(e.contains("Set SOC_VERSION"), "{e}");
    }

    #[test]
    fn library_names() {
        assert_eq!(
            lib_name(Path::new("/x/libacl_rt.so")).as_deref(),
            Some("acl_rt")
        );
        assert_eq!(lib_name(Path::new("libk.a")).as_deref(), Some("k"));
    }
}
