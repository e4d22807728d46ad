//! Choosing the backend the benchmarks run against.

use ascendcl_sys::{Backend, Choice};

/// Installs the backend chosen as the safe crate chooses it — `ASCENDCL_BACKEND` (`cann`,
/// `emulator`, `auto`), else the CANN runtime when one is found, else the in-process host
/// emulator — and returns it. When a backend is already active it is returned as it is.
///
/// # Errors
/// A message when `ASCENDCL_BACKEND` is invalid or the requested backend cannot be loaded.
pub fn select() -> Result<&'static Backend, String> {
    if let Some(active) = ascendcl_sys::active() {
        return Ok(active);
    }
    let choice = Choice::from_env().map_err(|e| e.to_string())?;
    choice
        .install(Some(ascendcl_emu::backend))
        .map_err(|e| e.to_string())
}

/// A one-line description of `backend` for banners and the report: its kind and description.
pub fn describe(backend: &Backend) -> String {
    format!("{}: {}", backend.kind, backend.description)
}
