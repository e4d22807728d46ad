//! `cargo xtask bench` and `bench-report`: the criterion suite and docs/benchmarks.md.
//!
//! `bench [--quick] [--report] [-- CRITERION ARGS]` runs `cargo bench -p ascendcl-benches` (the
//! quick suite sets `ASCENDCL_BENCH_QUICK=1`) and records the machine it ran on next to criterion's
//! results. `bench-report [--criterion DIR]` reads criterion's `new/benchmark.json` and
//! `new/estimates.json` files (small JSON, parsed here by hand), the suite's record
//! `ascendcl-skipped.txt` and the machine record, and writes `docs/benchmarks.md` and the plot
//! `docs/benchmarks-throughput.svg`.

use crate::tools;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The suite's record (written by the bench binary).
const RECORD: &str = "ascendcl-skipped.txt";
/// The machine record (written by `cargo xtask bench`).
const MACHINE: &str = "ascendcl-machine.txt";
/// The fixed sizes of `memcpy_h2d_sync/{safe,raw_ffi,host_memcpy}`.
const FIXED_SIZES: [u64; 6] = [4, 4096, 65536, 1 << 20, 16 << 20, 64 << 20];
/// Goal: safe/raw_ffi time at 64 KiB and above.
const GOAL_RATIO: f64 = 1.02;
/// Goal: safe − raw_ffi at 4 B, in nanoseconds.
const GOAL_OVERHEAD_NS: f64 = 25.0;
/// Goal: raw_ffi throughput over host_memcpy throughput at 1 MiB and above, on the emulator.
const GOAL_EMU_FRACTION: f64 = 0.90;

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
        report(&[])
    } else {
        tools::note("run `cargo xtask bench-report` to write docs/benchmarks.md");
        Ok(())
    }
}

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
    let (results, stale) = load_results(&dir, since)?;
    if results.is_empty() {
        return Err(format!(
            "no criterion results under {} (run `cargo xtask bench` first)",
            dir.display()
        ));
    }
    let machine = std::fs::read_to_string(dir.join(MACHINE))
        .ok()
        .map(|s| parse_machine(&s))
        .unwrap_or_else(|| parse_machine(&machine_record()));
    let docs = tools::workspace_root().join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| format!("cannot create docs/: {e}"))?;
    let svg = plot(&results);
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

/// Criterion's output directory as criterion picks it: `--criterion`, `CRITERION_HOME`, else
/// `<target dir>/criterion`.
fn criterion_dir(explicit: Option<PathBuf>) -> PathBuf {
    explicit
        .or_else(|| std::env::var_os("CRITERION_HOME").map(PathBuf::from))
        .unwrap_or_else(|| tools::target_dir().join("criterion"))
}

// ---------------------------------------------------------------------------------------------
// Results

/// One benchmark's estimate.
#[derive(Debug, Clone)]
struct Result1 {
    group: String,
    function: String,
    bytes: u64,
    /// Criterion's typical time per iteration in ns (the slope when it has one, else the mean).
    ns: f64,
    /// The 95 % confidence interval of `ns`.
    lo: f64,
    /// The 95 % confidence interval of `ns`.
    hi: f64,
}

impl Result1 {
    /// Throughput in GB/s (10^9 bytes per second), which is bytes per nanosecond.
    fn gbps(&self) -> f64 {
        self.bytes as f64 / self.ns
    }
}

/// Every result, keyed by (group, function, bytes).
type Results = BTreeMap<(String, String, u64), Result1>;

fn get<'r>(r: &'r Results, group: &str, function: &str, bytes: u64) -> Option<&'r Result1> {
    r.get(&(group.to_string(), function.to_string(), bytes))
}

