//! `cargo xtask hccl-bench`: runs the HCCL bandwidth suite (`benches/benches/hccl_bandwidth`)
//! and writes `docs/hccl-benchmarks.md` from criterion's `estimates.json` files, in the shape
//! of the usual collective benchmarks: size, count, type, time, algorithm bandwidth, bus
//! bandwidth, and the ratio of the bus bandwidth to a host memcpy of the same size measured in
//! the same run.
//!
//! `hccl-bench [--quick] [--report] [-- CRITERION ARGS]`: `--quick` runs the quick suite,
//! `--report` only writes the report from the results already there.

use crate::tools;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: cargo xtask hccl-bench [--quick] [--report] [-- CRITERION ARGS]";

/// The report, relative to the workspace root.
const REPORT: &str = "docs/hccl-benchmarks.md";

/// One collective of the report.
struct Collective {
    /// The criterion group.
    group: &'static str,
    title: &'static str,
    /// The bus-bandwidth factor for `n` ranks (NCCL-tests' convention; HCCL's own tool reports
    /// algorithm bandwidth only), and how the report writes it.
    factor: fn(f64) -> f64,
    factor_text: &'static str,
}

const OPS: [Collective; 3] = [
    Collective {
        group: "hccl_all_reduce",
        title: "All-reduce",
        factor: |n| 2.0 * (n - 1.0) / n,
        factor_text: "2(n−1)/n",
    },
    Collective {
        group: "hccl_all_gather",
        title: "All-gather",
        factor: |n| (n - 1.0) / n,
        factor_text: "(n−1)/n",
    },
    Collective {
        group: "hccl_reduce_scatter",
        title: "Reduce-scatter",
        factor: |n| (n - 1.0) / n,
        factor_text: "(n−1)/n",
    },
];

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
    let text = report(&dir)?;
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

/// Criterion's mean time per iteration in nanoseconds for `<group>/<function>/<bytes>`.
fn mean_ns(dir: &Path, group: &str, function: &str, bytes: u64) -> Option<f64> {
    let p = dir
        .join(group)
        .join(function)
        .join(bytes.to_string())
        .join("new")
        .join("estimates.json");
    let v = read_json(&p).ok()?;
    v["mean"]["point_estimate"].as_f64().filter(|ns| *ns > 0.0)
}

/// The bytes a collective moves for a nominal size, as the suite counts them (see the bench):
/// all-reduce one rank's buffer, all-gather and reduce-scatter `⌈count / n⌉ · n` elements.
fn moved_bytes(group: &str, nominal: u64, n: u64) -> u64 {
    let count = (nominal / 4).max(1);
    match group {
        "hccl_all_reduce" => count * 4,
        _ => count.div_ceil(n) * n * 4,
    }
}

