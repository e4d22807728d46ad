//! `cargo xtask bench [--quick] [--report] [-- CRITERION ARGS]`: runs the criterion suite
//! (`cargo bench -p ascendcl-benches`; the quick suite sets `ASCENDCL_BENCH_QUICK=1`) after
//! recording the machine it runs on next to criterion's results.

use super::{MACHINE, criterion_dir};
use crate::tools;
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Runs `cargo xtask bench ...`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (own, passthrough) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let mut quick = false;
    let mut report_after = false;
    for a in own {
        match a.as_str() {
            "--quick" => quick = true,
            "--report" => report_after = true,
            other => {
                return Err(format!(
                    "bench: unknown argument {other:?} (expected --quick, --report, -- CRITERION ARGS)"
                ));
            }
        }
    }
    let criterion = criterion_dir(None);
    std::fs::create_dir_all(&criterion)
        .map_err(|e| format!("cannot create {}: {e}", criterion.display()))?;
    std::fs::write(criterion.join(MACHINE), machine_record())
        .map_err(|e| format!("cannot write the machine record: {e}"))?;
    tools::step(&format!(
        "cargo bench -p ascendcl-benches ({} suite)",
        if quick { "quick" } else { "default" }
    ));
    let mut cmd = tools::cargo();
    cmd.args(["bench", "-p", "ascendcl-benches", "--bench", "memcpy"]);
    if !passthrough.is_empty() {
        cmd.arg("--").args(passthrough);
    }
    if quick {
        cmd.env("ASCENDCL_BENCH_QUICK", "1");
    } else {
        cmd.env_remove("ASCENDCL_BENCH_QUICK");
    }
    let started = Instant::now();
    tools::run(&mut cmd)?;
    tools::note(&format!(
        "suite done in {:.0} s (build included); results in {}",
        started.elapsed().as_secs_f64(),
        criterion.display()
    ));
    if report_after {
        super::report(&[])
    } else {
        tools::note("run `cargo xtask bench-report` to write docs/benchmarks.md");
        Ok(())
    }
}

/// `key<TAB>value` lines describing this machine (read back by
/// [`parse_machine`](super::results::parse_machine)).
pub(super) fn machine_record() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".to_string(), |(_, v)| v.trim().to_string());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or("unknown".to_string(), |s| s.trim().to_string());
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map_or(String::new(), |v| v.trim_matches('"').to_string());
    let rustc = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .current_dir(tools::workspace_root())
        .arg("-V")
        .output()
        .ok()
        .map_or("unknown".to_string(), |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        });
    let huge = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .map_or("unknown".to_string(), |s| s.trim().to_string());
    format!(
        "cpu\t{model}\ncores\t{cpus}\nmemory\t{:.1} GiB\nkernel\tLinux {kernel}\nos\t{os}\nrustc\t{rustc}\n\
         hugepages\t{huge}\nrecorded\t{}\n",
        mem_kib as f64 / (1024.0 * 1024.0),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}
