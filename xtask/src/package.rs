//! The CI checks of publishing: `cargo package` of every publishable crate, verified (each built
//! from its own tarball, without cmake or CANN), and a build with the oldest supported toolchain
//! (the workspace's `rust-version`).

use crate::tools;
use std::process::Command;

/// The workspace members marked `publish = false` (samples, benches, xtask), by package name.
fn unpublished() -> Result<Vec<String>, String> {
    let root = tools::workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    for member in members(&manifest) {
        let path = root.join(&member).join("Cargo.toml");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if text.lines().any(|l| l.replace(' ', "") == "publish=false") {
            let name = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("name = "))
                .map(|v| v.trim_matches('"').to_string())
                .ok_or_else(|| format!("{}: no package name", path.display()))?;
            names.push(name);
        }
    }
    Ok(names)
}

/// The `members = [...]` of the root manifest, one quoted path a line.
fn members(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("members"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with(']'))
        .map(|l| l.trim().trim_end_matches(',').trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// `cargo package --workspace` of the publishable crates, without cmake (`CMAKE` unset).
pub fn package() -> Result<(), String> {
    let skip = unpublished()?;
    tools::step(&format!(
        "cargo package --workspace (verified; without cmake; not the publish = false members: {})",
        skip.join(", ")
    ));
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(tools::workspace_root())
        .args(["package", "--workspace", "--allow-dirty"])
        .env_remove("CMAKE")
        .env_remove("ASCENDC_BUILD_MODE");
    for name in &skip {
        cmd.args(["--exclude", name]);
    }
    tools::run(&mut cmd)
}

/// The workspace's `rust-version`.
pub fn rust_version() -> Result<String, String> {
    let manifest = std::fs::read_to_string(tools::workspace_root().join("Cargo.toml"))
        .map_err(|e| e.to_string())?;
    manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_string())
        .ok_or_else(|| "no rust-version in Cargo.toml".to_string())
}

/// `cargo check` of the publishable crates (their libraries: what a user builds) with the
/// toolchain of `rust-version`, installed with rustup when missing, into its own target directory
/// (`target/msrv`). Tests, benches and the xtask use the pinned toolchain of
/// `rust-toolchain.toml`.
pub fn msrv() -> Result<(), String> {
    let version = rust_version()?;
    let skip = unpublished()?;
    let toolchain = format!("{version}.0");
    let installed = Command::new("rustup")
        .args(["run", &toolchain, "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        tools::step(&format!(
            "rustup toolchain install {toolchain} --profile minimal (the rust-version; about \
             100 MB)"
        ));
        tools::run(Command::new("rustup").args([
            "toolchain",
            "install",
            &toolchain,
            "--profile",
            "minimal",
        ]))?;
    }
    tools::step(&format!(
        "cargo +{toolchain} check --lib of the publishable crates (the oldest supported toolchain)"
    ));
    let mut cmd = Command::new("rustup");
    cmd.args(["run", &toolchain, "cargo", "check", "--workspace", "--lib"])
        .current_dir(tools::workspace_root())
        .env("CARGO_TARGET_DIR", tools::target_dir().join("msrv"))
        .env_remove("CMAKE")
        .env_remove("CARGO")
        .env_remove("RUSTC");
    for name in &skip {
        cmd.args(["--exclude", name]);
    }
    tools::run(&mut cmd)
}
