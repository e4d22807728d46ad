//! `cargo xtask bindgen`: regenerates (or, with `--check`, verifies) ascendcl-sys's committed
//! bindings from the AscendCL headers.

use crate::tools;
use std::path::{Path, PathBuf};

/// Where the committed bindings live, relative to the workspace root.
const GENERATED: &str = "crates/ascendcl-sys/src/generated";

/// Runs `cargo xtask bindgen [--include DIR] [--check]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut include = None;
    let mut check = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--include" => {
                include = Some(PathBuf::from(
                    it.next().ok_or("--include needs a directory")?,
                ))
            }
            "--check" => check = true,
            other => return Err(format!("bindgen: unknown argument {other:?}")),
        }
    }
    let include = match include {
        Some(dir) => dir,
        None => tools::headers()?,
    };
    if check {
        self::check(&include)
    } else {
        generate(&include, &tools::workspace_root().join(GENERATED))?;
        // The error-name table and the API map are derived from the bindings.
        crate::codegen::tables(false)
    }
}

fn generate(include: &Path, out: &Path) -> Result<(), String> {
    let libclang = tools::libclang()?;
    tools::step(&format!("generating bindings from {}", include.display()));
    tools::run(
        tools::cargo()
            .args(["run", "--package", "ascendcl-codegen", "--", "bindings"])
            .arg(include)
            .arg(out)
            .env("LIBCLANG_PATH", libclang),
    )
}

/// Regenerates into `target/` and compares with the committed files.
pub fn check(include: &Path) -> Result<(), String> {
    let fresh = tools::target_dir().join("bindgen-check");
    generate(include, &fresh)?;
    let committed = tools::workspace_root().join(GENERATED);
    let mut stale = Vec::new();
    for name in ["types.rs", "functions.rs"] {
        let a =
            std::fs::read_to_string(committed.join(name)).map_err(|e| format!("{name}: {e}"))?;
        let b = std::fs::read_to_string(fresh.join(name)).map_err(|e| format!("{name}: {e}"))?;
        if a != b {
            stale.push(name);
        }
    }
    if stale.is_empty() {
        tools::note("committed bindings match the headers");
        Ok(())
    } else {
        Err(format!(
            "committed bindings differ from the headers in {} (fresh copy in {}); run `cargo xtask bindgen`",
            stale.join(", "),
            fresh.display()
        ))
    }
}
