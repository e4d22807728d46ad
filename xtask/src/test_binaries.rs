//! The test build and its executables: one compilation that builds every test and lints it with
//! clippy, then the test binaries run a few at a time (cargo runs them one after another), each
//! in its package's directory with the environment cargo gives it.

use crate::tools;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// An executable of a `cargo test --no-run` build.
#[derive(Debug, Clone)]
pub struct Executable {
    /// The package's name.
    pub package: String,
    /// The package's version.
    pub version: String,
    /// The package's manifest.
    pub manifest: PathBuf,
    /// The first kind of its target (`lib`, `bin`, `test`, ...).
    pub kind: String,
    /// Its target's source file, relative to the package directory.
    pub source: String,
    /// Whether cargo would run it as a test (a harness or a `test` target), rather than build it
    /// for one (a sample binary that a test starts).
    pub is_test: bool,
    /// The executable.
    pub path: PathBuf,
}

/// The clippy driver of the toolchain that runs this xtask: beside its `cargo`, else on `PATH`.
fn clippy_driver() -> Result<PathBuf, String> {
    let beside_cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|c| Some(c.parent()?.join("clippy-driver")))
        .filter(|d| d.is_file());
    if let Some(d) = beside_cargo {
        return Ok(d);
    }
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("clippy-driver"))
            .find(|d| d.is_file())
    });
    on_path.ok_or_else(|| {
        "clippy-driver not found beside cargo or on PATH: install it with `rustup component add \
         clippy`"
            .to_string()
    })
}

/// Makes `cmd` compile the workspace's own crates with clippy (`-D warnings`) instead of plain
/// rustc: the compilation that builds the tests also lints them, as `cargo clippy` would, so the
/// crates are not compiled once more for the lints. Third-party crates are compiled by rustc as
/// usual. The wrapper is part of each unit's hash, so these builds sit beside plain ones.
pub fn with_lints(cmd: &mut Command) -> Result<&mut Command, String> {
    Ok(cmd
        .env("RUSTC_WORKSPACE_WRAPPER", clippy_driver()?)
        // How cargo-clippy hands its arguments to the driver.
        .env(
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
        ))
}

/// Runs `cargo <args> --no-run` with the lints on (see [`with_lints`]), showing cargo's progress
/// and diagnostics, and returns the executables it built.
pub fn build(mut cargo: Command, args: &[&str]) -> Result<Vec<Executable>, String> {
    with_lints(&mut cargo)?
        .args(args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .stdout(Stdio::piped());
    let out = cargo
        .spawn()
        .and_then(|c| c.wait_with_output())
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo {} --no-run failed ({})",
            args.join(" "),
            out.status
        ));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(id), Some(manifest), Some(kind), Some(source), Some(exe)) = (
            m["package_id"].as_str(),
            m["manifest_path"].as_str(),
            m["target"]["kind"][0].as_str(),
            m["target"]["src_path"].as_str(),
            m["executable"].as_str(),
        ) else {
            continue;
        };
        let manifest = PathBuf::from(manifest);
        let (package, version) = package_name_and_version(id, &manifest);
        let dir = manifest.parent().unwrap_or(Path::new(""));
        found.push(Executable {
            package,
            version,
            kind: kind.to_string(),
            source: Path::new(source)
                .strip_prefix(dir)
                .unwrap_or(Path::new(source))
                .display()
                .to_string(),
            is_test: m["profile"]["test"].as_bool() == Some(true) || kind == "test",
            path: PathBuf::from(exe),
            manifest,
        });
    }
    Ok(found)
}

/// Name and version from a package id (`path+file:///dir#1.0.0` when the name is the directory's,
/// `path+file:///dir#name@1.0.0` otherwise).
fn package_name_and_version(id: &str, manifest: &Path) -> (String, String) {
    let fragment = id.rsplit_once('#').map_or(id, |(_, f)| f);
    match fragment.split_once('@') {
        Some((name, version)) => (name.to_string(), version.to_string()),
        None => (
            manifest
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            fragment.to_string(),
        ),
    }
}

