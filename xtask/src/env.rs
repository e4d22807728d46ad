//! `cargo xtask env`: reports what was detected of a CANN install.

/// Runs `cargo xtask env ...`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask env` is not built yet".to_string())
}
