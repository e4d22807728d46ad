//! What a run leaves behind, read back: criterion's estimates (`<bench>/new/benchmark.json` and
//! `estimates.json`, parsed with `serde_json`), the suite's record (`ascendcl-skipped.txt`:
//! backend, mode, skips, paired ratios) and the machine record.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The allocation policies in report order (names as in benchmark IDs).
pub(super) const POLICIES: [&str; 8] = [
    "huge_first",
    "huge_only",
    "normal_only",
    "huge1g_only",
    "huge_first_p2p",
    "huge_only_p2p",
    "normal_only_p2p",
    "huge1g_only_p2p",
];

/// One benchmark's estimate.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Estimate {
    pub(super) group: String,
    pub(super) function: String,
    pub(super) bytes: u64,
    /// Criterion's typical time per iteration in ns (the slope when it has one, else the mean).
    pub(super) ns: f64,
    /// The lower end of the 95 % confidence interval of `ns`.
    pub(super) lo: f64,
    /// The upper end of the 95 % confidence interval of `ns`.
    pub(super) hi: f64,
}

impl Estimate {
    /// Throughput in GB/s (10^9 bytes per second), which is bytes per nanosecond.
    pub(super) fn gbps(&self) -> f64 {
        self.bytes as f64 / self.ns
    }
}

/// Every estimate, keyed by (group, function, bytes).
pub(super) type Results = BTreeMap<(String, String, u64), Estimate>;

/// The estimate of `group/function/bytes`, if measured.
pub(super) fn get<'r>(
    r: &'r Results,
    group: &str,
    function: &str,
    bytes: u64,
) -> Option<&'r Estimate> {
    r.get(&(group.to_string(), function.to_string(), bytes))
}

/// The (bytes, GB/s) points of `group/function`, by size.
pub(super) fn points(results: &Results, group: &str, function: &str) -> Vec<(u64, f64)> {
    results
        .values()
        .filter(|r| r.group == group && r.function == function)
        .map(|r| (r.bytes, r.gbps()))
        .collect()
}

/// Every size that some function of `groups` was measured at, ascending.
pub(super) fn sizes_of(results: &Results, groups: &[&str]) -> Vec<u64> {
    let mut s: Vec<u64> = results
        .values()
        .filter(|r| groups.contains(&r.group.as_str()))
        .map(|r| r.bytes)
        .collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// The policies that have at least one result, in report order.
pub(super) fn measured_policies(results: &Results) -> Vec<&'static str> {
    POLICIES
        .iter()
        .copied()
        .filter(|p| {
            let f = format!("policy/{p}");
            results.values().any(|r| r.function == f)
        })
        .collect()
}

/// Reads every `<bench>/new/{benchmark,estimates}.json` under `dir`, ignoring results older than
/// `since` (left over from earlier runs); returns the results and how many were ignored.
pub(super) fn load(dir: &Path, since: Option<u64>) -> Result<(Results, usize), String> {
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
        let read = |p: &Path| -> Result<Value, String> {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        };
        if let Some(r) = estimate(&read(&new.join("benchmark.json"))?, &read(&est_path)?) {
            results.insert((r.group.clone(), r.function.clone(), r.bytes), r);
        }
    }
    Ok((results, stale))
}

/// One benchmark from criterion's `benchmark.json` (its ID and byte throughput) and
/// `estimates.json` (the slope, else the mean, with its interval); `None` when either lacks a
/// field the report needs.
fn estimate(benchmark: &Value, estimates: &Value) -> Option<Estimate> {
    let group = benchmark["group_id"].as_str()?;
    let function = benchmark["function_id"].as_str()?;
    let throughput = &benchmark["throughput"];
    let bytes = throughput["Bytes"]
        .as_u64()
        .or_else(|| throughput["BytesDecimal"].as_u64())
        .or_else(|| benchmark["value_str"].as_str()?.parse().ok())?;
    // (point, lower, upper) of one estimate; a missing bound is the point.
    let typical = |k: &str| {
        let e = &estimates[k];
        let p = e["point_estimate"].as_f64()?;
        let bound = |b: &str| e["confidence_interval"][b].as_f64().unwrap_or(p);
        Some((p, bound("lower_bound"), bound("upper_bound")))
    };
    let (ns, lo, hi) = typical("slope").or_else(|| typical("mean"))?;
    Some(Estimate {
        group: group.to_string(),
        function: function.to_string(),
        bytes,
        ns,
        lo,
        hi,
    })
}

