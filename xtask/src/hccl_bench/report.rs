//! The markdown of `docs/hccl-benchmarks.md`: the goals of the suite (bus bandwidth against the
//! host's memcpy at the largest size with the bound the host sets, the smallest all-reduce's
//! latency, the growth with the number of ranks), then every measurement with the algorithm
//! that ran it.

use super::read_json;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// One collective of the report.
struct Collective {
    /// The criterion group.
    group: &'static str,
    title: &'static str,
    /// The bus-bandwidth factor for `n` ranks (NCCL-tests' convention; HCCL's own tool reports
    /// algorithm bandwidth only), and how the report writes it.
    factor: fn(f64) -> f64,
    factor_text: &'static str,
    /// The highest busbw / memcpy the host allows on `n` ranks, per unit of the ratio of the
    /// host's cores copying together to one copying alone: every rank reads its input and writes
    /// its output at least once, and all ranks share the cores and the memory.
    bound: fn(f64) -> f64,
    bound_text: &'static str,
}

const OPS: [Collective; 3] = [
    Collective {
        group: "hccl_all_reduce",
        title: "All-reduce",
        factor: |n| 2.0 * (n - 1.0) / n,
        factor_text: "2(n−1)/n",
        bound: |n| 2.0 * (n - 1.0) / (n * n),
        bound_text: "2(n−1)/n²",
    },
    Collective {
        group: "hccl_all_gather",
        title: "All-gather",
        factor: |n| (n - 1.0) / n,
        factor_text: "(n−1)/n",
        bound: |n| 2.0 * (n - 1.0) / (n * (n + 1.0)),
        bound_text: "2(n−1)/(n(n+1))",
    },
    Collective {
        group: "hccl_reduce_scatter",
        title: "Reduce-scatter",
        factor: |n| (n - 1.0) / n,
        factor_text: "(n−1)/n",
        bound: |n| 2.0 * (n - 1.0) / (n * (n + 1.0)),
        bound_text: "2(n−1)/(n(n+1))",
    },
];

/// busbw / memcpy wanted at the largest size.
const RATIO_GOAL: f64 = 0.5;
/// The smallest all-reduce's time wanted, by number of ranks.
const LATENCY_GOALS_US: [(u64, f64); 2] = [(2, 30.0), (8, 60.0)];

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

/// What a run recorded and measured.
struct Run {
    sizes: Vec<u64>,
    ranks: Vec<u64>,
    cpus: u64,
    algorithms: serde_json::Map<String, Value>,
    /// Nanoseconds per iteration, by criterion id.
    times: HashMap<String, f64>,
}

impl Run {
    fn load(dir: &Path) -> Result<(Run, Value), String> {
        let record = read_json(&dir.join("hccl-bench.json")).map_err(|e| {
            format!("{e}\n(run `cargo xtask hccl-bench` first: it records the run there)")
        })?;
        let list = |k: &str| -> Result<Vec<u64>, String> {
            Ok(record[k]
                .as_array()
                .ok_or(format!("hccl-bench.json: no {k}"))?
                .iter()
                .filter_map(Value::as_u64)
                .collect())
        };
        let (sizes, ranks) = (list("sizes")?, list("ranks")?);
        let cpus = record["host_cpus"].as_u64().unwrap_or(1).max(1);
        let mut times = HashMap::new();
        let mut take = |group: &str, function: &str, b: u64| {
            if let Some(ns) = mean_ns(dir, group, function, b) {
                times.insert(format!("{group}/{function}/{b}"), ns);
            }
        };
        for &b in &sizes {
            take("hccl_memcpy", "host", b);
            take("hccl_memcpy", &format!("{cpus}_threads"), b);
            for op in &OPS {
                for &n in &ranks {
                    take(op.group, &format!("{n}_ranks"), b);
                }
            }
        }
        let algorithms = record["algorithms"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        Ok((
            Run {
                sizes,
                ranks,
                cpus,
                algorithms,
                times,
            },
            record,
        ))
    }

    fn time(&self, group: &str, n: u64, bytes: u64) -> Option<f64> {
        self.times
            .get(&format!("{group}/{n}_ranks/{bytes}"))
            .copied()
    }

    /// One thread's memcpy of `bytes`, GB/s.
    fn memcpy(&self, bytes: u64) -> Option<f64> {
        let ns = self.times.get(&format!("hccl_memcpy/host/{bytes}"))?;
        Some(bytes as f64 / ns)
    }

    /// All the host's cores copying `bytes` each at once, GB/s in all.
    fn memcpy_all(&self, bytes: u64) -> Option<f64> {
        let ns = self
            .times
            .get(&format!("hccl_memcpy/{}_threads/{bytes}", self.cpus))?;
        Some((self.cpus * bytes) as f64 / ns)
    }

    fn algorithm(&self, group: &str, n: u64, bytes: u64) -> &str {
        self.algorithms
            .get(&format!("{group}/{n}_ranks/{bytes}"))
            .and_then(Value::as_str)
            .unwrap_or("—")
    }

    /// busbw in GB/s.
    fn busbw(&self, op: &Collective, n: u64, nominal: u64) -> Option<f64> {
        let ns = self.time(op.group, n, nominal)?;
        Some(moved_bytes(op.group, nominal, n) as f64 / ns * (op.factor)(n as f64))
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.digits$}"))
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "missed",
        None => "—",
    }
}

