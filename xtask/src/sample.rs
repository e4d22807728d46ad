//! `cargo xtask sample`: builds and runs a sample the way its reference `run.sh` does.
//!
//! The steps of the CANN runtime's `run.sh`, one for one:
//!
//! | run.sh | here |
//! |---|---|
//! | `source setenv.bash`; `echo "[INFO]: Current compile soc version is ${SOC_VERSION}"` | the same line, with the SoC the kernels are built for (or the emulator) |
//! | `cmake -B build …; cmake --build build; cmake --install build` | cmake provisioned by `tools::cmake()`, then `cargo build -p <sample>` (the kernels' build script drives CMake) |
//! | `./build/main \| tee output_msg.txt` | the binary run from the sample's directory, its stdout copied to the terminal and to `samples/<name>/output_msg.txt` as it arrives; stderr passes through |
//! | `grep "Source data:" … \| awk -F':' …` twice | the first line holding each marker, the text between its first and second `:`, trimmed |
//! | `[SUCCESS] …` / `[FAILURE] …`, then `exit 1` on failure | the same lines and the same exit code 1 |
//!
//! Stricter than run.sh: a value that is missing (run.sh would compare two empty strings and
//! report success) or a sample that exits non-zero is a failure, and the `[FAILURE]` line then
//! says what happened instead of comparing empty values. `--help` (or `-h`) among the sample's
//! arguments only runs the sample and passes its usage and exit status through.
//!
//! Samples that check their own results end with their own `[SUCCESS] ...` or `[FAILURE] ...`
//! line (as CANN's programs or their run.sh print it). The xtask does not repeat it: it adds one
//! line of its own, `==> verdict: pass (the sample's [SUCCESS] line)` or `==> verdict: FAIL (why)`.
//! Such a run passes only with a last `[SUCCESS]` line, no `[FAILURE]` line and exit status 0,
//! and, when it also prints `Source data:` and `Destination data:` (the two-process memory
//! samples), with the two values equal.
//!
//! `cargo xtask sample --all` builds every sample once, runs each as above and prints a table of
//! sample, verdict and time; it fails when any sample does.

use crate::tools;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const USAGE: &str = "usage: cargo xtask sample <name> [-- ARGS...] | cargo xtask sample --list | cargo xtask sample --all";

/// File the sample's output is copied to, in the sample's directory (as run.sh writes it in its own).
pub const OUTPUT_FILE: &str = "output_msg.txt";

/// A sample under `samples/`: its directory name (also its package and binary name) and description.
struct Sample {
    name: String,
    dir: PathBuf,
    description: String,
}

fn samples() -> Result<Vec<Sample>, String> {
    let dir = tools::workspace_root().join("samples");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(manifest) = std::fs::read_to_string(path.join("Cargo.toml")) else {
            continue;
        };
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // A sample is a program; the crate the samples share (`samples/common`) is a library.
        if !manifest.contains("[[bin]]") {
            continue;
        }
        let description = manifest
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "description").then(|| v.trim().trim_matches('"').to_string())
            })
            .unwrap_or_default();
        out.push(Sample {
            name: name.to_string(),
            dir: path.clone(),
            description,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Runs `cargo xtask sample ...`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (ours, theirs) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let all = samples()?;
    match ours {
        [flag] if flag == "--list" => {
            let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
            for s in &all {
                println!("{:<width$} {}", s.name, s.description);
            }
            Ok(())
        }
        [flag] if flag == "--all" && theirs.is_empty() => run_all(&all),
        [name] if !name.starts_with('-') => {
            let sample = all.iter().find(|s| &s.name == name).ok_or_else(|| {
                let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
                format!("no sample {name:?}; samples: {}", names.join(", "))
            })?;
            report_soc();
            build(&[sample])?;
            run_sample(sample, theirs)
        }
        _ => Err(USAGE.to_string()),
    }
}

/// `cargo xtask trace SAMPLE [-- ARGS]`: builds the sample, runs it on the emulator with
/// `ASCENDCL_EMU_TRACE` set, and draws the trace (`crate::trace`).
pub fn trace(args: &[String]) -> Result<(), String> {
    let (ours, theirs) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let [name] = ours else {
        return Err("usage: cargo xtask trace SAMPLE [-- ARGS...]".to_string());
    };
    let all = samples()?;
    let sample = all.iter().find(|s| &s.name == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        format!("no sample {name:?}; samples: {}", names.join(", "))
    })?;
    build(&[sample])?;
    let (json, svg) = crate::trace::paths(name);
    if let Some(dir) = json.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let _ = std::fs::remove_file(&json);
    let binary = tools::target_dir().join("debug").join(&sample.name);
    tools::step(&format!(
        "running {} on the emulator with ASCENDCL_EMU_TRACE={}",
        sample.name,
        json.display()
    ));
    let status = Command::new(&binary)
        .args(theirs)
        .current_dir(&sample.dir)
        .env("ASCENDCL_BACKEND", "emulator")
        .env("ASCENDCL_EMU_TRACE", &json)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    if !status.success() {
        return Err(format!("{} exited with {status}", sample.name));
    }
    tools::step(&format!("drawing {}", svg.display()));
    let summary = crate::trace::render(name, &json, &svg)?;
    print!("{summary}");
    println!(
        "trace: {}
timeline: {}",
        json.display(),
        svg.display()
    );
    Ok(())
}

