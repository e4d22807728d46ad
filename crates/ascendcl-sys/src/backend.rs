//! The process's backend: which implementation fills the function table, chosen once, and why.
//!
//! The rules ([`Choice`]): nothing named (`ASCENDCL_BACKEND` unset) picks CANN when an install
//! is found and the host emulator when none is; a CANN install that is found but cannot be
//! loaded is an error ([`LoadError::Unusable`]), never a silent switch to the emulator. Every
//! backend records the reason it was chosen ([`Backend::reason`]).

use crate::AclApi;
use std::fmt;
use std::path::PathBuf;

/// Environment variable that chooses the backend: `cann`, `emulator` or `auto`.
pub const ENV_BACKEND: &str = "ASCENDCL_BACKEND";

/// What kind of implementation a backend is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackendKind {
    /// The CANN runtime library, loaded at run time.
    Cann,
    /// The CANN runtime library, linked at build time (feature `link`).
    Linked,
    /// The host emulator, in process.
    Emulator,
    /// Any other in-process implementation.
    Custom,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cann => "CANN",
            BackendKind::Linked => "CANN (linked)",
            BackendKind::Emulator => "emulator",
            BackendKind::Custom => "custom",
        })
    }
}

/// A filled function table and what is known about where it came from.
#[derive(Debug)]
pub struct Backend {
    /// The kind of implementation.
    pub kind: BackendKind,
    /// The function table.
    pub api: AclApi,
    /// The library file the table was loaded from, for loaded backends.
    pub library: Option<PathBuf>,
    /// The functions the implementation lacks (their slots hold stubs).
    pub missing: Vec<&'static str>,
    /// A one-line description for banners and logs.
    pub description: String,
    /// Why this backend was chosen (set when a [`Choice`] installs it; empty otherwise), e.g.
    /// `no backend was named and no CANN install was found (22 places tried)`.
    pub reason: String,
}

impl Backend {
    /// An in-process backend built from a table.
    pub fn in_process(kind: BackendKind, api: AclApi, description: impl Into<String>) -> Self {
        Backend {
            kind,
            api,
            library: None,
            missing: Vec::new(),
            description: description.into(),
            reason: String::new(),
        }
    }

    /// The library linked at build time (feature `link`).
    #[cfg(feature = "link")]
    pub fn linked() -> Self {
        Backend::in_process(
            BackendKind::Linked,
            AclApi::linked(),
            "CANN runtime linked at build time",
        )
    }
}

/// The backend a program asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Choice {
    /// The real CANN runtime; an error when it cannot be loaded, ending with what to try.
    Cann,
    /// The host emulator.
    Emulator,
    /// CANN when found; otherwise an error that explains how to choose the emulator.
    Auto,
    /// What happens when nothing is chosen: CANN when found, the emulator (when available)
    /// when nothing of CANN is there; a CANN install that is there but does not load is an
    /// error ([`LoadError::Unusable`]).
    Default,
}

impl Choice {
    /// Reads `ASCENDCL_BACKEND`: `cann`, `emulator` (or `emu`), `auto`; unset or empty gives
    /// [`Choice::Default`].
    pub fn from_env() -> Result<Choice, LoadError> {
        match std::env::var(ENV_BACKEND) {
            Err(_) => Ok(Choice::Default),
            Ok(v) => v.parse(),
        }
    }
}

impl std::str::FromStr for Choice {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" => Ok(Choice::Default),
            "cann" | "npu" => Ok(Choice::Cann),
            "emulator" | "emu" => Ok(Choice::Emulator),
            "auto" => Ok(Choice::Auto),
            other => Err(LoadError::BadChoice(other.to_string())),
        }
    }
}

/// One library path (or install root) the loader tried, and why it could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    /// The path (or bare name) tried.
    pub path: PathBuf,
    /// Where it came from (`$ASCENDCL_LIB`, `$ASCEND_HOME_PATH`, ...).
    pub origin: String,
    /// Why it failed: for a library that could not be opened, the dynamic loader's own reason.
    pub why: String,
    /// Whether something of CANN is there: the file exists (or the loader found the bare name)
    /// but could not be used, or the install root exists without a runtime library. `false`
    /// when nothing is there at all.
    pub present: bool,
}

