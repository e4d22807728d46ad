//! The process's HCCL backend: which implementation fills [`HcclApi`], chosen once.

use crate::HcclApi;
use ascendcl_sys::{BackendKind, LoadFailure};
use std::path::{Path, PathBuf};

/// A filled HCCL function table and what is known about where it came from.
#[derive(Debug)]
pub struct Backend {
    /// The kind of implementation.
    pub kind: BackendKind,
    /// The function table.
    pub api: HcclApi,
    /// The library file the table was loaded from, for loaded backends.
    pub library: Option<PathBuf>,
    /// The functions the implementation lacks (their slots hold stubs).
    pub missing: Vec<&'static str>,
    /// A one-line description for banners and logs.
    pub description: String,
}

impl Backend {
    /// An in-process backend built from a table (the emulator's, or any other implementation
    /// that starts from [`HcclApi::unresolved`] and fills what it implements).
    pub fn in_process(kind: BackendKind, api: HcclApi, description: impl Into<String>) -> Self {
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
            HcclApi::linked(),
            "HCCL linked at build time",
        )
    }
}

/// Why no HCCL library could be loaded.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate loaded.
    #[error("no HCCL library (libhccl.so) could be loaded; tried:{}", list(.tried))]
    NotFound {
        /// Every path tried, in order, with the dynamic loader's reason.
        tried: Vec<LoadFailure>,
    },
}

fn list(tried: &[LoadFailure]) -> String {
    tried
        .iter()
        .map(|t| format!("\n  {} ({}): {}", t.path.display(), t.origin, t.why))
        .collect()
}

ascendcl_sys::backend_slot! {
    backend: Backend,
    api: HcclApi,
    what: "HCCL ",
    panics: "When no backend was installed: call [`install`] first, or use [`try_api`].",
    no_backend: "hccl-sys: no backend installed; call hccl_sys::install first",
}

/// Loads the HCCL library at `path` and resolves every function it has. A library that exports
/// none of them is refused.
pub fn load_library(path: impl Into<PathBuf>) -> Result<Backend, LoadFailure> {
    let path = path.into();
    open(&path, "explicit path")
}

fn open(path: &Path, origin: &str) -> Result<Backend, LoadFailure> {
    // SAFETY: loading a shared library runs its initialisers. The candidates are HCCL libraries
    // named by the user or found in a CANN install, whose initialisers are sound to run.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| LoadFailure::from_open_error(path, origin, &e))?;
    // SAFETY: the library is HCCL's (see above); it is leaked just below, so it stays loaded for
    // as long as the table may be used.
    let (api, missing) = unsafe { HcclApi::from_library(&lib) };
    if missing.len() == HcclApi::NAMES.len() {
        return Err(LoadFailure {
            path: path.to_path_buf(),
            origin: origin.to_string(),
            why: "exports none of the HCCL functions".to_string(),
            present: true,
        });
    }
    std::mem::forget(lib);
    Ok(Backend {
        kind: BackendKind::Cann,
        api,
        library: Some(path.to_path_buf()),
        description: format!(
            "HCCL {} ({} of {} functions resolved)",
            path.display(),
            HcclApi::NAMES.len() - missing.len(),
            HcclApi::NAMES.len()
        ),
        missing,
    })
}

/// Finds and loads `libhccl.so` as described in `ascendcl_sdk`: `HCCL_LIB`, the install roots and
/// their library directories, then the dynamic loader's search path. The error lists every path
/// tried, each with the loader's reason.
pub fn load_cann() -> Result<Backend, LoadError> {
    load_cann_from(&ascendcl_sdk::SearchEnv::from_process())
}

/// [`load_cann`] with an explicit search environment.
pub fn load_cann_from(env: &ascendcl_sdk::SearchEnv) -> Result<Backend, LoadError> {
    let mut tried = Vec::new();
    for candidate in env.hccl_candidates() {
        if !candidate.worth_trying() {
            tried.push(LoadFailure {
                path: candidate.path,
                origin: candidate.origin,
                why: "no such file".to_string(),
                present: false,
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