/// run.sh's first line: the SoC the kernels are compiled for.
fn report_soc() {
    println!(
        "[INFO]: Current compile soc version is {}",
        crate::env::compile_soc_version()
    );
}

/// run.sh's cmake configure, build and install: here cargo builds the samples. Kernels built for
/// the host need no cmake; for the NPU their build scripts drive CANN's CMake, with the cmake
/// this provisions when a CANN install is there.
fn build(samples: &[&Sample]) -> Result<(), String> {
    let mut cargo = tools::cargo();
    if ascendcl_sdk::SearchEnv::from_process()
        .find_install()
        .is_ok()
    {
        tools::step("CANN found: locating cmake for the NPU kernels (provisioning it if absent)");
        cargo.env("CMAKE", tools::cmake()?);
    }
    let names: Vec<&str> = samples.iter().map(|s| s.name.as_str()).collect();
    tools::step(&format!("building {} (cargo build)", names.join(", ")));
    cargo.arg("build");
    for name in &names {
        cargo.args(["-p", name, "--bin", name]);
    }
    tools::run(&mut cargo)
}

/// Runs every sample, prints a table of verdicts and times, and fails when any sample failed.
fn run_all(all: &[Sample]) -> Result<(), String> {
    report_soc();
    let refs: Vec<&Sample> = all.iter().collect();
    build(&refs)?;
    let mut rows = Vec::new();
    for sample in all {
        let start = std::time::Instant::now();
        let result = run_sample(sample, &[]);
        rows.push((sample.name.as_str(), result, start.elapsed()));
    }
    println!();
    let width = rows
        .iter()
        .map(|(n, _, _)| n.len())
        .max()
        .unwrap_or(0)
        .max(6);
    println!("{:<width$} {:<8} {:>8}", "sample", "verdict", "time");
    for (name, result, time) in &rows {
        let verdict = if result.is_ok() { "pass" } else { "FAIL" };
        println!("{name:<width$} {verdict:<8} {:>7.2}s", time.as_secs_f64());
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, r, _)| r.is_err())
        .map(|(n, _, _)| *n)
        .collect();
    println!(
        "{} of {} samples passed",
        rows.len() - failed.len(),
        rows.len()
    );
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("samples failed: {}", failed.join(", ")))
    }
}

/// One sample's run for `cargo xtask qualify`: its name, verdict, time and output.
pub struct Outcome {
    /// The sample's name.
    pub name: String,
    /// `Ok` when it passed, else why not.
    pub result: Result<(), String>,
    /// How long the run took.
    pub seconds: f64,
    /// What it printed (its `output_msg.txt`), empty when it did not run.
    pub log: String,
}