fn goals(w: &mut String, run: &Run) {
    let largest = *run.sizes.iter().max().expect("sizes");
    let _ = writeln!(w, "## Goals\n");
    let m1 = run.memcpy(largest);
    let mk = run.memcpy_all(largest);
    let _ = writeln!(
        w,
        "### Bus bandwidth against memcpy at {}\n\nThe goal is busbw / memcpy ≥ {RATIO_GOAL}. The \
         **host bound** is what any algorithm can reach on this host: every rank reads its input \
         and writes its output at least once, and the ranks share the host's {} cores and memory, \
         which copy {} GB/s together against {} GB/s for one memcpy (the ratio r = {}); with \
         `n` ranks that caps busbw / memcpy at f(n) · r, f given per collective.\n",
        human(largest),
        run.cpus,
        opt(mk, 3),
        opt(m1, 3),
        opt(mk.zip(m1).map(|(a, b)| a / b), 2),
    );
    let _ = writeln!(
        w,
        "| collective | ranks | algorithm | busbw (GB/s) | busbw / memcpy | host bound f(n) · r | goal |"
    );
    let _ = writeln!(w, "| --- | ---: | --- | ---: | ---: | ---: | --- |");
    for op in &OPS {
        for &n in &run.ranks {
            let bw = run.busbw(op, n, largest);
            let ratio = bw.zip(m1).map(|(b, m)| b / m);
            let bound = mk.zip(m1).map(|(a, b)| (op.bound)(n as f64) * a / b);
            let _ = writeln!(
                w,
                "| {} (f = {}) | {n} | {} | {} | {} | {} | {} |",
                op.title,
                op.bound_text,
                run.algorithm(op.group, n, largest),
                opt(bw, 3),
                opt(ratio, 3),
                opt(bound, 3),
                verdict(ratio.map(|r| r >= RATIO_GOAL)),
            );
        }
    }
    let smallest = *run.sizes.iter().min().expect("sizes");
    let _ = writeln!(
        w,
        "\n### Latency of the smallest all-reduce ({})\n",
        human(smallest)
    );
    let _ = writeln!(w, "| ranks | algorithm | time (us) | goal (us) | |");
    let _ = writeln!(w, "| ---: | --- | ---: | ---: | --- |");
    for (n, goal) in LATENCY_GOALS_US {
        let t = run
            .time("hccl_all_reduce", n, smallest)
            .map(|ns| ns / 1000.0);
        let _ = writeln!(
            w,
            "| {n} | {} | {} | {goal} | {} |",
            run.algorithm("hccl_all_reduce", n, smallest),
            opt(t, 2),
            verdict(t.map(|t| t <= goal)),
        );
    }
    let (lo, hi) = (
        *run.ranks.iter().min().expect("ranks"),
        *run.ranks.iter().max().expect("ranks"),
    );
    let _ = writeln!(
        w,
        "\n### Growth with the number of ranks at a fixed size per rank\n\nThe goal is time \
         growing no faster than the number of ranks: t({hi}) / t({lo}) ≤ {}. For the all-reduce \
         the size is one rank's buffer; for all-gather and reduce-scatter one rank's share of the \
         nominal size (the nominal size on {hi} ranks is {} times that on {lo}).\n",
        hi / lo,
        hi / lo
    );
    let _ = writeln!(
        w,
        "| collective | size per rank | t({lo}) (us) | t({hi}) (us) | t({hi}) / t({lo}) | |"
    );
    let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | --- |");
    let limit = (hi / lo) as f64;
    for op in &OPS {
        for &b in &run.sizes {
            // The nominal size on `hi` ranks with the same share per rank as `b` on `lo`.
            let (per, b_hi) = if op.group == "hccl_all_reduce" {
                (b, b)
            } else {
                (b / lo, b / lo * hi)
            };
            if per < 4 || !run.sizes.contains(&b_hi) {
                continue;
            }
            let (t_lo, t_hi) = (
                run.time(op.group, lo, b).map(|ns| ns / 1000.0),
                run.time(op.group, hi, b_hi).map(|ns| ns / 1000.0),
            );
            let g = t_hi.zip(t_lo).map(|(h, l)| h / l);
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} |",
                op.title,
                human(per),
                opt(t_lo, 2),
                opt(t_hi, 2),
                opt(g, 2),
                verdict(g.map(|g| g <= limit)),
            );
        }
    }
    let _ = writeln!(w);
}

