//! Discovery of a CANN (AscendCL) install, shared by build scripts and the run-time loader.
//!
//! The crate is small on purpose: no `unsafe`, no dependencies, no I/O beyond `stat`-like checks and
//! reading a version file, so every build script and the loader in `ascendcl-sys` get one answer.
//!
//! The search order follows the runtime's own sample scripts:
//!
//! 1. `ASCENDCL_LIB`, a path to the library file itself;
//! 2. the install roots `$ASCEND_INSTALL_PATH`, `$ASCEND_HOME_PATH`, `$ASCEND_TOOLKIT_HOME`,
//!    `~/Ascend/cann`, `~/Ascend/ascend-toolkit/latest`, `/usr/local/Ascend/cann`,
//!    `/usr/local/Ascend/ascend-toolkit/latest`, `/opt/Ascend/cann`;
//! 3. under each root, the directories `lib64`, `<arch>-linux/lib64` and `runtime/lib64`, each tried
//!    with `libacl_rt.so` (CANN 8.5 and later) before `libascendcl.so` (older CANN);
//! 4. last, the bare library names, left to the dynamic loader's own search path.
//!
//! The link-only stubs under `devlib` are never offered: they cannot be run.
#![deny(missing_docs, unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable naming the runtime library file to load, ahead of every install root.
pub const ENV_LIB: &str = "ASCENDCL_LIB";

/// Environment variables that name install roots, in the order they are consulted.
pub const ENV_ROOTS: [&str; 3] = [
    "ASCEND_INSTALL_PATH",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
];

/// Every environment variable that changes the outcome of discovery (for `rerun-if-env-changed`).
pub const ENV_VARS: [&str; 7] = [
    ENV_LIB,
    "ASCEND_INSTALL_PATH",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCENDC_CMAKE_DIR",
    "SOC_VERSION",
    "HOME",
];

/// Library file names, in the order they are tried: the new runtime library, then the old one.
pub const LIBRARY_NAMES: [&str; 2] = ["libacl_rt.so", "libascendcl.so"];

/// Install roots under the home directory, relative to `$HOME`.
const HOME_ROOTS: [&str; 2] = ["Ascend/cann", "Ascend/ascend-toolkit/latest"];

/// System-wide install roots.
const SYSTEM_ROOTS: [&str; 3] = [
    "/usr/local/Ascend/cann",
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/opt/Ascend/cann",
];

/// The machine's architecture as CANN spells it in `<arch>-linux` directory names.
pub fn arch() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64"
    } else {
        "x86_64"
    }
}

/// A snapshot of what discovery reads from the environment, so that tests can supply their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchEnv {
    /// Value of `ASCENDCL_LIB`.
    pub lib: Option<PathBuf>,
    /// Values of [`ENV_ROOTS`], as `(variable, value)` pairs, in order.
    pub env_roots: Vec<(String, PathBuf)>,
    /// The home directory (`$HOME`), for the per-user roots.
    pub home: Option<PathBuf>,
    /// Whether to include the system-wide roots (`/usr/local/Ascend/...`, `/opt/Ascend/...`).
    pub system_roots: bool,
    /// Architecture name used in `<arch>-linux` directories.
    pub arch: String,
}