/// Builds and runs the samples named (every sample for `None`) as `--all` does, and gives each
/// one's outcome instead of failing.
pub fn run_for_report(names: Option<&[String]>) -> Result<Vec<Outcome>, String> {
    let all = samples()?;
    let chosen: Vec<&Sample> = match names {
        None => all.iter().collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|s| &s.name == n)
                    .ok_or_else(|| format!("no sample {n:?}"))
            })
            .collect::<Result<_, _>>()?,
    };
    report_soc();
    // One build for all; when it fails, one build each, so that a sample that does not build
    // is a failure of its own and the others still run.
    let mut unbuilt = std::collections::HashMap::new();
    if build(&chosen).is_err() {
        for sample in &chosen {
            if let Err(e) = build(&[sample]) {
                unbuilt.insert(sample.name.clone(), e);
            }
        }
    }
    let mut out = Vec::new();
    for sample in chosen {
        let start = std::time::Instant::now();
        if let Some(e) = unbuilt.remove(&sample.name) {
            out.push(Outcome {
                name: sample.name.clone(),
                result: Err(format!("the build failed: {e}")),
                seconds: 0.0,
                log: String::new(),
            });
            continue;
        }
        let result = run_sample(sample, &[]);
        let log = std::fs::read_to_string(sample.dir.join(OUTPUT_FILE)).unwrap_or_default();
        out.push(Outcome {
            name: sample.name.clone(),
            result,
            seconds: start.elapsed().as_secs_f64(),
            log,
        });
    }
    Ok(out)
}

fn run_sample(sample: &Sample, sample_args: &[String]) -> Result<(), String> {
    let help = sample_args.iter().any(|a| a == "--help" || a == "-h");
    let binary = tools::target_dir().join("debug").join(&sample.name);
    if !binary.is_file() {
        return Err(format!(
            "cargo built {} but {} does not exist",
            sample.name,
            binary.display()
        ));
    }
    // run.sh: ./build/main | tee output_msg.txt
    let log_path = sample.dir.join(OUTPUT_FILE);
    tools::step(&format!(
        "running {} {}| tee {}",
        binary.display(),
        sample_args
            .iter()
            .map(|a| format!("{a} "))
            .collect::<String>(),
        log_path.display()
    ));
    let status = run_tee(&binary, sample_args, &sample.dir, &log_path)?;
    if help {
        // Only the usage was asked for: nothing to check.
        return if status.success() {
            Ok(())
        } else {
            Err(format!("{} --help exited with {status}", sample.name))
        };
    }

    // run.sh: grep/awk the two values and compare them.
    let log = std::fs::read_to_string(&log_path)
        .map_err(|e| format!("cannot read {}: {e}", log_path.display()))?;
    let verdict = judge(&sample.name, &log, status);
    println!("{}", verdict.line);
    if verdict.passed {
        Ok(())
    } else {
        Err(format!(
            "sample {} failed (output in {})",
            sample.name,
            log_path.display()
        ))
    }
}

/// The verdict of one run from its output and exit status: the sample's own verdict when it
/// printed one, run.sh's comparison of the two values otherwise.
fn judge(name: &str, log: &str, status: std::process::ExitStatus) -> Verdict {
    let source = field_after(log, "Source data:");
    let destination = field_after(log, "Destination data:");
    if own_verdict(log).is_some() {
        own(log, status, &source, &destination)
    } else {
        verdict(name, &source, &destination, status)
    }
}

/// The line the xtask prints after the run and whether the run passed.
struct Verdict {
    line: String,
    passed: bool,
}

/// run.sh's comparison, plus what it cannot tell: a sample that stopped before printing both
/// values, or that exited non-zero with equal values.
fn verdict(
    name: &str,
    source: &Option<String>,
    destination: &Option<String>,
    status: std::process::ExitStatus,
) -> Verdict {
    let failure = |line: String| Verdict {
        line: format!("[FAILURE] {line}"),
        passed: false,
    };
    let exit = match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    };
    match (source, destination) {
        (Some(s), Some(d)) if s == d && status.success() => Verdict {
            line: format!(
                "[SUCCESS] Memory copy successfully. Values at source and destination are equal: {s}"
            ),
            passed: true,
        },
        (Some(s), Some(d)) if s == d => failure(format!(
            "The values at source and destination are equal ({s}), but {name} failed \
             afterwards ({exit}); its [ERROR] line above says why."
        )),
        (Some(s), Some(d)) => failure(format!(
            "Memory copy failed. Value at source is {s}, but value at destination is {d}"
        )),
        (Some(s), None) => failure(format!(
            "{name} wrote the source value {s} but stopped before the device value was read \
             ({exit}); its [ERROR] line above says why."
        )),
        (None, _) => failure(format!(
            "{name} stopped before the copy ({exit}); its [ERROR] line above says why."
        )),
    }
}