pub(super) fn report(dir: &Path) -> Result<String, String> {
    let (run, record) = Run::load(dir)?;
    let backend = record["backend"].as_str().unwrap_or("unknown");
    let mode = record["mode"].as_str().unwrap_or("unknown");
    let when = record["unix_time"].as_u64().map(date).unwrap_or_default();
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# HCCL collective bandwidth\n");
    let _ = writeln!(
        w,
        "Generated by `cargo xtask hccl-bench` from criterion's estimates of \
         `benches/benches/hccl_bandwidth` (do not edit by hand). Run of {when}: {mode} suite, \
         backend {backend}, {} host CPUs.\n",
        run.cpus
    );
    let _ = writeln!(
        w,
        "On the emulator every rank is a thread and all share the host's cores and memory \
         bandwidth: the figures measure the emulator, not an NPU (see docs/hccl.md).\n"
    );
    goals(w, &run);
    let _ = writeln!(
        w,
        "## The measurements\n\nColumns, as in the usual collective benchmarks (NCCL-tests, \
         HCCL's `hccl_test`):\n\n\
         * **size**: the bytes of the buffer the bandwidth is counted on — one rank's buffer for \
         all-reduce, the gathered output for all-gather, the full input for reduce-scatter \
         (`⌈count / n⌉ · n` elements, so small sizes round up to a multiple of the ranks);\n\
         * **count**: `size / 4` elements of **type** `float` (f32); the all-reduce uses sum;\n\
         * **algorithm**: the one the emulator ran (docs/hccl.md);\n\
         * **time**: criterion's mean per collective, one collective on every rank, issued back \
         to back on each rank's stream and waited for (wall time of the whole exchange);\n\
         * **algbw** = size / time, in GB/s (10⁹ bytes per second);\n\
         * **busbw** = algbw × the factor of the collective for `n` ranks (all-reduce 2(n−1)/n, \
         all-gather and reduce-scatter (n−1)/n): the per-rank link bandwidth a ring would need, \
         comparable across rank counts;\n\
         * **memcpy**: a host `memcpy` of the same nominal size, measured in the same run; \
         **busbw / memcpy** is the ratio.\n"
    );
    let mut missing = 0usize;
    let mut peaks = Vec::new();
    for op in &OPS {
        let _ = writeln!(w, "### {} (busbw factor {})\n", op.title, op.factor_text);
        for &n in &run.ranks {
            let _ = writeln!(w, "#### {n} ranks\n");
            let _ = writeln!(
                w,
                "| size | count | type | algorithm | time (us) | algbw (GB/s) | busbw (GB/s) | memcpy (GB/s) | busbw / memcpy |"
            );
            let _ = writeln!(
                w,
                "| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"
            );
            let mut peak: Option<(f64, u64)> = None;
            for &nominal in &run.sizes {
                let bytes = moved_bytes(op.group, nominal, n);
                let algo = run.algorithm(op.group, n, nominal);
                let Some(ns) = run.time(op.group, n, nominal) else {
                    missing += 1;
                    let _ = writeln!(
                        w,
                        "| {} | {} | float | {algo} | — | — | — | — | — |",
                        human(bytes),
                        bytes / 4
                    );
                    continue;
                };
                let algbw = bytes as f64 / ns;
                let busbw = algbw * (op.factor)(n as f64);
                let m = run.memcpy(nominal);
                if peak.is_none_or(|(p, _)| busbw > p) {
                    peak = Some((busbw, nominal));
                }
                let _ = writeln!(
                    w,
                    "| {} | {} | float | {algo} | {:.2} | {algbw:.3} | {busbw:.3} | {} | {} |",
                    human(bytes),
                    bytes / 4,
                    ns / 1000.0,
                    opt(m, 3),
                    opt(m.map(|m| busbw / m), 3),
                );
            }
            let _ = writeln!(w);
            peaks.push((op.title, n, peak));
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
            Some((bw, b)) => {
                let _ = writeln!(
                    w,
                    "| {title} | {n} | {bw:.3} | {} | {} |",
                    human(b),
                    opt(run.memcpy(b), 3)
                );
            }
            None => {
                let _ = writeln!(w, "| {title} | {n} | — | — | — |");
            }
        }
    }
    let _ = writeln!(w, "\n## Host memcpy (the ceiling)\n");
    let _ = writeln!(
        w,
        "One thread copying, and all {} CPUs copying a buffer of that size each at once (GB/s in \
         all).\n",
        run.cpus
    );
    let _ = writeln!(
        w,
        "| size | time (us) | GB/s | {} threads (GB/s) |",
        run.cpus
    );
    let _ = writeln!(w, "| ---: | ---: | ---: | ---: |");
    for &b in &run.sizes {
        match run.memcpy(b) {
            Some(gbps) => {
                let _ = writeln!(
                    w,
                    "| {} | {:.3} | {gbps:.3} | {} |",
                    human(b),
                    b as f64 / gbps / 1000.0,
                    opt(run.memcpy_all(b), 3)
                );
            }
            None => {
                missing += 1;
                let _ = writeln!(w, "| {} | — | — | — |", human(b));
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