/// One thing to run: a test binary, or a command (the doctests), with a label for the report.
#[derive(Debug)]
pub struct Job {
    /// What the report calls it.
    pub label: String,
    /// What runs.
    pub command: Command,
}

/// The command cargo would run for a test executable: in the package's directory, with the
/// package's `CARGO_*` variables and the target directory's libraries on the loader path.
fn test_command(e: &Executable) -> Command {
    let mut cmd = Command::new(&e.path);
    let dir = e.manifest.parent().unwrap_or(Path::new("."));
    let mut parts = e.version.splitn(3, '.');
    let (major, minor, patch) = (
        parts.next().unwrap_or("0"),
        parts.next().unwrap_or("0"),
        parts.next().unwrap_or("0"),
    );
    let (patch, pre) = patch.split_once('-').unwrap_or((patch, ""));
    cmd.current_dir(dir)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("CARGO_MANIFEST_PATH", &e.manifest)
        .env("CARGO_PKG_NAME", &e.package)
        .env("CARGO_PKG_VERSION", &e.version)
        .env("CARGO_PKG_VERSION_MAJOR", major)
        .env("CARGO_PKG_VERSION_MINOR", minor)
        .env("CARGO_PKG_VERSION_PATCH", patch)
        .env("CARGO_PKG_VERSION_PRE", pre);
    if let Some(cargo) = std::env::var_os("CARGO") {
        cmd.env("CARGO", cargo);
    }
    let deps = e.path.parent().unwrap_or(Path::new("."));
    let mut paths = vec![deps.to_path_buf()];
    paths.extend(deps.parent().map(Path::to_path_buf));
    paths.extend(
        std::env::var_os("LD_LIBRARY_PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    if let Ok(joined) = std::env::join_paths(paths) {
        cmd.env("LD_LIBRARY_PATH", joined);
    }
    cmd
}

/// How one job ended.
struct Outcome {
    /// Its place in the list of jobs.
    index: usize,
    label: String,
    took: Duration,
    ok: bool,
    counts: Counts,
    output: String,
}

/// Test counts from libtest's `test result:` lines.
#[derive(Default, Clone, Copy)]
struct Counts {
    passed: u64,
    failed: u64,
    ignored: u64,
}

fn counts(output: &str) -> Counts {
    let mut c = Counts::default();
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        for part in rest.split(['.', ';']) {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => c.passed += n,
                "failed" => c.failed += n,
                "ignored" => c.ignored += n,
                _ => {}
            }
        }
    }
    c
}

fn run_one(index: usize, mut job: Job) -> Outcome {
    let label = job.label;
    let start = Instant::now();
    let result = job.command.stdin(Stdio::null()).output();
    let took = start.elapsed();
    let (ok, output) = match result {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                if out.status.success() {
                    String::new()
                } else {
                    format!("\n(exit status: {})\n", out.status)
                }
            ),
        ),
        Err(e) => (false, format!("could not start it: {e}\n")),
    };
    Outcome {
        index,
        counts: counts(&output),
        label,
        took,
        ok,
        output,
    }
}

