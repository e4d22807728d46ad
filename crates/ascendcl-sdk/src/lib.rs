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
//!
//! HCCL's library, `libhccl.so`, is found the same way and in the same roots and directories, with
//! `HCCL_LIB` in place of `ASCENDCL_LIB` ([`SearchEnv::hccl_candidates`],
//! [`SearchEnv::find_hccl`]).
#![deny(missing_docs, unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable naming the runtime library file to load, ahead of every install root.
pub const ENV_LIB: &str = "ASCENDCL_LIB";

/// Environment variable naming HCCL's library file (`libhccl.so`) to load, ahead of every root.
pub const ENV_HCCL_LIB: &str = "HCCL_LIB";

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

/// HCCL's library file name.
pub const HCCL_LIBRARY_NAMES: [&str; 1] = ["libhccl.so"];

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
    /// Value of `HCCL_LIB`.
    pub hccl_lib: Option<PathBuf>,
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
            hccl_lib: var(ENV_HCCL_LIB),
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

    /// Every place the run-time loader should try for the AscendCL runtime library, in order.
    pub fn library_candidates(&self) -> Vec<Candidate> {
        self.candidates(&self.acl())
    }

    /// Every place the run-time loader should try for HCCL's library, in order: `HCCL_LIB`, then
    /// `libhccl.so` in each root's library directories, then the bare name.
    pub fn hccl_candidates(&self) -> Vec<Candidate> {
        self.candidates(&self.hccl())
    }

    /// Finds the first usable install root: one with `acl/acl.h` under an include directory and a
    /// runtime library under a library directory. Build scripts use this; the loader uses
    /// [`SearchEnv::library_candidates`].
    pub fn find_install(&self) -> Result<Install, NotFound> {
        self.find(&self.acl())
    }

    /// Finds the first root holding `libhccl.so` under a library directory (or the file named by
    /// `HCCL_LIB`); the include directory is the one holding `hccl/hccl.h`, when there is one.
    pub fn find_hccl(&self) -> Result<Install, NotFound> {
        self.find(&self.hccl())
    }

    fn acl(&self) -> Library<'_> {
        Library {
            env_var: ENV_LIB,
            explicit: self.lib.as_ref(),
            names: &LIBRARY_NAMES,
            header: "acl/acl.h",
        }
    }

    fn hccl(&self) -> Library<'_> {
        Library {
            env_var: ENV_HCCL_LIB,
            explicit: self.hccl_lib.as_ref(),
            names: &HCCL_LIBRARY_NAMES,
            header: "hccl/hccl.h",
        }
    }

    fn candidates(&self, library: &Library<'_>) -> Vec<Candidate> {
        let mut out = Vec::new();
        if let Some(lib) = library.explicit {
            out.push(Candidate {
                origin: format!("${}", library.env_var),
                path: lib.clone(),
                bare: false,
            });
        }
        for root in self.roots() {
            for dir in self.lib_dirs(&root.path) {
                for name in library.names {
                    out.push(Candidate {
                        origin: root.origin.clone(),
                        path: dir.join(name),
                        bare: false,
                    });
                }
            }
        }
        for name in library.names {
            out.push(Candidate {
                origin: "dynamic loader search path".to_string(),
                path: PathBuf::from(name),
                bare: true,
            });
        }
        out
    }

    fn find(&self, library: &Library<'_>) -> Result<Install, NotFound> {
        let mut tried = Vec::new();
        let include_dir = |root: &Path| {
            self.include_dirs(root)
                .into_iter()
                .find(|d| d.join(library.header).is_file())
        };
        if let Some(lib) = library.explicit {
            if lib.is_file() {
                // The root of an explicit library is the directory above its `lib64`.
                let lib_dir = lib.parent().map(Path::to_path_buf).unwrap_or_default();
                let root = lib_dir.parent().map(Path::to_path_buf).unwrap_or_default();
                return Ok(Install {
                    version: read_version(&root),
                    include_dir: include_dir(&root),
                    root,
                    lib_dir,
                    library: lib.clone(),
                    origin: format!("${}", library.env_var),
                });
            }
            tried.push(Tried {
                path: lib.clone(),
                why: format!("${} names a file that does not exist", library.env_var),
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
            let found = self
                .lib_dirs(&root.path)
                .into_iter()
                .flat_map(|d| library.names.iter().map(move |n| d.join(n)))
                .find(|p| p.is_file());
            let Some(found) = found else {
                tried.push(Tried {
                    path: root.path.clone(),
                    why: format!(
                        "{}: none of {} under lib64, {}-linux/lib64 or runtime/lib64",
                        root.origin,
                        library.names.join(", "),
                        self.arch
                    ),
                });
                continue;
            };
            return Ok(Install {
                version: read_version(&root.path),
                lib_dir: found.parent().map(Path::to_path_buf).unwrap_or_default(),
                include_dir: include_dir(&root.path),
                root: root.path,
                library: found,
                origin: root.origin,
            });
        }
        Err(NotFound { tried })
    }
}

/// What differs between the libraries discovery looks for.
struct Library<'a> {
    /// The variable naming the file explicitly.
    env_var: &'static str,
    /// Its value.
    explicit: Option<&'a PathBuf>,
    /// File names, in the order they are tried.
    names: &'static [&'static str],
    /// The header that marks an include directory, relative to it.
    header: &'static str,
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
    /// The include directory that holds `acl/acl.h` (for HCCL: `hccl/hccl.h`), when present.
    pub include_dir: Option<PathBuf>,
    /// The directory that holds the library.
    pub lib_dir: PathBuf,
    /// The library file: the runtime's, or `libhccl.so` for [`SearchEnv::find_hccl`].
    pub library: PathBuf,
    /// The CANN version, read from the install's version files, when present.
    pub version: Option<String>,
    /// Where the root came from.
    pub origin: String,
}

impl Install {
    /// The `cargo:` lines a `-sys` build script prints for this install: `root`, `lib_dir`,
    /// `library`, `include` and `version` (seen by dependents as `DEP_<LINKS>_*`), and with `link`
    /// the search path and `dylib` name that link the library at build time.
    pub fn cargo_metadata(&self, link: bool) -> Vec<String> {
        let mut lines = vec![
            format!("cargo:root={}", self.root.display()),
            format!("cargo:lib_dir={}", self.lib_dir.display()),
            format!("cargo:library={}", self.library.display()),
        ];
        if let Some(include) = &self.include_dir {
            lines.push(format!("cargo:include={}", include.display()));
        }
        if let Some(version) = &self.version {
            lines.push(format!("cargo:version={version}"));
        }
        if link {
            lines.push(format!(
                "cargo:rustc-link-search=native={}",
                self.lib_dir.display()
            ));
            lines.push(format!("cargo:rustc-link-lib=dylib={}", self.link_name()));
        }
        lines
    }

    /// The name to link the library by: its file name without `lib` and `.so`.
    pub fn link_name(&self) -> String {
        let stem = self
            .library
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        stem.strip_prefix("lib").unwrap_or(stem).to_string()
    }

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