impl SearchEnv {
    /// Reads the process environment.
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        SearchEnv {
            lib: var(ENV_LIB),
            env_roots: ENV_ROOTS
                .iter()
                .filter_map(|name| var(name).map(|v| (name.to_string(), v)))
                .collect(),
            home: var("HOME"),
            system_roots: true,
            arch: arch().to_string(),
        }
    }

    /// An empty environment: no variables, no home, no system roots. Tests start from this.
    pub fn empty() -> Self {
        SearchEnv {
            arch: arch().to_string(),
            ..SearchEnv::default()
        }
    }

    /// Install roots to consider, in order, each with where it came from. Duplicates are removed.
    pub fn roots(&self) -> Vec<Root> {
        let mut roots: Vec<Root> = Vec::new();
        let mut push = |origin: String, path: PathBuf| {
            if !roots.iter().any(|r| r.path == path) {
                roots.push(Root { origin, path });
            }
        };
        for (name, path) in &self.env_roots {
            push(format!("${name}"), path.clone());
        }
        if let Some(home) = &self.home {
            for rel in HOME_ROOTS {
                push(format!("~/{rel}"), home.join(rel));
            }
        }
        if self.system_roots {
            for abs in SYSTEM_ROOTS {
                push("system".to_string(), PathBuf::from(abs));
            }
        }
        roots
    }

    /// Library directories searched under one root, in order (never `devlib`).
    pub fn lib_dirs(&self, root: &Path) -> Vec<PathBuf> {
        vec![
            root.join("lib64"),
            root.join(format!("{}-linux", self.arch)).join("lib64"),
            root.join("runtime").join("lib64"),
        ]
    }

    /// Include directories searched under one root, in order.
    pub fn include_dirs(&self, root: &Path) -> Vec<PathBuf> {
        vec![
            root.join("include"),
            root.join(format!("{}-linux", self.arch)).join("include"),
            root.join("runtime").join("include"),
        ]
    }

    /// Every place the run-time loader should try, in order.
    pub fn library_candidates(&self) -> Vec<Candidate> {
        let mut out = Vec::new();
        if let Some(lib) = &self.lib {
            out.push(Candidate {
                origin: format!("${ENV_LIB}"),
                path: lib.clone(),
                bare: false,
            });
        }
        for root in self.roots() {
            for dir in self.lib_dirs(&root.path) {
                for name in LIBRARY_NAMES {
                    out.push(Candidate {
                        origin: root.origin.clone(),
                        path: dir.join(name),
                        bare: false,
                    });
                }
            }
        }
        for name in LIBRARY_NAMES {
            out.push(Candidate {
                origin: "dynamic loader search path".to_string(),
                path: PathBuf::from(name),
                bare: true,
            });
        }
        out
    }

    /// Finds the first usable install root: one with `acl/acl.h` under an include directory and a
    /// runtime library under a library directory. Build scripts use this; the loader uses
    /// [`SearchEnv::library_candidates`].
    pub fn find_install(&self) -> Result<Install, NotFound> {
        let mut tried = Vec::new();
        if let Some(lib) = &self.lib {
            if lib.is_file() {
                // The root of an explicit library is the directory above its `lib64`.
                let lib_dir = lib.parent().map(Path::to_path_buf).unwrap_or_default();
                let root = lib_dir.parent().map(Path::to_path_buf).unwrap_or_default();
                let include_dir = self
                    .include_dirs(&root)
                    .into_iter()
                    .find(|d| d.join("acl/acl.h").is_file());
                return Ok(Install {
                    version: read_version(&root),
                    root,
                    include_dir,
                    lib_dir,
                    library: lib.clone(),
                    origin: format!("${ENV_LIB}"),
                });
            }
            tried.push(Tried {
                path: lib.clone(),
                why: format!("${ENV_LIB} names a file that does not exist"),
            });
        }
        for root in self.roots() {
            if !root.path.is_dir() {
                tried.push(Tried {
                    path: root.path.clone(),
                    why: format!("{}: no such directory", root.origin),
                });
                continue;
            }
            let library = self
                .lib_dirs(&root.path)
                .into_iter()
                .flat_map(|d| LIBRARY_NAMES.map(|n| d.join(n)))
                .find(|p| p.is_file());
            let Some(library) = library else {
                tried.push(Tried {
                    path: root.path.clone(),
                    why: format!(
                        "{}: none of {} under lib64, {}-linux/lib64 or runtime/lib64",
                        root.origin,
                        LIBRARY_NAMES.join(", "),
                        self.arch
                    ),
                });
                continue;
            };
            let include_dir = self
                .include_dirs(&root.path)
                .into_iter()
                .find(|d| d.join("acl/acl.h").is_file());
            return Ok(Install {
                version: read_version(&root.path),
                lib_dir: library.parent().map(Path::to_path_buf).unwrap_or_default(),
                root: root.path,
                include_dir,
                library,
                origin: root.origin,
            });
        }
        Err(NotFound { tried })
    }
}