/// How many jobs run at once: one more than the cores, because most test binaries spend much of
/// their time waiting (on the emulator's streams, on child processes, on nested cargo builds'
/// serial stretches). `XTASK_TEST_JOBS` overrides it.
fn lanes() -> usize {
    std::env::var("XTASK_TEST_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get() + 1))
}

/// Runs every job to the end, `lanes()` at a time, printing a line for each as it finishes (and,
/// for one that failed, its whole output); fails naming the jobs that failed.
pub fn run(jobs: Vec<Job>) -> Result<(), String> {
    let total_jobs = jobs.len();
    let lanes = lanes().min(total_jobs.max(1));
    tools::note(&format!("{total_jobs} jobs, {lanes} at a time"));
    let queue = Arc::new(Mutex::new(
        jobs.into_iter().enumerate().collect::<VecDeque<_>>(),
    ));
    let (tx, rx) = mpsc::channel();
    let workers: Vec<_> = (0..lanes)
        .map(|_| {
            let (queue, tx) = (Arc::clone(&queue), tx.clone());
            std::thread::spawn(move || {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((index, job)) = next else { break };
                    if tx.send(run_one(index, job)).is_err() {
                        break;
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut sum = Counts::default();
    let mut failed = Vec::new();
    for o in rx {
        sum.passed += o.counts.passed;
        sum.failed += o.counts.failed;
        sum.ignored += o.counts.ignored;
        if o.ok {
            tools::note(&format!(
                "ok     {:>6.1} s  {} ({} passed{})",
                o.took.as_secs_f64(),
                o.label,
                o.counts.passed,
                if o.counts.ignored > 0 {
                    format!(", {} ignored", o.counts.ignored)
                } else {
                    String::new()
                }
            ));
        } else {
            println!("---- output of {} ----\n{}", o.label, o.output.trim_end());
            tools::note(&format!(
                "FAILED {:>6.1} s  {}",
                o.took.as_secs_f64(),
                o.label
            ));
            failed.push((o.index, o.label));
        }
    }
    for w in workers {
        let _ = w.join();
    }
    tools::note(&format!(
        "{} passed, {} failed, {} ignored, in {total_jobs} jobs",
        sum.passed, sum.failed, sum.ignored
    ));
    if failed.is_empty() {
        return Ok(());
    }
    // In the jobs' order, whichever finished first.
    failed.sort();
    let names: Vec<String> = failed.into_iter().map(|(_, label)| label).collect();
    Err(format!(
        "{} of {total_jobs} test jobs failed: {}",
        names.len(),
        names.join(", ")
    ))
}

/// The jobs that `cargo test` would run for these executables (the test ones, in cargo's
/// order), each with `env` added to what cargo would give it.
pub fn test_jobs(executables: &[Executable], env: &[(&str, &std::ffi::OsStr)]) -> Vec<Job> {
    executables
        .iter()
        .filter(|e| e.is_test)
        .map(|e| {
            let mut command = test_command(e);
            command.envs(env.iter().copied());
            Job {
                label: format!("{} {}", e.package, e.source),
                command,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_ids_give_name_and_version() {
        let m = Path::new("/w/crates/ascendcl/Cargo.toml");
        assert_eq!(
            package_name_and_version("path+file:///w/crates/ascendcl#0.1.0", m),
            ("ascendcl".to_string(), "0.1.0".to_string())
        );
        let m = Path::new("/w/xtask/codegen/Cargo.toml");
        assert_eq!(
            package_name_and_version(
                "path+file:///w/xtask/codegen#ascendcl-codegen@0.2.0-rc.1",
                m
            ),
            ("ascendcl-codegen".to_string(), "0.2.0-rc.1".to_string())
        );
    }

    fn shell(label: &str, script: &str) -> Job {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        Job {
            label: label.to_string(),
            command,
        }
    }

    #[test]
    fn every_job_runs_and_the_failed_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let jobs = vec![
            shell("first", "exit 101"),
            shell(
                "second",
                "echo 'test result: ok. 2 passed; 0 failed; 0 ignored'",
            ),
            shell("third", &format!("touch '{}'; exit 3", marker.display())),
        ];
        let err = run(jobs).unwrap_err();
        assert_eq!(err, "2 of 3 test jobs failed: first, third", "{err}");
        assert!(marker.exists(), "a job after a failed one still runs");
        assert!(run(vec![shell("fine", "true")]).is_ok());
    }

    #[test]
    fn result_lines_are_summed() {
        let c = counts(
            "running 3 tests\ntest result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 \
             filtered out; finished in 0.01s\n\ntest result: FAILED. 2 passed; 4 failed; 0 \
             ignored; 0 measured; 0 filtered out; finished in 1.5s\n",
        );
        assert_eq!((c.passed, c.failed, c.ignored), (5, 4, 1));
    }
}
