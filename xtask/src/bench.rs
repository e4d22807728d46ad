//! `cargo xtask bench` and `bench-report`: the criterion suite and docs/benchmarks.md.

/// Runs `cargo xtask bench ...`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask bench` is not built yet".to_string())
}

/// Runs `cargo xtask bench-report`.
pub fn report(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask bench-report` is not built yet".to_string())
}