impl LoadFailure {
    /// A library that could not be opened, with the dynamic loader's own reason (`dlerror()`);
    /// for the other `-sys` crates' loaders.
    pub fn from_open_error(
        path: &std::path::Path,
        origin: &str,
        error: &libloading::Error,
    ) -> Self {
        LoadFailure {
            path: path.to_path_buf(),
            origin: origin.to_string(),
            why: loader_reason(error),
            present: true,
        }
    }

    fn absent(path: PathBuf, origin: String) -> Self {
        LoadFailure {
            path,
            origin,
            why: "no such file".to_string(),
            present: false,
        }
    }
}

/// What to try when no usable CANN runtime library is found.
const HINTS: &str = "to fix it, set ASCENDCL_LIB to the runtime library (libacl_rt.so or \
                     libascendcl.so), or source CANN's set_env.sh (for example \
                     /usr/local/Ascend/ascend-toolkit/set_env.sh) so that ASCEND_HOME_PATH names \
                     the install, or set ASCENDCL_BACKEND=emulator to run on the host emulator";

/// Why a backend could not be chosen or loaded.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No CANN runtime library is there at all (CANN was asked for).
    #[error("no CANN runtime library was found; {HINTS}; tried:{}", list(.tried))]
    NotFound {
        /// Every path tried, in order.
        tried: Vec<LoadFailure>,
    },
    /// A CANN install or runtime library is there but could not be loaded. This is an error
    /// whatever was asked for: the emulator is never used in place of a broken CANN.
    #[error(
        "a CANN install was found but its runtime library could not be loaded (the host emulator \
         is used only when no CANN is found, or when ASCENDCL_BACKEND=emulator names it); \
         {HINTS}; tried:{}",
        list(.tried)
    )]
    Unusable {
        /// Every path tried, in order; those with [`LoadFailure::present`] are the broken parts.
        tried: Vec<LoadFailure>,
    },
    /// `ASCENDCL_BACKEND=auto` and no CANN was found.
    #[error(
        "ASCENDCL_BACKEND=auto found no CANN runtime; install CANN (or source its set_env.sh), or set \
         ASCENDCL_BACKEND=emulator to run on the host emulator; tried:{}",
        list(.tried)
    )]
    AutoFoundNothing {
        /// Every path tried, in order.
        tried: Vec<LoadFailure>,
    },
    /// No CANN runtime library was found and the build has no emulator to fall back on (a
    /// production build: `ascendcl` with `default-features = false`).
    #[error(
        "no CANN runtime library was found, and this build does not include the host emulator \
         (the `emulator` feature of the `ascendcl` crate is off: `default-features = false`), so \
         there is no backend to run on; install CANN and source its set_env.sh (for example \
         /usr/local/Ascend/ascend-toolkit/set_env.sh) so that ASCEND_HOME_PATH names the \
         install, or set ASCENDCL_LIB to the runtime library (libacl_rt.so or libascendcl.so); \
         tried:{}",
        list(.tried)
    )]
    NoBackend {
        /// Every path tried, in order.
        tried: Vec<LoadFailure>,
    },
    /// The emulator was asked for but is not compiled in.
    #[error(
        "the emulator backend was requested but this build does not include it: the `emulator` \
         feature of the `ascendcl` crate adds it (on by default; check `default-features = false` \
         in Cargo.toml); with ascendcl-sys alone, install `ascendcl_emu::backend()`"
    )]
    EmulatorUnavailable,
    /// `ASCENDCL_BACKEND` holds an unknown value.
    #[error("ASCENDCL_BACKEND={0:?} is not one of cann, emulator, auto")]
    BadChoice(String),
    /// A different backend is already active in this process.
    #[error(
        "the {active} backend is already active in this process; {requested:?} cannot replace it"
    )]
    AlreadyChosen {
        /// The backend in use.
        active: BackendKind,
        /// What was asked for.
        requested: Choice,
    },
}

fn list(tried: &[LoadFailure]) -> String {
    tried
        .iter()
        .map(|t| format!("\n  {} ({}): {}", t.path.display(), t.origin, t.why))
        .collect()
}

/// The dynamic loader's own words for a failed `dlopen` (libloading keeps them as the source).
fn loader_reason(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(src) => src.to_string(),
        None => e.to_string(),
    }
}

/// Whether a failed `dlopen` of a bare name means the loader did not find that file at all
/// (rather than finding it and failing on it or on one of its dependencies).
fn not_on_loader_path(name: &std::path::Path, why: &str) -> bool {
    let name = name.to_string_lossy();
    why.starts_with(&format!("{name}: cannot open shared object file"))
}