/// Every `new` directory under `dir` that holds both files, skipping criterion's `report` and
/// `base` directories.
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

/// What the bench binary recorded: backend, mode, start, duration and skips.
#[derive(Debug, Default)]
pub(super) struct Record {
    pub(super) backend_kind: Option<String>,
    pub(super) backend: Option<String>,
    pub(super) mode: Option<String>,
    pub(super) started: Option<u64>,
    pub(super) seconds: Option<f64>,
    pub(super) skips: Vec<(String, String)>,
    /// The criterion filters of the last run, when it was filtered.
    pub(super) filter: Option<String>,
    /// Interleaved paired ratios per size: (rounds, safe/raw_ffi time, host_memcpy/raw_ffi time).
    pub(super) paired: BTreeMap<u64, (u64, f64, f64)>,
}

impl Record {
    /// Reads the record at `path`; an empty record when there is none.
    pub(super) fn read(path: &Path) -> Record {
        std::fs::read_to_string(path).map_or_else(|_| Record::default(), |t| Record::parse(&t))
    }

    /// Parses the record's tab-separated lines (`#` starts a comment line).
    fn parse(text: &str) -> Record {
        let mut r = Record::default();
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

    /// Whether the suite ran on the host emulator.
    pub(super) fn is_emulator(&self) -> bool {
        self.backend_kind.as_deref() == Some("emulator")
    }
}

/// The `key<TAB>value` lines of a machine record.
pub(super) fn parse_machine(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn reads_criterion_files() {
        let bench = json(
            r#"{"group_id":"memcpy_h2d_sync","function_id":"policy/huge_first","value_str":"4",
                "throughput":{"Bytes":4},"full_id":"memcpy_h2d_sync/policy/huge_first/4"}"#,
        );
        let est = json(
            r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":20.0,
                "upper_bound":22.0},"point_estimate":21.0,"standard_error":0.5},
                "slope":{"confidence_interval":{"confidence_level":0.95,"lower_bound":19.5,
                "upper_bound":20.5},"point_estimate":20.0,"standard_error":0.2}}"#,
        );
        let e = estimate(&bench, &est).unwrap();
        assert_eq!(
            (e.group.as_str(), e.function.as_str(), e.bytes),
            ("memcpy_h2d_sync", "policy/huge_first", 4)
        );
        assert_eq!((e.ns, e.lo, e.hi), (20.0, 19.5, 20.5));
        assert_eq!(e.gbps(), 0.2);
        // Flat sampling has no slope: the mean is the estimate.
        let flat = json(r#"{"mean":{"point_estimate":8.0,"confidence_interval":{}},"slope":null}"#);
        let e = estimate(&bench, &flat).unwrap();
        assert_eq!((e.ns, e.lo, e.hi), (8.0, 8.0, 8.0));
        // Without a throughput the size comes from the ID's value; without an ID, nothing.
        let by_value = json(r#"{"group_id":"g","function_id":"f","value_str":"65536"}"#);
        assert_eq!(estimate(&by_value, &est).unwrap().bytes, 65536);
        assert_eq!(estimate(&json(r#"{"group_id":"g"}"#), &est), None);
    }

    #[test]
    fn reads_the_suite_record() {
        let r = Record::parse(
            "# comment\nbackend\temulator\tascendcl-emu host emulator\nmode\tquick\n\
             started\t1700000000\nfinished\t1700000060\t59.5\n\
             skip\tmemcpy_h2d_sync/policy/huge_only/4\tno huge pages\n\
             paired\t65536\t40\t1.0\t1.0\t1.0\t0.999\t0.973\n",
        );
        assert!(r.is_emulator());
        assert_eq!(r.mode.as_deref(), Some("quick"));
        assert_eq!((r.started, r.seconds), (Some(1_700_000_000), Some(59.5)));
        assert_eq!(r.skips.len(), 1);
        assert_eq!(r.paired.get(&65536), Some(&(40, 0.999, 0.973)));
        assert_eq!(
            parse_machine("cpu\tAMD EPYC\ncores\t2\n")[1],
            ("cores".to_string(), "2".to_string())
        );
    }
}