/// Reads every `<bench>/new/{benchmark,estimates}.json` under `dir`, ignoring results older than
/// `since` (left over from earlier runs); returns the results and how many were ignored.
fn load_results(dir: &Path, since: Option<u64>) -> Result<(Results, usize), String> {
    let mut found = Vec::new();
    walk(dir, &mut found);
    let mut results = Results::new();
    let mut stale = 0;
    for new in found {
        let est_path = new.join("estimates.json");
        if let (Some(since), Ok(meta)) = (since, std::fs::metadata(&est_path)) {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            if mtime + 1 < since {
                stale += 1;
                continue;
            }
        }
        let read = |p: &Path| -> Result<Json, String> {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Json::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
        };
        let bench = read(&new.join("benchmark.json"))?;
        let est = read(&est_path)?;
        let group = bench.get("group_id").and_then(Json::as_str);
        let function = bench.get("function_id").and_then(Json::as_str);
        let bytes = bench
            .get("throughput")
            .and_then(|t| t.get("Bytes").or_else(|| t.get("BytesDecimal")))
            .and_then(Json::as_f64)
            .or_else(|| {
                bench
                    .get("value_str")
                    .and_then(Json::as_str)
                    .and_then(|v| v.parse().ok())
            });
        // (point, lower, upper) of one estimate.
        let estimate = |k: &str| {
            let e = est.get(k)?;
            let ci = e.get("confidence_interval");
            let bound = |b: &str| ci.and_then(|c| c.get(b)).and_then(Json::as_f64);
            let p = e.get("point_estimate").and_then(Json::as_f64)?;
            Some((
                p,
                bound("lower_bound").unwrap_or(p),
                bound("upper_bound").unwrap_or(p),
            ))
        };
        let typical = estimate("slope").or_else(|| estimate("mean"));
        if let (Some(group), Some(function), Some(bytes), Some((ns, lo, hi))) =
            (group, function, bytes, typical)
        {
            let r = Result1 {
                group: group.to_string(),
                function: function.to_string(),
                bytes: bytes as u64,
                ns,
                lo,
                hi,
            };
            results.insert((r.group.clone(), r.function.clone(), r.bytes), r);
        }
    }
    Ok((results, stale))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        if p.file_name().is_some_and(|n| n == "new") {
            if p.join("benchmark.json").is_file() && p.join("estimates.json").is_file() {
                out.push(p);
            }
        } else if p.file_name().is_some_and(|n| n != "report" && n != "base") {
            walk(&p, out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The suite's record and the machine

/// What the bench binary recorded: backend, mode, start, duration and skips.
#[derive(Debug, Default)]
struct Record {
    backend_kind: Option<String>,
    backend: Option<String>,
    mode: Option<String>,
    started: Option<u64>,
    seconds: Option<f64>,
    skips: Vec<(String, String)>,
    /// The criterion filters of the last run, when it was filtered.
    filter: Option<String>,
    /// Interleaved paired ratios per size: (rounds, safe/raw_ffi time, host_memcpy/raw_ffi time).
    paired: BTreeMap<u64, (u64, f64, f64)>,
}

impl Record {
    fn read(path: &Path) -> Record {
        let mut r = Record::default();
        let Ok(text) = std::fs::read_to_string(path) else {
            return r;
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["backend", kind, desc, ..] => {
                    r.backend_kind = Some(kind.to_string());
                    r.backend = Some(desc.to_string());
                }
                ["mode", m, ..] => r.mode = Some(m.to_string()),
                ["started", t, ..] => r.started = t.parse().ok(),
                ["filter", f, ..] => r.filter = Some(f.to_string()),
                ["finished", _, s, ..] => r.seconds = s.parse().ok(),
                ["skip", id, why, ..] => r.skips.push((id.to_string(), why.to_string())),
                ["paired", bytes, rounds, _, _, _, sr, hr, ..] => {
                    if let (Ok(b), Ok(n), Ok(sr), Ok(hr)) =
                        (bytes.parse(), rounds.parse(), sr.parse(), hr.parse())
                    {
                        r.paired.insert(b, (n, sr, hr));
                    }
                }
                _ => {}
            }
        }
        r
    }

    fn is_emulator(&self) -> bool {
        self.backend_kind.as_deref() == Some("emulator")
    }
}

/// `key<TAB>value` lines describing this machine.
fn machine_record() -> String {
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

fn parse_machine(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The report

/// The policies in report order (names as in benchmark IDs).
const POLICIES: [&str; 8] = [
    "huge_first",
    "huge_only",
    "normal_only",
    "huge1g_only",
    "huge_first_p2p",
    "huge_only_p2p",
    "normal_only_p2p",
    "huge1g_only_p2p",
];

fn human(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} B")
    }
}

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

fn fmt_gbps(r: Option<&Result1>) -> String {
    r.map_or("—".to_string(), |r| {
        let g = r.gbps();
        if g < 0.1 {
            format!("{g:.4}")
        } else {
            format!("{g:.2}")
        }
    })
}

/// Every size that some function of `group` was measured at.
fn sizes_of(results: &Results, groups: &[&str]) -> Vec<u64> {
    let mut s: Vec<u64> = results
        .values()
        .filter(|r| groups.contains(&r.group.as_str()))
        .map(|r| r.bytes)
        .collect();
    s.sort_unstable();
    s.dedup();
    s
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

fn col(
    label: impl Into<String>,
    group: &str,
    function: impl Into<String>,
) -> (String, String, String) {
    (label.into(), group.to_string(), function.into())
}

/// The policies that have at least one result.
fn measured_policies(results: &Results) -> Vec<&'static str> {
    POLICIES
        .iter()
        .copied()
        .filter(|p| {
            let f = format!("policy/{p}");
            results.values().any(|r| r.function == f)
        })
        .collect()
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
        let t = |x: Option<&Result1>| x.map_or("—".to_string(), |x| fmt_time(x.ns));
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

// ---------------------------------------------------------------------------------------------
// The plot, written by hand

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

/// One line of a panel.
struct Series {
    name: String,
    color: &'static str,
    dash: &'static str,
    points: Vec<(u64, f64)>,
}

/// An SVG with one panel per direction (H2D, D2H, D2D): throughput against size on a log2 axis,
/// one line per policy, plus the safe API and the host memcpy baseline on the H2D panel.
fn plot(results: &Results) -> String {
    let policies = measured_policies(results);
    let mut panels = Vec::new();
    for dir in ["h2d", "d2h", "d2d"] {
        let group = format!("memcpy_{dir}_sync");
        let mut series: Vec<Series> = policies
            .iter()
            .enumerate()
            .map(|(i, p)| Series {
                name: format!("policy {p}"),
                color: COLORS[POLICIES.iter().position(|q| q == p).unwrap_or(i) % COLORS.len()],
                dash: "",
                points: points(results, &group, &format!("policy/{p}")),
            })
            .collect();
        if dir == "h2d" {
            series.push(Series {
                name: "safe API (huge_first)".to_string(),
                color: "#444444",
                dash: "2,3",
                points: points(results, &group, "safe"),
            });
            series.push(Series {
                name: "host memcpy".to_string(),
                color: "#000000",
                dash: "7,4",
                points: points(results, &group, "host_memcpy"),
            });
        }
        series.retain(|s| !s.points.is_empty());
        panels.push((format!("{} (sync)", dir.to_uppercase()), series));
    }
    let (pw, ph) = (420.0, 300.0);
    let (ml, mr, mt, mb) = (58.0, 16.0, 46.0, 46.0);
    let legend_h = 18.0 * (policies.len() + 2) as f64 + 16.0;
    let width = panels.len() as f64 * (pw + ml + mr) + 40.0;
    let height = mt + ph + mb + legend_h;
    let all: Vec<(u64, f64)> = panels
        .iter()
        .flat_map(|(_, s)| s.iter().flat_map(|s| s.points.iter().copied()))
        .collect();
    let xmin = all.iter().map(|p| p.0).min().unwrap_or(4).max(1) as f64;
    let xmax = all.iter().map(|p| p.0).max().unwrap_or(1 << 28).max(2) as f64;
    let (lx0, lx1) = (
        xmin.log2().floor(),
        xmax.log2().ceil().max(xmin.log2().floor() + 1.0),
    );
    let ymax_raw = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let ystep = nice_step(ymax_raw / 5.0);
    let ymax = ((ymax_raw / ystep).ceil() * ystep).max(ystep);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="16" font-size="13" font-weight="bold">Copy throughput (GB/s) against size — one line per allocation policy</text>"#
    );
    for (i, (title, series)) in panels.iter().enumerate() {
        let x0 = 10.0 + i as f64 * (pw + ml + mr) + ml;
        let y0 = mt;
        let xs = |b: f64| x0 + (b.log2() - lx0) / (lx1 - lx0) * pw;
        let ys = |g: f64| y0 + ph - g / ymax * ph;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">{title}</text>"#,
            x0 + pw / 2.0,
            y0 - 6.0
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0:.1}" y="{y0:.1}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="#888"/>"##
        );
        // y grid and labels
        let mut g = 0.0;
        while g <= ymax + ystep / 2.0 {
            let y = ys(g);
            let _ = writeln!(
                s,
                r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 + pw,
                x0 - 4.0,
                y + 4.0,
                trim_num(g)
            );
            g += ystep;
        }
        // x grid every 4 powers of two, labels
        let mut e = lx0 as i32;
        while e as f64 <= lx1 {
            let x = xs(2f64.powi(e));
            let major = e % 4 == 0 || e == lx0 as i32;
            if major {
                let _ = writeln!(
                    s,
                    r##"<line x1="{x:.1}" y1="{y0:.1}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                    y0 + ph,
                    y0 + ph + 14.0,
                    human(1u64 << e)
                );
            }
            e += 1;
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">bytes per copy (log scale)</text>"#,
            x0 + pw / 2.0,
            y0 + ph + 32.0
        );
        if i == 0 {
            let _ = writeln!(
                s,
                r#"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">GB/s</text>"#,
                x0 - 42.0,
                y0 + ph / 2.0
            );
        }
        for (k, se) in series.iter().enumerate() {
            let pts: Vec<String> = se
                .points
                .iter()
                .map(|&(b, g)| format!("{:.1},{:.1}", xs(b as f64), ys(g)))
                .collect();
            let dash = if se.dash.is_empty() {
                String::new()
            } else {
                format!(r#" stroke-dasharray="{}""#, se.dash)
            };
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.8"{dash}/>"#,
                pts.join(" "),
                se.color
            );
            for &(b, g) in &se.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"><title>{}: {} at {:.3} GB/s</title></circle>"#,
                    xs(b as f64),
                    ys(g),
                    se.color,
                    se.name,
                    human(b),
                    g
                );
            }
            // legend under the panel
            let ly = y0 + ph + mb + 8.0 + k as f64 * 18.0;
            let _ = writeln!(
                s,
                r#"<line x1="{x0:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
                x0 + 24.0,
                se.color,
                x0 + 30.0,
                ly + 4.0,
                se.name
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn points(results: &Results, group: &str, function: &str) -> Vec<(u64, f64)> {
    results
        .values()
        .filter(|r| r.group == group && r.function == function)
        .map(|r| (r.bytes, r.gbps()))
        .collect()
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

fn trim_num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

// ---------------------------------------------------------------------------------------------
// A small JSON reader (criterion's files are a few hundred bytes; no serde in the xtask)

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing characters at byte {}", p.i));
        }
        Ok(v)
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.eat("}") {
                    return Ok(Json::Obj(fields));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.ws();
                    if !self.eat(":") {
                        return self.err("expected ':'");
                    }
                    let v = self.value()?;
                    fields.push((k, v));
                    self.ws();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("}") {
                        return Ok(Json::Obj(fields));
                    }
                    return self.err("expected ',' or '}'");
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat("]") {
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    if self.eat(",") {
                        continue;
                    }
                    if self.eat("]") {
                        return Ok(Json::Arr(items));
                    }
                    return self.err("expected ',' or ']'");
                }
            }
            Some(b'"') => self.string().map(Json::Str),
            Some(_) if self.eat("null") => Ok(Json::Null),
            Some(_) if self.eat("true") => Ok(Json::Bool(true)),
            Some(_) if self.eat("false") => Ok(Json::Bool(false)),
            Some(_) => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i])
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .map(Json::Num)
                    .map_or_else(|| self.err("bad value"), Ok)
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        if !self.eat("\"") {
            return self.err("expected a string");
        }
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return self.err("unterminated string");
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self
                                .s
                                .get(self.i..self.i + 4)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            self.i += 4;
                            let ch = hex.and_then(char::from_u32).unwrap_or('\u{fffd}');
                            let mut buf = [0; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8(out)
            .map_err(|_| format!("invalid UTF-8 in a string before byte {}", self.i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_criterion_files() {
        let b = Json::parse(
            r#"{"group_id":"memcpy_h2d_sync","function_id":"policy/huge_first","value_str":"4","throughput":{"Bytes":4},"x":[1,-2.5e3,null,true]}"#,
        )
        .unwrap();
        assert_eq!(
            b.get("function_id").and_then(Json::as_str),
            Some("policy/huge_first")
        );
        assert_eq!(
            b.get("throughput")
                .and_then(|t| t.get("Bytes"))
                .and_then(Json::as_f64),
            Some(4.0)
        );
        assert_eq!(
            b.get("x"),
            Some(&Json::Arr(vec![
                Json::Num(1.0),
                Json::Num(-2500.0),
                Json::Null,
                Json::Bool(true)
            ]))
        );
        assert!(Json::parse("{\"a\":}").is_err());
        assert_eq!(
            Json::parse(r#""a\"b\u00e9""#).unwrap(),
            Json::Str("a\"bé".to_string())
        );
    }

    #[test]
    fn steps_and_sizes() {
        assert_eq!(nice_step(3.3), 5.0);
        assert_eq!(nice_step(0.12), 0.2);
        assert_eq!(human(4), "4 B");
        assert_eq!(human(65536), "64 KiB");
        assert_eq!(human(256 << 20), "256 MiB");
    }
}