/// A size as the usual reports print it.
fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// `unix_time` as a UTC date (civil-from-days, proleptic Gregorian).
fn date(unix: u64) -> String {
    let days = (unix / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn report(dir: &Path) -> Result<String, String> {
    let record = read_json(&dir.join("hccl-bench.json")).map_err(|e| {
        format!("{e}\n(run `cargo xtask hccl-bench` first: it records the run there)")
    })?;
    let sizes: Vec<u64> = record["sizes"]
        .as_array()
        .ok_or("hccl-bench.json: no sizes")?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let ranks: Vec<u64> = record["ranks"]
        .as_array()
        .ok_or("hccl-bench.json: no ranks")?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let backend = record["backend"].as_str().unwrap_or("unknown");
    let mode = record["mode"].as_str().unwrap_or("unknown");
    let cpus = record["host_cpus"].as_u64().unwrap_or(0);
    let when = record["unix_time"].as_u64().map(date).unwrap_or_default();
    let memcpy: Vec<Option<f64>> = sizes
        .iter()
        .map(|&b| mean_ns(dir, "hccl_memcpy", "host", b).map(|ns| b as f64 / ns))
        .collect();

    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# HCCL collective bandwidth\n");
    let _ = writeln!(
        w,
        "Generated by `cargo xtask hccl-bench` from criterion's estimates of \
         `benches/benches/hccl_bandwidth` (do not edit by hand). Run of {when}: {mode} suite, \
         backend {backend}, {cpus} host CPUs.\n"
    );
    let _ = writeln!(
        w,
        "Columns, as in the usual collective benchmarks (NCCL-tests, HCCL's `hccl_test`):\n\n\
         * **size**: the bytes of the buffer the bandwidth is counted on — one rank's buffer for \
         all-reduce, the gathered output for all-gather, the full input for reduce-scatter \
         (`⌈count / n⌉ · n` elements, so small sizes round up to a multiple of the ranks);\n\
         * **count**: `size / 4` elements of **type** `float` (f32); the all-reduce uses sum;\n\
         * **time**: criterion's mean per collective, one collective on every rank, issued back \
         to back on each rank's stream and waited for (wall time of the whole exchange);\n\
         * **algbw** = size / time, in GB/s (10⁹ bytes per second);\n\
         * **busbw** = algbw × the factor of the collective for `n` ranks (all-reduce 2(n−1)/n, \
         all-gather and reduce-scatter (n−1)/n): the per-rank link bandwidth a ring would need, \
         comparable across rank counts;\n\
         * **memcpy**: a host `memcpy` of the same nominal size, measured in the same run, the \
         ceiling an emulated collective (host memory copies) approaches; **busbw / memcpy** is \
         the ratio.\n\n\
         On the emulator every rank is a thread of one process and all share the host's cores and \
         memory bandwidth: the figures measure the emulator, not an NPU (see docs/hccl.md).\n"
    );
    let mut missing = 0usize;
    let mut peaks = Vec::new();
    for Collective {
        group,
        title,
        factor,
        factor_text,
    } in OPS
    {
        let _ = writeln!(w, "## {title} (busbw factor {factor_text})\n");
        for &n in &ranks {
            let _ = writeln!(w, "### {n} ranks\n");
            let _ = writeln!(
                w,
                "| size | count | type | time (us) | algbw (GB/s) | busbw (GB/s) | memcpy (GB/s) | busbw / memcpy |"
            );
            let _ = writeln!(
                w,
                "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
            );
            let mut peak: Option<(f64, u64)> = None;
            for (k, &nominal) in sizes.iter().enumerate() {
                let bytes = moved_bytes(group, nominal, n);
                let Some(ns) = mean_ns(dir, group, &format!("{n}_ranks"), nominal) else {
                    missing += 1;
                    let _ = writeln!(
                        w,
                        "| {} | {} | float | — | — | — | — | — |",
                        human(bytes),
                        bytes / 4
                    );
                    continue;
                };
                let algbw = bytes as f64 / ns;
                let busbw = algbw * factor(n as f64);
                let (mc, ratio) = match memcpy[k] {
                    Some(m) => (format!("{m:.3}"), format!("{:.3}", busbw / m)),
                    None => ("—".into(), "—".into()),
                };
                if peak.is_none_or(|(p, _)| busbw > p) {
                    peak = Some((busbw, bytes));
                }
                let _ = writeln!(
                    w,
                    "| {} | {} | float | {:.2} | {algbw:.3} | {busbw:.3} | {mc} | {ratio} |",
                    human(bytes),
                    bytes / 4,
                    ns / 1000.0
                );
            }
            let _ = writeln!(w);
            peaks.push((title, n, peak));
        }
    }
    let _ = writeln!(w, "## Peak bus bandwidth\n");
    let _ = writeln!(
        w,
        "| collective | ranks | busbw (GB/s) | at size | memcpy at that size (GB/s) |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: |");
    for (title, n, peak) in peaks {
        match peak {
            Some((bw, bytes)) => {
                let mc = sizes
                    .iter()
                    .position(|&s| s == bytes)
                    .and_then(|k| memcpy[k])
                    .map_or("—".to_string(), |m| format!("{m:.3}"));
                let _ = writeln!(w, "| {title} | {n} | {bw:.3} | {} | {mc} |", human(bytes));
            }
            None => {
                let _ = writeln!(w, "| {title} | {n} | — | — | — |");
            }
        }
    }
    let _ = writeln!(w, "\n## Host memcpy (the ceiling)\n");
    let _ = writeln!(w, "| size | time (us) | GB/s |");
    let _ = writeln!(w, "| ---: | ---: | ---: |");
    for (k, &b) in sizes.iter().enumerate() {
        match memcpy[k] {
            Some(gbps) => {
                let _ = writeln!(
                    w,
                    "| {} | {:.3} | {gbps:.3} |",
                    human(b),
                    b as f64 / gbps / 1000.0
                );
            }
            None => {
                missing += 1;
                let _ = writeln!(w, "| {} | — | — |", human(b));
            }
        }
    }
    if missing > 0 {
        let _ = writeln!(
            w,
            "\n{missing} results are missing (— above): the run was filtered or interrupted."
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_sizes() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400), "2000-02-29");
        assert_eq!(human(4), "4 B");
        assert_eq!(human(64 << 20), "64 MiB");
        assert_eq!(human(16 << 10), "16 KiB");
        assert_eq!(moved_bytes("hccl_all_gather", 4, 8), 32);
        assert_eq!(moved_bytes("hccl_all_reduce", 4, 8), 4);
        assert_eq!(moved_bytes("hccl_reduce_scatter", 1 << 20, 8), 1 << 20);
    }
}
