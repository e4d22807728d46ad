//! The process's backend: which implementation fills the function table, chosen once.

use crate::AclApi;
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

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
    /// The real CANN runtime; an error when it cannot be loaded.
    Cann,
    /// The host emulator.
    Emulator,
    /// CANN when found; otherwise an error that explains how to choose the emulator.
    Auto,
    /// What happens when nothing is chosen: CANN when found, else the emulator when available.
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

/// One library path the loader tried, and why it did not load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    /// The path (or bare name) tried.
    pub path: PathBuf,
    /// Where it came from (`$ASCENDCL_LIB`, `$ASCEND_HOME_PATH`, ...).
    pub origin: String,
    /// Why it failed.
    pub why: String,
}

impl LoadFailure {
    /// A library that could not be opened, with the dynamic loader's own reason (`dlerror()`):
    /// libloading's message alone is "dlopen failed", and the reason is its source.
    pub fn from_open_error(
        path: &std::path::Path,
        origin: &str,
        error: &libloading::Error,
    ) -> Self {
        let mut why = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            why.push_str(": ");
            why.push_str(&cause.to_string());
            source = cause.source();
        }
        LoadFailure {
            path: path.to_path_buf(),
            origin: origin.to_string(),
            why,
        }
    }
}

/// Why a backend could not be chosen or loaded.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No CANN runtime library could be loaded.
    #[error("no CANN runtime library could be loaded; tried:{}", list(.tried))]
    NotFound {
        /// Every path tried, in order.
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
    /// The emulator was asked for but is not compiled in.
    #[error("the emulator backend was requested but is not available in this build")]
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

static ACTIVE: OnceLock<Backend> = OnceLock::new();

/// Makes `backend` the process's backend. The first call wins; later calls get the active backend
/// back as `Err` (and `backend` is dropped).
pub fn install(backend: Backend) -> Result<&'static Backend, &'static Backend> {
    let mut slot = Some(backend);
    let active = ACTIVE.get_or_init(|| slot.take().expect("taken once"));
    if slot.is_none() {
        Ok(active)
    } else {
        Err(active)
    }
}

/// The active backend, if one was installed.
pub fn active() -> Option<&'static Backend> {
    ACTIVE.get()
}

/// The active backend's function table. One atomic load; no lock, no lookup.
///
/// # Panics
/// When no backend was installed. The safe `ascendcl` crate installs one before any call; raw
/// users call [`install`] (or use [`try_api`]) first.
#[inline]
pub fn api() -> &'static AclApi {
    match ACTIVE.get() {
        Some(b) => &b.api,
        None => no_backend(),
    }
}

#[cold]
#[inline(never)]
fn no_backend() -> ! {
    panic!(
        "ascendcl-sys: no backend installed; call ascendcl_sys::install (or use the ascendcl crate)"
    )
}

/// The active backend's function table, or `None` when none was installed.
#[inline]
pub fn try_api() -> Option<&'static AclApi> {
    ACTIVE.get().map(|b| &b.api)
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
    let (api, missing) = unsafe { AclApi::from_library(&lib) };
    if missing.len() == AclApi::NAMES.len() {
        return Err(LoadFailure {
            path: path.to_path_buf(),
            origin: origin.to_string(),
            why: "exports none of the AscendCL runtime functions".to_string(),
        });
    }
    std::mem::forget(lib);
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
    })
}

/// Finds and loads the CANN runtime library as described in `ascendcl_sdk`: `ASCENDCL_LIB`, the
/// install roots, then the dynamic loader's search path. The error lists every path tried.
pub fn load_cann() -> Result<Backend, LoadError> {
    load_cann_from(&ascendcl_sdk::SearchEnv::from_process())
}

/// [`load_cann`] with an explicit search environment.
pub fn load_cann_from(env: &ascendcl_sdk::SearchEnv) -> Result<Backend, LoadError> {
    let mut tried = Vec::new();
    for candidate in env.library_candidates() {
        if !candidate.worth_trying() {
            tried.push(LoadFailure {
                path: candidate.path,
                origin: candidate.origin,
                why: "no such file".to_string(),
            });
            continue;
        }
        match open(&candidate.path, &candidate.origin) {
            Ok(b) => return Ok(b),
            Err(f) => tried.push(f),
        }
    }
    Err(LoadError::NotFound { tried })
}

impl Choice {
    /// Resolves this choice to a backend and installs it. `emulator` builds the in-process
    /// emulator when the caller has one. When a backend is already active it is returned if it
    /// satisfies the choice, else [`LoadError::AlreadyChosen`].
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
        let backend = match self {
            Choice::Emulator => emulator.ok_or(LoadError::EmulatorUnavailable)?(),
            Choice::Cann => load_cann()?,
            Choice::Auto => load_cann().map_err(|e| match e {
                LoadError::NotFound { tried } => LoadError::AutoFoundNothing { tried },
                other => other,
            })?,
            Choice::Default => match (load_cann(), emulator) {
                (Ok(b), _) => b,
                (Err(_), Some(emu)) => emu(),
                (Err(e), None) => return Err(e),
            },
        };
        // A concurrent caller may have won the race; report whichever backend is active.
        let active = install(backend).unwrap_or_else(|a| a);
        Ok(active)
    }
}