crate::backend_slot! {
    backend: Backend,
    api: AclApi,
    what: "",
    panics: "When no backend was installed. The safe `ascendcl` crate installs one before any \
        call; raw users call [`install`] (or use [`try_api`]) first.",
    no_backend: "ascendcl-sys: no backend installed; call ascendcl_sys::install (or use the \
        ascendcl crate)",
}

/// Loads the runtime library at `path` and resolves every function it has.
pub fn load_library(path: impl Into<PathBuf>) -> Result<Backend, LoadFailure> {
    let path = path.into();
    open(&path, "explicit path")
}

fn open(path: &std::path::Path, origin: &str) -> Result<Backend, LoadFailure> {
    // SAFETY: loading a shared library runs its initialisers. The candidates are AscendCL runtime
    // libraries named by the user or found in a CANN install, whose initialisers are sound to run.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| LoadFailure::from_open_error(path, origin, &e))?;
    // SAFETY: the library is the AscendCL runtime (see above); it is leaked just below, so it
    // stays loaded for as long as the table may be used.
    let (mut api, missing) = unsafe { AclApi::from_library(&lib) };
    if missing.len() == AclApi::NAMES.len() {
        return Err(LoadFailure {
            path: path.to_path_buf(),
            origin: origin.to_string(),
            why: "exports none of the AscendCL runtime functions".to_string(),
            present: true,
        });
    }
    std::mem::forget(lib);
    // SAFETY: as above, for the runtime's companion libraries of the same install.
    let missing = unsafe { resolve_companions(&mut api, path, missing) };
    Ok(Backend {
        kind: BackendKind::Cann,
        api,
        library: Some(path.to_path_buf()),
        description: format!(
            "CANN runtime {} ({} of {} functions resolved)",
            path.display(),
            AclApi::NAMES.len() - missing.len(),
            AclApi::NAMES.len()
        ),
        missing,
        reason: String::new(),
    })
}

/// The runtime's companion libraries, which CANN installs next to it: profiling
/// (`acl_prof.h`), data channels (`acl_tdt.h`), queues (`acl_tdt_queue.h`) and dump
/// (`acl_dump.h`). The functions the runtime library lacks are looked up in them.
pub const COMPANIONS: [&str; 4] = [
    "libmsprofiler.so",
    "libacl_tdt_channel.so",
    "libacl_tdt_queue.so",
    "libascend_dump.so",
];

/// Resolves the functions `missing` names from the [`COMPANIONS`] found in the directory of the
/// runtime library `path`; the ones that resolve anything stay loaded. Returns what is still
/// missing.
///
/// # Safety
/// The companions of a CANN install are its own libraries, with the headers' signatures.
unsafe fn resolve_companions(
    api: &mut AclApi,
    path: &std::path::Path,
    mut missing: Vec<&'static str>,
) -> Vec<&'static str> {
    let Some(dir) = path.parent() else {
        return missing;
    };
    for name in COMPANIONS {
        let companion = dir.join(name);
        if missing.is_empty() || !companion.is_file() {
            continue;
        }
        // SAFETY: a library of the same install (the caller's guarantee); see `open`.
        let Ok(lib) = (unsafe { libloading::Library::new(&companion) }) else {
            continue;
        };
        let before = missing.len();
        // SAFETY: as above.
        missing = unsafe { api.resolve_missing(&lib, missing) };
        if missing.len() < before {
            // Its functions are in the table, which lives as long as the process.
            std::mem::forget(lib);
        }
    }
    missing
}

/// Finds and loads the CANN runtime library as described in `ascendcl_sdk`: `ASCENDCL_LIB`, the
/// install roots, then the dynamic loader's search path. The error lists every path tried, each
/// failed `dlopen` with the loader's reason: [`LoadError::NotFound`] when nothing of CANN is
/// there, [`LoadError::Unusable`] when something is but does not load.
pub fn load_cann() -> Result<Backend, LoadError> {
    load_cann_from(&ascendcl_sdk::SearchEnv::from_process())
}

