//! Writing generated files, or checking that the committed copies are what would be written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A generated file: its path relative to the workspace root, and its contents.
pub struct Generated {
    /// Path relative to the workspace root.
    pub path: PathBuf,
    /// The full text.
    pub text: String,
}

/// Writes each file under `root`, or with `check` compares it with the committed copy and fails
/// naming every file that differs.
pub fn emit(root: &Path, files: &[Generated], check: bool) -> Result<(), String> {
    let mut stale = Vec::new();
    for file in files {
        let path = root.join(&file.path);
        if check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if committed != file.text {
                stale.push(file.path.display().to_string());
            }
        } else {
            std::fs::write(&path, &file.text)
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("wrote {}", file.path.display());
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "out of date: {} (run `cargo xtask codegen` and commit the result)",
            stale.join(", ")
        ))
    }
}

/// Formats Rust source with the toolchain's rustfmt (edition 2024), so that a generated module
/// is exactly what `cargo fmt` leaves alone.
pub fn rustfmt(root: &Path, source: &str) -> Result<String, String> {
    let mut child = Command::new(std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into()))
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run rustfmt: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no stdin")?;
    let input = source.to_string();
    let writer =
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    writer
        .join()
        .map_err(|_| "writing to rustfmt panicked".to_string())?
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt output: {e}"))
}

/// Parses a Rust file of the workspace with `syn`.
pub fn parse(root: &Path, relative: &str) -> Result<syn::File, String> {
    let path = root.join(relative);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| format!("parsing {}: {e}", path.display()))
}