/// The last `[SUCCESS]` or `[FAILURE]` line a sample printed itself.
fn own_verdict(log: &str) -> Option<&str> {
    log.lines()
        .rev()
        .find(|l| l.starts_with("[SUCCESS]") || l.starts_with("[FAILURE]"))
}

/// The verdict of a sample that checks its own results: its last verdict line is `[SUCCESS]`,
/// no line is `[FAILURE]`, the exit status is 0 and the `Source data:` and `Destination data:`
/// values, when it prints either, are both there and equal. The line says so without repeating
/// the sample's own line.
fn own(
    log: &str,
    status: std::process::ExitStatus,
    source: &Option<String>,
    destination: &Option<String>,
) -> Verdict {
    let last = own_verdict(log).unwrap_or_default();
    let failure_line = log.lines().any(|l| l.starts_with("[FAILURE]"));
    let exit = match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    };
    let problem = if !status.success() {
        Some(if failure_line {
            format!("{exit}, after the sample's [FAILURE] line")
        } else {
            format!("{exit}, although the sample printed [SUCCESS]")
        })
    } else if failure_line {
        Some("the sample printed a [FAILURE] line, although it exited with status 0".to_string())
    } else if !last.starts_with("[SUCCESS]") {
        Some("the sample's last verdict line is not [SUCCESS]".to_string())
    } else {
        match (source, destination) {
            (Some(s), Some(d)) if s != d => Some(format!(
                "Source data: {s}, but Destination data: {d}, although the sample printed [SUCCESS]"
            )),
            (Some(s), None) => Some(format!("Source data: {s}, but no Destination data: line")),
            (None, Some(d)) => Some(format!("Destination data: {d}, but no Source data: line")),
            _ => None,
        }
    };
    match (problem, source) {
        (Some(why), _) => Verdict {
            line: format!("==> verdict: FAIL ({why})"),
            passed: false,
        },
        (None, Some(value)) => Verdict {
            line: format!(
                "==> verdict: pass (the sample's [SUCCESS] line; Source data and Destination \
                 data both {value})"
            ),
            passed: true,
        },
        (None, None) => Verdict {
            line: "==> verdict: pass (the sample's [SUCCESS] line)".to_string(),
            passed: true,
        },
    }
}

/// Runs `binary` in `dir`, copying its stdout to ours and to `log` as it arrives.
fn run_tee(
    binary: &Path,
    args: &[String],
    dir: &Path,
    log: &Path,
) -> Result<std::process::ExitStatus, String> {
    let mut file =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = Command::new(binary)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let mut pipe = child.stdout.take().ok_or("no stdout pipe")?;
    let mut out = std::io::stdout();
    let mut buf = [0u8; 4096];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the sample's output: {e}")),
        };
        // Like tee: keep going if our own stdout is gone, the log is what matters.
        let _ = out.write_all(&buf[..n]).and_then(|()| out.flush());
        file.write_all(&buf[..n])
            .map_err(|e| format!("writing {}: {e}", log.display()))?;
    }
    child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", binary.display()))
}

/// What `grep "<marker>" | awk -F':' '{gsub(/^ +| +$/, "", $2); print $2}' | head -n 1` prints:
/// on the first line containing `marker`, the text between the first and second `:`, trimmed of
/// spaces. `None` when no line contains the marker.
fn field_after(log: &str, marker: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains(marker))?;
    let field = line.split(':').nth(1).unwrap_or("");
    Some(field.trim_matches(' ').to_string())
}