/// [`load_cann`] with an explicit search environment.
pub fn load_cann_from(env: &ascendcl_sdk::SearchEnv) -> Result<Backend, LoadError> {
    let mut tried = Vec::new();
    for candidate in env.library_candidates() {
        if !candidate.worth_trying() {
            tried.push(LoadFailure::absent(candidate.path, candidate.origin));
            continue;
        }
        match open(&candidate.path, &candidate.origin) {
            Ok(mut b) => {
                b.reason = format!("found through {}", candidate.origin);
                return Ok(b);
            }
            Err(mut f) => {
                if candidate.bare && not_on_loader_path(&f.path, &f.why) {
                    f.present = false;
                }
                tried.push(f);
            }
        }
    }
    // An install root that exists but holds no runtime library is a broken install too.
    for root in env.roots() {
        if root.path.is_dir()
            && !env.lib_dirs(&root.path).iter().any(|d| {
                ascendcl_sdk::LIBRARY_NAMES
                    .iter()
                    .any(|n| d.join(n).is_file())
            })
        {
            tried.push(LoadFailure {
                path: root.path,
                origin: root.origin,
                why: format!(
                    "the install root exists but holds none of {} under lib64, {}-linux/lib64 or \
                     runtime/lib64",
                    ascendcl_sdk::LIBRARY_NAMES.join(", "),
                    env.arch
                ),
                present: true,
            });
        }
    }
    if tried.iter().any(|t| t.present) {
        Err(LoadError::Unusable { tried })
    } else {
        Err(LoadError::NotFound { tried })
    }
}

impl Choice {
    /// Resolves this choice to a backend and installs it, searching the process environment.
    /// `emulator` builds the in-process emulator when the caller has one. When a backend is
    /// already active it is returned if it satisfies the choice, else
    /// [`LoadError::AlreadyChosen`].
    pub fn install(self, emulator: Option<fn() -> Backend>) -> Result<&'static Backend, LoadError> {
        if let Some(active) = active() {
            let fits = match self {
                Choice::Cann | Choice::Auto => active.kind != BackendKind::Emulator,
                Choice::Emulator => active.kind == BackendKind::Emulator,
                Choice::Default => true,
            };
            return if fits {
                Ok(active)
            } else {
                Err(LoadError::AlreadyChosen {
                    active: active.kind,
                    requested: self,
                })
            };
        }
        let backend = self.resolve(&ascendcl_sdk::SearchEnv::from_process(), emulator)?;
        // A concurrent caller may have won the race; report whichever backend is active.
        let active = install(backend).unwrap_or_else(|a| a);
        Ok(active)
    }

    /// Resolves this choice to a backend without installing it, searching `env` for CANN. The
    /// backend's [`Backend::reason`] says why it was chosen.
    pub fn resolve(
        self,
        env: &ascendcl_sdk::SearchEnv,
        emulator: Option<fn() -> Backend>,
    ) -> Result<Backend, LoadError> {
        let with_reason = |mut b: Backend, reason: String| {
            b.reason = reason;
            b
        };
        // Without an emulator in the build, "nothing found" has no way out but CANN: the
        // hints must not point at the emulator.
        let no_emulator = |e: LoadError| match (e, emulator) {
            (LoadError::NotFound { tried } | LoadError::AutoFoundNothing { tried }, None) => {
                LoadError::NoBackend { tried }
            }
            (e, _) => e,
        };
        match self {
            Choice::Emulator => {
                let emu = emulator.ok_or(LoadError::EmulatorUnavailable)?;
                Ok(with_reason(
                    emu(),
                    "the emulator was named (ASCENDCL_BACKEND=emulator or an explicit choice)"
                        .to_string(),
                ))
            }
            Choice::Cann => {
                let b = load_cann_from(env).map_err(no_emulator)?;
                let found = b.reason.clone();
                Ok(with_reason(b, format!("CANN was named; {found}")))
            }
            Choice::Auto => match load_cann_from(env) {
                Ok(b) => {
                    let found = b.reason.clone();
                    Ok(with_reason(b, format!("ASCENDCL_BACKEND=auto; {found}")))
                }
                Err(LoadError::NotFound { tried }) => {
                    Err(no_emulator(LoadError::AutoFoundNothing { tried }))
                }
                Err(e) => Err(e),
            },
            Choice::Default => match (load_cann_from(env), emulator) {
                (Ok(b), _) => {
                    let found = b.reason.clone();
                    Ok(with_reason(
                        b,
                        format!("no backend was named and a CANN install was {found}"),
                    ))
                }
                (Err(LoadError::NotFound { tried }), Some(emu)) => Ok(with_reason(
                    emu(),
                    format!(
                        "no backend was named and no CANN install was found ({} places tried)",
                        tried.len()
                    ),
                )),
                (Err(e), _) => Err(no_emulator(e)),
            },
        }
    }
}
