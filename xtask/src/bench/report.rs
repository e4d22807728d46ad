//! `cargo xtask bench-report [--criterion DIR]`: docs/benchmarks.md from a run's results — the
//! run and the machine, the goals' verdicts (criterion's estimates beside the interleaved paired
//! ratios), the tables per group, the skipped combinations — and the plot beside it.

use super::results::{self, Estimate, Record, Results, get, measured_policies, sizes_of};
use super::{MACHINE, RECORD, criterion_dir, human, plot, runner};
use crate::tools;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fixed sizes of `memcpy_h2d_sync/{safe,raw_ffi,host_memcpy}`.
const FIXED_SIZES: [u64; 6] = [4, 4096, 65536, 1 << 20, 16 << 20, 64 << 20];
/// Goal: safe/raw_ffi time at 64 KiB and above.
const GOAL_RATIO: f64 = 1.02;
/// Goal: safe − raw_ffi at 4 B, in nanoseconds.
const GOAL_OVERHEAD_NS: f64 = 25.0;
/// Goal: raw_ffi throughput over host_memcpy throughput at 1 MiB and above, on the emulator.
const GOAL_EMU_FRACTION: f64 = 0.90;

/// Runs `cargo xtask bench-report`.
pub fn report(args: &[String]) -> Result<(), String> {
    let mut dir = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--criterion" => {
                dir = Some(PathBuf::from(
                    it.next().ok_or("--criterion needs a directory")?,
                ));
            }
            other => {
                return Err(format!(
                    "bench-report: unknown argument {other:?} (expected --criterion DIR)"
                ));
            }
        }
    }
    let dir = criterion_dir(dir);
    let record = Record::read(&dir.join(RECORD));
    // A filtered run replaces only some results: keep the older ones then.
    let since = if record.filter.is_some() {
        None
    } else {
        record.started
    };
    let (results, stale) = results::load(&dir, since)?;
    if results.is_empty() {
        return Err(format!(
            "no criterion results under {} (run `cargo xtask bench` first)",
            dir.display()
        ));
    }
    let machine = std::fs::read_to_string(dir.join(MACHINE))
        .ok()
        .map(|s| results::parse_machine(&s))
        .unwrap_or_else(|| results::parse_machine(&runner::machine_record()));
    let docs = tools::workspace_root().join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| format!("cannot create docs/: {e}"))?;
    let svg = plot::throughput(&results)?;
    let md = markdown(&results, &record, &machine, stale, &dir);
    let md_path = docs.join("benchmarks.md");
    let svg_path = docs.join("benchmarks-throughput.svg");
    std::fs::write(&svg_path, svg).map_err(|e| format!("cannot write the plot: {e}"))?;
    std::fs::write(&md_path, md).map_err(|e| format!("cannot write the report: {e}"))?;
    tools::step(&format!(
        "wrote {} and {} from {} results",
        md_path.display(),
        svg_path.display(),
        results.len()
    ));
    Ok(())
}

/// A time in the largest unit that keeps it at least 1: `21.5 ns`, `17.74 µs`.
fn fmt_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// GB/s with two decimals (four below 0.1), or a dash when not measured.
fn fmt_gbps(r: Option<&Estimate>) -> String {
    r.map_or("—".to_string(), |r| {
        let g = r.gbps();
        if g < 0.1 {
            format!("{g:.4}")
        } else {
            format!("{g:.2}")
        }
    })
}

