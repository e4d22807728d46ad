//! `cargo xtask hccl-bench`: runs the HCCL bandwidth suite (`benches/benches/hccl_bandwidth`)
//! and writes `docs/hccl-benchmarks.md` from criterion's `estimates.json` files, in the shape
//! of the usual collective benchmarks: size, count, type, time, algorithm bandwidth, bus
//! bandwidth, and the ratio of the bus bandwidth to a host memcpy of the same size measured in
//! the same run.
//!
//! `hccl-bench [--quick] [--report] [-- CRITERION ARGS]`: `--quick` runs the quick suite,
//! `--report` only writes the report from the results already there.

mod report;

use crate::tools;
use serde_json::Value;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: cargo xtask hccl-bench [--quick] [--report] [-- CRITERION ARGS]";

/// The report, relative to the workspace root.
const REPORT: &str = "docs/hccl-benchmarks.md";

pub fn run(args: &[String]) -> Result<(), String> {
    let (ours, passthrough) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let (mut quick, mut report_only) = (false, false);
    for a in ours {
        match a.as_str() {
            "--quick" => quick = true,
            "--report" => report_only = true,
            _ => return Err(format!("hccl-bench: unknown argument {a:?}\n{USAGE}")),
        }
    }
    if !report_only {
        tools::step(&format!(
            "cargo bench -p ascendcl-benches --bench hccl_bandwidth ({} suite)",
            if quick { "quick" } else { "default" }
        ));
        let mut cmd = tools::cargo();
        cmd.args([
            "bench",
            "-p",
            "ascendcl-benches",
            "--bench",
            "hccl_bandwidth",
        ]);
        if !passthrough.is_empty() {
            cmd.arg("--").args(passthrough);
        }
        if quick {
            cmd.env("HCCL_BENCH_QUICK", "1");
        } else {
            cmd.env_remove("HCCL_BENCH_QUICK");
        }
        tools::run(&mut cmd)?;
    }
    tools::step(&format!("writing {REPORT}"));
    let dir = criterion_dir();
    let text = report::report(&dir)?;
    let path = tools::workspace_root().join(REPORT);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tools::note(&format!("wrote {}", path.display()));
    Ok(())
}

/// Criterion's output directory: `CRITERION_HOME`, else `<target dir>/criterion`.
fn criterion_dir() -> PathBuf {
    std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools::target_dir().join("criterion"))
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