#[cfg(test)]
mod tests {
    use super::{field_after, judge, verdict};
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn verdicts_say_what_happened() {
        let ok = ExitStatus::from_raw(0);
        let failed = ExitStatus::from_raw(1 << 8);
        let usage = ExitStatus::from_raw(2 << 8);
        let v = |s: Option<&str>, d: Option<&str>, st| {
            verdict("h2d_sync", &s.map(String::from), &d.map(String::from), st)
        };
        let pass = v(Some("7"), Some("7"), ok);
        assert!(pass.passed);
        assert_eq!(
            pass.line,
            "[SUCCESS] Memory copy successfully. Values at source and destination are equal: 7"
        );
        let differ = v(Some("7"), Some("0"), ok);
        assert!(!differ.passed);
        assert!(
            differ
                .line
                .ends_with("Value at source is 7, but value at destination is 0")
        );
        let before = v(None, None, usage);
        assert!(!before.passed);
        assert_eq!(
            before.line,
            "[FAILURE] h2d_sync stopped before the copy (exit status 2); its [ERROR] line above \
             says why."
        );
        assert!(!before.line.contains("Value at source is ,"));
        let after = v(Some("7"), Some("7"), failed);
        assert!(
            !after.passed
                && after.line.contains("equal (7)")
                && after.line.contains("exit status 1")
        );
        let half = v(Some("7"), None, failed);
        assert!(!half.passed && half.line.contains("before the device value was read"));
    }

    #[test]
    fn samples_with_their_own_verdict_pass_only_cleanly() {
        let ok = ExitStatus::from_raw(0);
        let failed = ExitStatus::from_raw(1 << 8);
        let good = "[INFO]  step\n[SUCCESS] vector_add: 1024 elements match\n";
        let pass = judge("vector_add", good, ok);
        assert!(pass.passed);
        // The xtask's line is its own: it does not repeat the sample's.
        assert_eq!(pass.line, "==> verdict: pass (the sample's [SUCCESS] line)");
        assert!(!judge("vector_add", good, failed).passed);
        let bad = "[FAILURE] element 3 differs\n[SUCCESS] cleanup\n";
        let v = judge("vector_add", bad, ok);
        assert!(!v.passed && v.line.starts_with("==> verdict: FAIL ("));
        let v = judge("vector_add", "[FAILURE] element 3 differs\n", failed);
        assert!(!v.passed && v.line.contains("exit status 1"));
        let v = judge("vector_add", "[SUCCESS] a\n[INFO]  b\n", ok);
        assert!(
            v.passed,
            "a [SUCCESS] line followed by information still passes"
        );
    }

    #[test]
    fn two_process_memory_samples_need_their_verdict_and_equal_values() {
        let ok = ExitStatus::from_raw(0);
        let log = |d: &str| {
            format!(
                "Source data: 123\nDestination data: {d}\n[SUCCESS] IPC memory sharing successfully.\n"
            )
        };
        let pass = judge("ipc_memory_withpid", &log("123"), ok);
        assert!(pass.passed);
        assert_eq!(
            pass.line,
            "==> verdict: pass (the sample's [SUCCESS] line; Source data and Destination data \
             both 123)"
        );
        assert!(!pass.line.contains("Memory copy successfully"));
        let differ = judge("ipc_memory_withpid", &log("7"), ok);
        assert!(!differ.passed && differ.line.contains("Destination data: 7"));
        let half = judge(
            "ipc_memory_withpid",
            "Source data: 123\n[SUCCESS] done\n",
            ok,
        );
        assert!(!half.passed && half.line.contains("no Destination data: line"));
    }

    #[test]
    fn memory_samples_without_a_verdict_get_run_sh_s_line() {
        let ok = ExitStatus::from_raw(0);
        let v = judge(
            "h2h",
            "[INFO]  Source data: 123\n[INFO]  Destination data: 123\n",
            ok,
        );
        assert!(v.passed);
        assert_eq!(
            v.line,
            "[SUCCESS] Memory copy successfully. Values at source and destination are equal: 123"
        );
    }

    #[test]
    fn field_after_matches_the_awk_pipeline() {
        let log = "[INFO]  Allocate memory\n[INFO]  Source data: 123\nDestination data: 123\nDestination data: 9\n";
        assert_eq!(field_after(log, "Source data:").as_deref(), Some("123"));
        assert_eq!(
            field_after(log, "Destination data:").as_deref(),
            Some("123")
        );
        assert_eq!(field_after(log, "Missing:"), None);
        // awk's $2 stops at the next colon.
        assert_eq!(
            field_after("Source data: 1:2", "Source data:").as_deref(),
            Some("1")
        );
    }
}
