//! The symbols a binary defines: a Rust program that embeds the emulator must not define (and so
//! dynamically export) any `acl*` symbol, which would interpose on the real runtime library's
//! functions — for the program itself and for CANN's own libraries loaded into it.

use crate::test_binaries::{self, Executable};
use crate::tools;
use std::path::Path;
use std::process::Command;

/// `cargo xtask symbols`: builds the workspace's tests as `cargo xtask test` does (nothing is
/// compiled when that build is fresh) and checks their binaries.
pub fn run() -> Result<(), String> {
    tools::step(&format!(
        "cargo test --workspace --features {} --no-run (the executables it built)",
        crate::test::TEST_FEATURES
    ));
    let built = test_binaries::build(tools::cargo(), &crate::test::TEST_BUILD)?;
    check(&built)
}

/// Checks that neither the h2d_sync sample nor the `ascendcl` crate's test binaries (all of which
/// embed the emulator) defines an `acl*` symbol; `built` is the workspace's test build.
pub fn check(built: &[Executable]) -> Result<(), String> {
    let ws = tools::workspace_root();
    let sample = ws.join("samples/h2d_sync/Cargo.toml");
    let safe_api = ws.join("crates/ascendcl/Cargo.toml");
    let (mut sample_bins, mut test_bins) = (Vec::new(), Vec::new());
    for e in built {
        if e.manifest == sample && e.kind == "bin" {
            sample_bins.push(&e.path);
        } else if e.manifest == safe_api && e.kind != "bin" {
            test_bins.push(&e.path);
        }
    }
    if sample_bins.is_empty() || test_bins.is_empty() {
        return Err(format!(
            "the test build gave {} h2d_sync binaries and {} ascendcl test binaries: expected both",
            sample_bins.len(),
            test_bins.len()
        ));
    }
    for b in sample_bins.iter().chain(&test_bins) {
        check_no_acl(b)?;
    }
    tools::step(&format!(
        "nm [-D] --defined-only: no acl* symbol in {} binaries (h2d_sync's {} and ascendcl's {} \
         test binaries)",
        sample_bins.len() + test_bins.len(),
        sample_bins.len(),
        test_bins.len()
    ));
    Ok(())
}

/// Fails when `binary` defines a symbol whose name starts with `acl`, in its dynamic symbol
/// table (exported: it would interpose at run time) or in its full symbol table (a definition the
/// static linker would prefer to the runtime library's).
pub fn check_no_acl(binary: &Path) -> Result<(), String> {
    let mut found = defined_acl_symbols(binary)?;
    if found.is_empty() {
        found = nm(binary, false, "acl")?;
    }
    if found.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = found.iter().take(8).map(String::as_str).collect();
    Err(format!(
        "{} defines {} acl* symbol(s) ({}{}): a program that embeds the emulator would \
         interpose on the real runtime library",
        binary.display(),
        found.len(),
        shown.join(", "),
        if found.len() > shown.len() {
            ", ..."
        } else {
            ""
        }
    ))
}

/// The `acl*` symbols a binary or shared library defines in its dynamic symbol table
/// (`nm -D --defined-only`).
pub fn defined_acl_symbols(binary: &Path) -> Result<Vec<String>, String> {
    defined_dynamic_symbols(binary, "acl")
}

/// The symbols starting with `prefix` that a binary or shared library defines in its dynamic
/// symbol table (`nm -D --defined-only`).
pub fn defined_dynamic_symbols(binary: &Path, prefix: &str) -> Result<Vec<String>, String> {
    nm(binary, true, prefix)
}

/// The defined symbols starting with `prefix` of the dynamic (`nm -D`) or full symbol table.
fn nm(binary: &Path, dynamic: bool, prefix: &str) -> Result<Vec<String>, String> {
    let out = Command::new("nm")
        .args(if dynamic {
            &["-D", "--defined-only"][..]
        } else {
            &["--defined-only"][..]
        })
        .arg(binary)
        .output()
        .map_err(|e| format!("running nm: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "nm -D {} failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            // "<address> <type> <name>"; a versioned name carries "@VERSION".
            let name = l.split_whitespace().nth(2)?;
            let name = name.split('@').next().unwrap_or(name);
            name.starts_with(prefix).then(|| name.to_string())
        })
        .collect())
}
