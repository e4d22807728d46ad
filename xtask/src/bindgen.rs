//! `cargo xtask bindgen`: regenerates (or, with `--check`, verifies) the committed bindings of
//! ascendcl-sys (from the AscendCL headers) and hccl-sys (from the HCCL headers).

use crate::tools;
use std::path::{Path, PathBuf};

/// Each generated set: the codegen's library name and where the committed files live, relative
/// to the workspace root.
const SETS: [(&str, &str); 2] = [
    ("acl", "crates/ascendcl-sys/src/generated"),
    ("hccl", "crates/hccl-sys/src/generated"),
];

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
        for (library, dir) in SETS {
            generate(library, &include, &tools::workspace_root().join(dir))?;
        }
        // The error codes and the API map are derived from the bindings.
        crate::codegen::tables(false)
    }
}

fn generate(library: &str, include: &Path, out: &Path) -> Result<(), String> {
    let libclang = tools::libclang()?;
    tools::step(&format!(
        "generating the {library} bindings from {}",
        include.display()
    ));
    tools::run(
        tools::cargo()
            .args(["run", "--package", "ascendcl-codegen", "--", "bindings"])
            .arg(library)
            .arg(include)
            .arg(out)
            .env("LIBCLANG_PATH", libclang),
    )
}

/// Regenerates every set into `target/` and compares with the committed files.
pub fn check(include: &Path) -> Result<(), String> {
    let mut stale = Vec::new();
    for (library, dir) in SETS {
        let fresh = tools::target_dir().join("bindgen-check").join(library);
        generate(library, include, &fresh)?;
        let committed = tools::workspace_root().join(dir);
        for name in ["types.rs", "functions.rs"] {
            let read = |d: &Path| {
                std::fs::read_to_string(d.join(name))
                    .map_err(|e| format!("{}: {e}", d.join(name).display()))
            };
            if read(&committed)? != read(&fresh)? {
                stale.push(format!("{dir}/{name} (fresh copy in {})", fresh.display()));
            }
        }
    }
    if stale.is_empty() {
        tools::note("committed bindings match the headers");
        Ok(())
    } else {
        Err(format!(
            "committed bindings differ from the headers: {}; run `cargo xtask bindgen`",
            stale.join(", ")
        ))
    }
}