/// A markdown table of GB/s: one row per size, one column per (label, group, function).
fn gbps_table(out: &mut String, results: &Results, columns: &[(String, String, String)]) {
    let groups: Vec<&str> = columns.iter().map(|c| c.1.as_str()).collect();
    let sizes: Vec<u64> = sizes_of(results, &groups)
        .into_iter()
        .filter(|&b| {
            columns
                .iter()
                .any(|c| get(results, &c.1, &c.2, b).is_some())
        })
        .collect();
    let _ = write!(out, "| size |");
    for c in columns {
        let _ = write!(out, " {} |", c.0);
    }
    let _ = write!(out, "\n| ---: |");
    for _ in columns {
        let _ = write!(out, " ---: |");
    }
    out.push('\n');
    for b in sizes {
        let _ = write!(out, "| {} |", human(b));
        for c in columns {
            let _ = write!(out, " {} |", fmt_gbps(get(results, &c.1, &c.2, b)));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// A column of [`gbps_table`]: its label, and the group and function it shows.
fn col(
    label: impl Into<String>,
    group: &str,
    function: impl Into<String>,
) -> (String, String, String) {
    (label.into(), group.to_string(), function.into())
}

/// One goal's verdict line.
struct Goal {
    what: String,
    target: String,
    measured: String,
    pass: Option<bool>,
    /// Whether the 95 % interval of the measured value straddles the target (a verdict that
    /// noise could flip).
    uncertain: bool,
    /// The same ratio from the interleaved paired measurement, when recorded.
    paired: Option<f64>,
    /// For a miss: what the other measurements say about its cause.
    note: Option<String>,
}

/// `a − b` at 4 B in the fixed group: the fixed cost per call of `a` over `b` (0 when missing).
fn fixed_cost(results: &Results, a: &str, b: &str) -> f64 {
    let g = "memcpy_h2d_sync";
    get(results, g, a, 4)
        .zip(get(results, g, b, 4))
        .map_or(0.0, |(a, b)| a.ns - b.ns)
}

/// The verdict of every goal: safe/raw_ffi from 64 KiB, safe − raw_ffi at 4 B, and, on the
/// emulator, raw_ffi/host_memcpy throughput from 1 MiB.
fn goals(results: &Results, record: &Record) -> Vec<Goal> {
    let g = "memcpy_h2d_sync";
    let mut out = Vec::new();
    for &b in FIXED_SIZES.iter().filter(|&&b| b >= 65536) {
        let (s, r) = (get(results, g, "safe", b), get(results, g, "raw_ffi", b));
        out.push(Goal {
            what: format!("safe / raw_ffi time at {}", human(b)),
            target: format!("≤ {GOAL_RATIO:.2}"),
            measured: match (s, r) {
                (Some(s), Some(r)) => format!(
                    "{:.3} (95 % CI {:.3}–{:.3})",
                    s.ns / r.ns,
                    s.lo / r.hi,
                    s.hi / r.lo
                ),
                _ => "not measured".to_string(),
            },
            pass: s.zip(r).map(|(s, r)| s.ns / r.ns <= GOAL_RATIO),
            uncertain: s
                .zip(r)
                .is_some_and(|(s, r)| s.lo / r.hi <= GOAL_RATIO && s.hi / r.lo > GOAL_RATIO),
            paired: record.paired.get(&b).map(|p| p.1),
            note: s.zip(r).filter(|(s, r)| s.ns / r.ns > GOAL_RATIO).map(|(_, r)| {
                let fixed = fixed_cost(results, "safe", "raw_ffi");
                let implied = 1.0 + fixed.max(0.0) / r.ns;
                let paired = record.paired.get(&b).map(|p| p.1);
                format!(
                    "safe/raw_ffi at {}: the safe layer's fixed cost per copy (safe − raw_ffi at \
                     4 B: {fixed:+.1} ns) is {:.3} % of this copy, an implied ratio of {implied:.4}. {}",
                    human(b),
                    100.0 * fixed.max(0.0) / r.ns,
                    match paired {
                        Some(p) if p <= GOAL_RATIO => format!(
                            "The interleaved measurement gives {p:.3}: the miss is the machine's load \
                             changing between the two criterion benchmarks, not the safe layer."
                        ),
                        Some(p) => format!(
                            "The interleaved measurement misses too ({p:.3}): profile the safe path \
                             (`benches/examples/copy_overhead.rs` under callgrind)."
                        ),
                        None => "No interleaved measurement was recorded.".to_string(),
                    }
                )
            }),
        });
    }
    let (s, r) = (get(results, g, "safe", 4), get(results, g, "raw_ffi", 4));
    out.push(Goal {
        what: "safe − raw_ffi time at 4 B".to_string(),
        target: format!("≤ {GOAL_OVERHEAD_NS:.0} ns"),
        measured: match (s, r) {
            (Some(s), Some(r)) => format!(
                "{:+.1} ns (95 % CI {:+.1} to {:+.1})",
                s.ns - r.ns,
                s.lo - r.hi,
                s.hi - r.lo
            ),
            _ => "not measured".to_string(),
        },
        pass: s.zip(r).map(|(s, r)| s.ns - r.ns <= GOAL_OVERHEAD_NS),
        uncertain: s.zip(r).is_some_and(|(s, r)| {
            s.lo - r.hi <= GOAL_OVERHEAD_NS && s.hi - r.lo > GOAL_OVERHEAD_NS
        }),
        paired: None,
        note: s
            .zip(r)
            .filter(|(s, r)| s.ns - r.ns > GOAL_OVERHEAD_NS)
            .map(|_| {
                "safe − raw_ffi at 4 B: profile both paths with `benches/examples/copy_overhead.rs` \
                 under callgrind; the difference of instruction counts per copy is the safe layer's."
                    .to_string()
            }),
    });
    for &b in FIXED_SIZES.iter().filter(|&&b| b >= 1 << 20) {
        let (r, h) = (
            get(results, g, "raw_ffi", b),
            get(results, g, "host_memcpy", b),
        );
        let applies = record.is_emulator() || record.backend_kind.is_none();
        out.push(Goal {
            what: format!("emulator raw_ffi / host_memcpy throughput at {}", human(b)),
            target: format!("≥ {GOAL_EMU_FRACTION:.2}"),
            // Throughput ratio = inverse time ratio: host_memcpy time / raw_ffi time.
            measured: match (r, h) {
                _ if !applies => "n/a: the backend is not the emulator".to_string(),
                (Some(r), Some(h)) => format!(
                    "{:.3} (95 % CI {:.3}–{:.3})",
                    h.ns / r.ns,
                    h.lo / r.hi,
                    h.hi / r.lo
                ),
                _ => "not measured".to_string(),
            },
            uncertain: applies
                && r.zip(h).is_some_and(|(r, h)| {
                    h.lo / r.hi < GOAL_EMU_FRACTION && h.hi / r.lo >= GOAL_EMU_FRACTION
                }),
            paired: if applies {
                record.paired.get(&b).map(|p| p.2)
            } else {
                None
            },
            note: r
                .zip(h)
                .filter(|(r, h)| applies && h.ns / r.ns < GOAL_EMU_FRACTION)
                .map(|(r, h)| {
                    let fixed = fixed_cost(results, "raw_ffi", "host_memcpy");
                    let implied = h.ns / (h.ns + fixed.max(0.0));
                    let paired = record.paired.get(&b).map(|p| p.2);
                    format!(
                        "raw_ffi/host_memcpy at {}: the emulator's fixed cost per call (raw_ffi − \
                         host_memcpy at 4 B: {fixed:+.1} ns) is {:.3} % of this copy, an implied \
                         ratio of {implied:.4}; the copy itself is one memcpy. {}",
                        human(b),
                        100.0 * fixed.max(0.0) / r.ns,
                        match paired {
                            Some(p) if p >= GOAL_EMU_FRACTION => format!(
                                "The interleaved measurement gives {p:.3}: the miss is the machine's \
                                 load changing between the two criterion benchmarks."
                            ),
                            Some(p) => format!(
                                "The interleaved measurement misses too ({p:.3}): the emulator's copy \
                                 is slower than a host memcpy of the same bytes; compare page sizes \
                                 of device and host buffers and profile `aclrtMemcpy`."
                            ),
                            None => "No interleaved measurement was recorded.".to_string(),
                        }
                    )
                }),
            pass: if applies {
                r.zip(h)
                    .map(|(r, h)| r.gbps() / h.gbps() >= GOAL_EMU_FRACTION)
            } else {
                None
            },
        });
    }
    out
}

/// The section showing the overlap sample's timeline: the picture is `cargo xtask trace
/// copy_compute_overlap`'s SVG, copied to docs/ when it is regenerated.
const OVERLAP_TIMELINE: &str = "## Timeline of the overlap sample\n\n\
     `samples/copy_compute_overlap` traced on the emulator (`cargo xtask trace copy_compute_overlap`, \
     then `target/trace/copy_compute_overlap.svg` copied to `docs/overlap-timeline.svg`): one lane \
     per stream of device 0, tasks as bars coloured by kind (copies, kernels, event records and \
     waits, among them the waits the scope's claim tracking queued). The serial runs use the first \
     stream; in the overlapped runs the first stream loads chunks, the second computes them and \
     the third stores them, so copies and kernels of different chunks run at once on separate \
     lanes. On the host a kernel costs several times its chunk's copy, which bounds what the \
     overlap can hide.\n\n\
     ![Timeline of copy_compute_overlap](overlap-timeline.svg)\n\n";

/// docs/benchmarks.md.
fn markdown(
    results: &Results,
    record: &Record,
    machine: &[(String, String)],
    stale: usize,
    dir: &Path,
) -> String {
    let m = |k: &str| {
        machine
            .iter()
            .find(|(key, _)| key == k)
            .map_or("unknown", |(_, v)| v.as_str())
    };
    let mut o = String::new();
    o.push_str("# Benchmarks\n\n");
    o.push_str(
        "Generated by `cargo xtask bench-report` from criterion's estimates after `cargo xtask bench`; \
         do not edit by hand. Times are criterion's typical estimate per copy (the regression slope, \
         or the mean under flat sampling); GB/s is 10⁹ bytes per second.\n\n",
    );
    let mode = record.mode.as_deref().unwrap_or("unknown");
    let _ = writeln!(o, "## Run\n");
    let _ = writeln!(
        o,
        "- Backend: **{}** — {}",
        record.backend_kind.as_deref().unwrap_or("unknown"),
        record
            .backend
            .as_deref()
            .unwrap_or("no record of the backend (ascendcl-skipped.txt missing)")
    );
    let _ = writeln!(
        o,
        "- Suite: {mode}{}",
        if mode == "quick" {
            " (`cargo xtask bench --quick`: fewer sizes, short measurements; the default suite is `cargo xtask bench`)"
        } else {
            " (`cargo xtask bench`)"
        }
    );
    if let Some(f) = &record.filter {
        let _ = writeln!(
            o,
            "- The last run was filtered (`{f}`): results of earlier runs are kept beside its own"
        );
    }
    if let Some(s) = record.seconds {
        let _ = writeln!(
            o,
            "- {} duration: {:.0} s ({:.1} min), build excluded",
            if record.filter.is_some() {
                "Filtered run"
            } else {
                "Suite"
            },
            s,
            s / 60.0
        );
    }
    let _ = writeln!(
        o,
        "- Results: {} benchmarks read from `{}`{}",
        results.len(),
        dir.strip_prefix(tools::workspace_root())
            .unwrap_or(dir)
            .display(),
        if stale > 0 {
            format!("; {stale} older results from earlier runs ignored")
        } else {
            String::new()
        }
    );
    let _ = writeln!(o, "\n## Machine\n");
    let _ = writeln!(o, "| | |\n| --- | --- |");
    let _ = writeln!(o, "| CPU | {} |", m("cpu"));
    let _ = writeln!(o, "| Cores (logical CPUs) | {} |", m("cores"));
    let _ = writeln!(o, "| Memory | {} |", m("memory"));
    let _ = writeln!(o, "| Kernel | {} |", m("kernel"));
    if m("os") != "unknown" && !m("os").is_empty() {
        let _ = writeln!(o, "| OS | {} |", m("os"));
    }
    let _ = writeln!(o, "| rustc | {} |", m("rustc"));
    let _ = writeln!(o, "| Huge pages (`vm.nr_hugepages`) | {} |", m("hugepages"));

    // Goals
    let _ = writeln!(
        o,
        "\n## Goals\n\nRead from criterion's estimates. The interval of a ratio combines the two 95 % \
         intervals (worst cases); \"within noise\" marks a verdict whose interval straddles the \
         target, which another run could flip.\n"
    );
    let _ = writeln!(
        o,
        "| goal | target | measured (criterion) | result | interleaved (paired) |\n| --- | --- | --- | --- | --- |"
    );
    let goals = goals(results, record);
    for g in &goals {
        let verdict = match (g.pass, g.uncertain) {
            (Some(true), false) => "pass",
            (Some(true), true) => "pass (within noise)",
            (Some(false), false) => "**miss**",
            (Some(false), true) => "**miss** (within noise)",
            (None, _) => "—",
        };
        let paired = g.paired.map_or("—".to_string(), |p| format!("{p:.3}"));
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {paired} |",
            g.what, g.target, g.measured, verdict
        );
    }
    o.push_str(
        "\nThe verdicts use criterion's estimates, as the goals are defined. The last column is the \
         same ratio from the suite's interleaved measurement (`benches/src/paired.rs`: rounds that \
         time a batch of each copy, in every order in turn, each batch after an untimed copy and, \
         from 1 MiB, a cache flush; the median of the within-round ratios), which load changes \
         between two criterion benchmarks do not bias.\n",
    );
    let notes: Vec<&String> = goals.iter().filter_map(|g| g.note.as_ref()).collect();
    if !notes.is_empty() {
        o.push_str("\nMisses:\n\n");
        for n in notes {
            let _ = writeln!(o, "- {n}");
        }
    }

    // Fixed IDs
    let g = "memcpy_h2d_sync";
    let _ = writeln!(
        o,
        "\n## `memcpy_h2d_sync`: safe API, raw FFI and host memcpy\n\n\
         The same buffers for the three (pinned host memory, device memory of the default policy \
         `huge_first`), allocated once outside the timed loop. `safe/raw_ffi` compares times \
         (1.00 = no overhead); `raw_ffi/host_memcpy` compares throughputs (1.00 = the copy runs \
         at host memcpy speed).\n"
    );
    let _ = writeln!(
        o,
        "| size | safe | raw_ffi | host_memcpy | safe GB/s | raw_ffi GB/s | host_memcpy GB/s | safe/raw_ffi | safe − raw_ffi | raw_ffi/host_memcpy | paired safe/raw_ffi | paired raw_ffi/host_memcpy |"
    );
    let _ = writeln!(
        o,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for &b in &FIXED_SIZES {
        let (s, r, h) = (
            get(results, g, "safe", b),
            get(results, g, "raw_ffi", b),
            get(results, g, "host_memcpy", b),
        );
        let t = |x: Option<&Estimate>| x.map_or("—".to_string(), |x| fmt_time(x.ns));
        let ratio = s
            .zip(r)
            .map_or("—".to_string(), |(s, r)| format!("{:.3}", s.ns / r.ns));
        let diff = s.zip(r).map_or("—".to_string(), |(s, r)| {
            format!("{:+.1} ns", s.ns - r.ns)
        });
        let emu = r.zip(h).map_or("—".to_string(), |(r, h)| {
            format!("{:.3}", r.gbps() / h.gbps())
        });
        let (p_sr, p_rh) = record
            .paired
            .get(&b)
            .map_or(("—".to_string(), "—".to_string()), |p| {
                (format!("{:.3}", p.1), format!("{:.3}", p.2))
            });
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {ratio} | {diff} | {emu} | {p_sr} | {p_rh} |",
            human(b),
            t(s),
            t(r),
            t(h),
            fmt_gbps(s),
            fmt_gbps(r),
            fmt_gbps(h)
        );
    }

    // Policies × directions
    let policies = measured_policies(results);
    let _ = writeln!(
        o,
        "\n## Throughput by allocation policy and direction (GB/s)\n\n\
         `aclrtMemcpy` through the raw table (`memcpy_<dir>_sync/policy/<policy>/<bytes>`), device \
         memory allocated with each policy the backend serves, pinned host memory.\n"
    );
    for dir in ["h2d", "d2h", "d2d"] {
        let group = format!("memcpy_{dir}_sync");
        let _ = writeln!(o, "### {}\n", dir.to_uppercase());
        let columns: Vec<_> = policies
            .iter()
            .map(|p| col(*p, &group, format!("policy/{p}")))
            .collect();
        if columns.is_empty() {
            o.push_str("No results.\n\n");
        } else {
            gbps_table(&mut o, results, &columns);
        }
    }
    o.push_str("![Throughput against size, one line per policy](benchmarks-throughput.svg)\n");

    // Pinned vs pageable
    let _ = writeln!(
        o,
        "\n## Pinned vs pageable host memory (GB/s)\n\n\
         Synchronous copies, device memory of the default policy; `pinned` host memory comes from \
         `aclrtMallocHost`, `pageable` from the Rust allocator.\n"
    );
    gbps_table(
        &mut o,
        results,
        &[
            col("H2D pinned", "memcpy_h2d_sync", "policy/huge_first"),
            col("H2D pageable", "memcpy_h2d_sync", "pageable"),
            col("D2H pinned", "memcpy_d2h_sync", "policy/huge_first"),
            col("D2H pageable", "memcpy_d2h_sync", "pageable"),
            col("H2H pinned", "memcpy_h2h_sync", "pinned"),
            col("H2H pageable", "memcpy_h2h_sync", "pageable"),
        ],
    );

    // Sync vs async
    let _ = writeln!(
        o,
        "## Sync vs async (GB/s)\n\n\
         `aclrtMemcpy` against `aclrtMemcpyAsync` followed by `aclrtSynchronizeStream`, pinned host \
         memory, default policy.\n"
    );
    let mut cols = Vec::new();
    for dir in ["h2d", "d2h", "d2d", "h2h"] {
        let sync_fn = if dir == "h2h" {
            "pinned"
        } else {
            "policy/huge_first"
        };
        cols.push(col(
            format!("{} sync", dir.to_uppercase()),
            &format!("memcpy_{dir}_sync"),
            sync_fn,
        ));
        cols.push(col(
            format!("{} async", dir.to_uppercase()),
            &format!("memcpy_{dir}_async"),
            "pinned",
        ));
    }
    gbps_table(&mut o, results, &cols);

    o.push_str(OVERLAP_TIMELINE);

    // Skips
    let _ = writeln!(o, "## Skipped\n");
    if record.skips.is_empty() {
        o.push_str("Nothing was skipped: the backend served every policy, direction and host memory kind.\n");
    } else {
        o.push_str("Combinations the backend refused; they are not in the tables above.\n\n");
        o.push_str("| benchmarks | reason |\n| --- | --- |\n");
        for (id, why) in &record.skips {
            let _ = writeln!(o, "| `{id}` | {} |", why.replace('|', "\\|"));
        }
    }
    let _ = writeln!(
        o,
        "\n## Benchmark IDs\n\n\
         | group | functions |\n| --- | --- |\n\
         | `memcpy_h2d_sync` | `safe`, `raw_ffi`, `host_memcpy` (fixed sizes 4 B … 64 MiB), `policy/<policy>`, `pageable` |\n\
         | `memcpy_d2h_sync` | `policy/<policy>`, `pageable` |\n\
         | `memcpy_d2d_sync` | `policy/<policy>` |\n\
         | `memcpy_h2h_sync` | `pinned`, `pageable` |\n\
         | `memcpy_{{h2d,d2h,d2d,h2h}}_async` | `pinned` |\n\n\
         Each ID ends in the size in bytes. Criterion's HTML reports are in `{}/report/index.html`.",
        dir.strip_prefix(tools::workspace_root())
            .unwrap_or(dir)
            .display()
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed-group estimates with a ±0.1 % interval.
    fn fixed(ids: &[(&str, u64, f64)]) -> Results {
        ids.iter()
            .map(|&(function, bytes, ns)| {
                let e = Estimate {
                    group: "memcpy_h2d_sync".to_string(),
                    function: function.to_string(),
                    bytes,
                    ns,
                    lo: ns * 0.999,
                    hi: ns * 1.001,
                };
                ((e.group.clone(), e.function.clone(), bytes), e)
            })
            .collect()
    }

    fn emulator_record() -> Record {
        let mut record = Record {
            backend_kind: Some("emulator".to_string()),
            ..Record::default()
        };
        record.paired.insert(1 << 20, (12, 1.0, 1.0));
        record
    }

    #[test]
    fn goals_pass_miss_and_say_why() {
        let r = fixed(&[
            ("safe", 4, 21.5),
            ("raw_ffi", 4, 20.9),
            ("host_memcpy", 4, 1.5),
            ("safe", 65536, 531.6),
            ("raw_ffi", 65536, 526.2),
            ("host_memcpy", 65536, 515.4),
            ("safe", 1 << 20, 20_000.0),
            ("raw_ffi", 1 << 20, 18_000.0),
            ("host_memcpy", 1 << 20, 18_500.0),
        ]);
        let g = goals(&r, &emulator_record());
        let by = |what: &str| g.iter().find(|g| g.what == what).unwrap();
        let kib64 = by("safe / raw_ffi time at 64 KiB");
        assert_eq!((kib64.pass, kib64.uncertain), (Some(true), false));
        assert_eq!(kib64.note, None);
        // A miss whose interleaved ratio passes is put down to the machine's load.
        let mib = by("safe / raw_ffi time at 1 MiB");
        assert_eq!((mib.pass, mib.paired), (Some(false), Some(1.0)));
        assert!(mib.note.as_ref().unwrap().contains("the machine's load"));
        let unmeasured = by("safe / raw_ffi time at 16 MiB");
        assert_eq!(
            (unmeasured.pass, unmeasured.measured.as_str()),
            (None, "not measured")
        );
        let small = by("safe − raw_ffi time at 4 B");
        assert_eq!(small.pass, Some(true));
        assert!(small.measured.starts_with("+0.6 ns"), "{}", small.measured);
        let emu = by("emulator raw_ffi / host_memcpy throughput at 1 MiB");
        assert_eq!(emu.pass, Some(true));
        // Off the emulator, the emulator goals do not apply.
        let cann = Record {
            backend_kind: Some("cann".to_string()),
            ..Record::default()
        };
        let g = goals(&r, &cann);
        let emu = g
            .iter()
            .find(|g| g.what.starts_with("emulator raw_ffi"))
            .unwrap();
        assert_eq!(emu.pass, None);
        assert!(emu.measured.starts_with("n/a"));
    }

    #[test]
    fn the_report_has_every_section_and_the_fixed_table() {
        let r = fixed(&[("safe", 4, 21.5), ("raw_ffi", 4, 20.9)]);
        let md = markdown(&r, &emulator_record(), &[], 0, Path::new("criterion"));
        for section in [
            "# Benchmarks",
            "## Run",
            "## Machine",
            "## Goals",
            "## `memcpy_h2d_sync`",
            "## Throughput by allocation policy",
            "## Pinned vs pageable",
            "## Sync vs async",
            "## Timeline of the overlap sample",
            "## Skipped",
            "## Benchmark IDs",
        ] {
            assert!(md.contains(section), "{section} missing");
        }
        assert!(md.contains("| 4 B | 21.5 ns | 20.9 ns | — |"), "{md}");
        assert!(md.contains("| 1.029 | +0.6 ns |"), "{md}");
        assert_eq!(fmt_time(17_740.0), "17.74 µs");
        assert_eq!(fmt_time(3.08e6), "3.08 ms");
    }
}