/// An install root to consider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Where the root came from: `$VAR`, `~/...` or `system`.
    pub origin: String,
    /// The root directory.
    pub path: PathBuf,
}

/// One place the loader may try to open the runtime library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where the candidate came from.
    pub origin: String,
    /// The file path, or a bare file name when `bare` is true.
    pub path: PathBuf,
    /// True for a bare name left to the dynamic loader's search path.
    pub bare: bool,
}

impl Candidate {
    /// Whether the loader should try to open this candidate: bare names always, paths that exist.
    pub fn worth_trying(&self) -> bool {
        self.bare || self.path.is_file()
    }
}

/// A usable CANN install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The install root.
    pub root: PathBuf,
    /// The directory that holds `acl/acl.h`, when present.
    pub include_dir: Option<PathBuf>,
    /// The directory that holds the runtime library.
    pub lib_dir: PathBuf,
    /// The runtime library file.
    pub library: PathBuf,
    /// The CANN version, read from the install's version files, when present.
    pub version: Option<String>,
    /// Where the root came from.
    pub origin: String,
}

impl Install {
    /// The directory holding `ascendc.cmake`: `$ASCENDC_CMAKE_DIR` when set, else the install's
    /// `<arch>-linux/tikcpp/ascendc_kernel_cmake` or `tikcpp/ascendc_kernel_cmake`.
    pub fn ascendc_cmake_dir(&self) -> Result<PathBuf, NotFound> {
        ascendc_cmake_dir(
            &self.root,
            std::env::var_os("ASCENDC_CMAKE_DIR").map(PathBuf::from),
        )
    }
}

/// Finds `ascendc.cmake` for a root, preferring an explicit directory.
pub fn ascendc_cmake_dir(root: &Path, explicit: Option<PathBuf>) -> Result<PathBuf, NotFound> {
    let mut tried = Vec::new();
    let mut dirs = Vec::new();
    if let Some(dir) = explicit.filter(|d| !d.as_os_str().is_empty()) {
        dirs.push(("$ASCENDC_CMAKE_DIR".to_string(), dir));
    }
    dirs.push((
        "install".to_string(),
        root.join(format!("{}-linux", arch()))
            .join("tikcpp/ascendc_kernel_cmake"),
    ));
    dirs.push((
        "install".to_string(),
        root.join("tikcpp/ascendc_kernel_cmake"),
    ));
    for (origin, dir) in dirs {
        if dir.join("ascendc.cmake").is_file() {
            return Ok(dir);
        }
        tried.push(Tried {
            path: dir,
            why: format!("{origin}: no ascendc.cmake"),
        });
    }
    Err(NotFound { tried })
}

/// Reads the CANN version of a root from `version.cfg` or `<arch>-linux/ascend_toolkit_install.info`.
pub fn read_version(root: &Path) -> Option<String> {
    let files = [
        root.join(format!("{}-linux/ascend_toolkit_install.info", arch())),
        root.join("version.cfg"),
        root.join("version.info"),
    ];
    files.iter().find_map(|f| {
        let text = std::fs::read_to_string(f).ok()?;
        text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            let key = key.trim();
            if key == "version" || key.ends_with("_version") || key == "Version" {
                let v = value
                    .trim()
                    .trim_matches(|c| c == '[' || c == ']' || c == '"');
                let v = v.split(':').next_back().unwrap_or(v);
                (!v.is_empty()).then(|| v.to_string())
            } else {
                None
            }
        })
    })
}

/// Asks `pkg-config` for the prefix of a package (`acl_rt` or `ascendcl`), when the tool and the
/// package are both present.
pub fn pkg_config_prefix(package: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("pkg-config")
        .args(["--variable=prefix", package])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| PathBuf::from(text))
}

/// One place that was looked at, and why it was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    /// The path looked at.
    pub path: PathBuf,
    /// Why it was not used.
    pub why: String,
}

/// Nothing usable was found; lists every place tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// Every place tried, in order.
    pub tried: Vec<Tried>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no CANN install found; tried:")?;
        for t in &self.tried {
            write!(f, "\n  {}: {}", t.path.display(), t.why)?;
        }
        Ok(())
    }
}

impl std::error::Error for NotFound {}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
