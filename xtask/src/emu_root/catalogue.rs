//! `cargo xtask cann-catalogue`: CANN's own sample catalogue, unchanged, through its own `run.sh`
//! against an emulator root, as the samples' READMEs say to run them:
//!
//! ```text
//! source <install_root>/cann/set_env.sh
//! source <runtime>/example/set_sample_env.sh
//! cd <runtime>/example/<sample> && bash run.sh
//! ```
//!
//! The runtime repository (`hicann/runtime`, a checkout or a bare clone) is given with
//! `--runtime`; nothing of it is committed here. Its `example/` tree is copied afresh for every
//! run (run.sh builds in the sample's directory), every sample runs in a clean environment (no
//! variable of this shell but `HOME`), with the provisioned cmake on `PATH` and numpy for the
//! samples whose scripts use it, under a time limit. A sample passes when its run.sh exits 0,
//! prints the line its program prints on success and, where it prints one, a computed value
//! (`xtask/emu-root/catalogue.tsv`; `!text` there is a text no line may hold), and no
//! `[FAILURE]` line. `--runs N` repeats the whole catalogue; the report lists, for every sample,
//! the runs it passed and why the others failed.

use crate::tools;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo xtask cann-catalogue --runtime DIR [--runs N] [--root DIR] [--timeout SECS] [SAMPLE...]";

/// One sample of the catalogue: its directory under `example/` and what says it passed.
#[derive(Debug, Clone)]
struct Entry {
    dir: String,
    expect: Expect,
    /// An emulator setting the sample needs (`VAR=value`), and why: the sample then passes
    /// with a named reason rather than unchanged.
    setting: Option<(String, String, String)>,
}

#[derive(Debug, Clone)]
enum Expect {
    /// For each text, a line of the output contains it.
    Lines(Vec<String>),
    /// Not run, for this reason.
    Skip(String),
}

/// The expectations file: `dir<TAB>expected text[<TAB>VAR=value why]` or `dir<TAB>-<TAB>reason`;
/// `#` comments.
fn entries() -> Result<Vec<Entry>, String> {
    let path = super::toolkit::sources().join("../catalogue.tsv");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = || {
            format!(
                "{}:{}: not `dir<TAB>text[<TAB>VAR=value why]` or `dir<TAB>-<TAB>reason`",
                path.display(),
                i + 1
            )
        };
        let (expect, setting) = match fields.as_slice() {
            [_, "-", reason] => (Expect::Skip(reason.to_string()), None),
            [_, text, rest @ ..] if !text.is_empty() && rest.len() <= 1 => {
                let setting = match rest.first() {
                    None => None,
                    Some(s) => {
                        let (assign, why) = s.split_once(' ').ok_or_else(bad)?;
                        let (var, value) = assign.split_once('=').ok_or_else(bad)?;
                        Some((var.to_string(), value.to_string(), why.to_string()))
                    }
                };
                let lines = text.split(" && ").map(str::to_string).collect();
                (Expect::Lines(lines), setting)
            }
            _ => return Err(bad()),
        };
        out.push(Entry {
            dir: fields[0].to_string(),
            expect,
            setting,
        });
    }
    Ok(out)
}

/// Runs `cargo xtask cann-catalogue ...`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut runtime = None;
    let mut runs = 1u32;
    let mut root = None;
    let mut timeout = 180u64;
    let mut only = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs {what}\n{USAGE}"))
        };
        match a.as_str() {
            "--runtime" => runtime = Some(PathBuf::from(value("a directory")?)),
            "--root" => root = Some(PathBuf::from(value("a directory")?)),
            "--runs" => {
                runs = value("a count")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--timeout" => {
                timeout = value("seconds")?
                    .parse()
                    .map_err(|e| format!("--timeout: {e}"))?
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n{USAGE}")),
            s => only.push(s.to_string()),
        }
    }
    let runtime = runtime.ok_or_else(|| USAGE.to_string())?;
    let work = tools::target_dir().join("cann-catalogue");
    let root = match root {
        Some(r) => r
            .canonicalize()
            .map_err(|e| format!("{}: {e}", r.display()))?,
        None => super::layout(&work.join("emu-root"), true)?,
    };
    let example = example_tree(&runtime, &work)?;
    let cmake = tools::cmake()?;
    let python_path = numpy(&work)?;
    let mut entries = entries()?;
    if !only.is_empty() {
        entries.retain(|e| only.iter().any(|o| e.dir.contains(o.as_str())));
    }
    let mut results: Vec<Vec<Outcome>> = vec![Vec::new(); entries.len()];
    for run in 1..=runs {
        let tree = work.join(format!("run{run}"));
        if tree.exists() {
            std::fs::remove_dir_all(&tree).map_err(|e| format!("{}: {e}", tree.display()))?;
        }
        super::copy_dir(&example, &tree.join("example"))?;
        for (i, e) in entries.iter().enumerate() {
            let outcome = match &e.expect {
                Expect::Skip(why) => Outcome::Skipped(why.clone()),
                Expect::Lines(lines) => {
                    let o = run_one(&root, &tree, e, lines, &cmake, &python_path, timeout)?;
                    println!("run {run}/{runs} {:<62} {}", e.dir, o.short());
                    o
                }
            };
            results[i].push(outcome);
        }
    }
    let report = report(&entries, &results, runs);
    let path = work.join("report.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("\n{report}");
    println!("report: {}", path.display());
    Ok(())
}

/// The runtime repository's `example/` tree: a checkout's, or one exported from a bare clone.
fn example_tree(runtime: &Path, work: &Path) -> Result<PathBuf, String> {
    if runtime.join("example/set_sample_env.sh").is_file() {
        return Ok(runtime.join("example"));
    }
    let out = work.join("source");
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    tools::step(&format!("exporting example/ from {}", runtime.display()));
    let archive = Command::new("git")
        .arg("--git-dir")
        .arg(runtime)
        .args(["archive", "HEAD", "example"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git archive: {e}"))?;
    tools::run(
        Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&out)
            .stdin(archive.stdout.ok_or("git archive: no output")?),
    )?;
    Ok(out.join("example"))
}

/// A directory whose Python packages include numpy (the kernel samples' data scripts use it):
/// none needed when the machine's python has it, else provisioned from PyPI.
fn numpy(work: &Path) -> Result<Option<PathBuf>, String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let has = |path: Option<&Path>| {
        let mut c = Command::new(&python);
        c.args(["-c", "import numpy"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(p) = path {
            c.env("PYTHONPATH", p);
        }
        c.status().is_ok_and(|s| s.success())
    };
    if has(None) {
        return Ok(None);
    }
    let dir = work.join("python");
    if !has(Some(&dir)) {
        tools::step("installing numpy from PyPI for the samples' data scripts");
        tools::run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--quiet",
                    "--target",
                ])
                .arg(&dir)
                .arg("numpy"),
        )?;
    }
    Ok(Some(dir))
}

#[derive(Debug, Clone)]
enum Outcome {
    Passed(Duration),
    Failed(String),
    Skipped(String),
}

impl Outcome {
    fn short(&self) -> String {
        match self {
            Outcome::Passed(t) => format!("pass ({:.1} s)", t.as_secs_f64()),
            Outcome::Failed(why) => format!("FAIL: {why}"),
            Outcome::Skipped(why) => format!("not run: {why}"),
        }
    }
}

fn run_one(
    root: &Path,
    tree: &Path,
    e: &Entry,
    expect: &[String],
    cmake: &Path,
    python_path: &Option<PathBuf>,
    timeout: u64,
) -> Result<Outcome, String> {
    let example = tree.join("example");
    let dir = example.join(&e.dir);
    if !dir.join("run.sh").is_file() {
        return Ok(Outcome::Failed("no run.sh".to_string()));
    }
    let mut path = std::env::var("PATH").unwrap_or_default();
    if let Some(bin) = cmake.parent().filter(|p| !p.as_os_str().is_empty()) {
        path = format!("{}:{path}", bin.display());
    }
    let script = format!(
        "source '{}/cann/set_env.sh' >/dev/null && source '{}/set_sample_env.sh' >/dev/null && cd '{}' && bash run.sh",
        root.display(),
        example.display(),
        dir.display()
    );
    let log = tree.join(format!("{}.log", e.dir.replace('/', "_")));
    let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script])
        .env_clear()
        .env("PATH", &path)
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file);
    if let Some(p) = python_path {
        cmd.env("PYTHONPATH", p);
    }
    if let Some((var, value, _)) = &e.setting {
        cmd.env(var, value);
    }
    // Its own process group, so that a run that overstays is ended whole.
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("bash: {e}"))?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(timeout) {
            // The process group this function started (its leader is the child).
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let elapsed = start.elapsed();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let last = |n: usize| -> String {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    };
    Ok(match status {
        None => Outcome::Failed(format!(
            "did not finish in {timeout} s; last lines: {}",
            last(2)
        )),
        Some(s) if !s.success() => {
            Outcome::Failed(format!("run.sh exited with {s}; last lines: {}", last(3)))
        }
        Some(_) if text.lines().any(|l| l.contains("[FAILURE]")) => {
            Outcome::Failed("a [FAILURE] line".to_string())
        }
        Some(_) => {
            // `!text`: no line may contain it.
            let missing = expect.iter().find(|x| match x.strip_prefix('!') {
                Some(banned) => text.lines().any(|l| l.contains(banned)),
                None => !text.lines().any(|l| l.contains(x.as_str())),
            });
            match missing {
                Some(x) if x.starts_with('!') => {
                    Outcome::Failed(format!("a line with {:?}", &x[1..]))
                }
                Some(x) => Outcome::Failed(format!("no line with {x:?}; last lines: {}", last(2))),
                None => Outcome::Passed(elapsed),
            }
        }
    })
}

fn report(entries: &[Entry], results: &[Vec<Outcome>], runs: u32) -> String {
    let mut passed_all = 0;
    let mut passed_with = 0;
    let mut failed = 0;
    let mut skipped = 0;
    let mut rows = String::new();
    for (e, r) in entries.iter().zip(results) {
        let passes = r.iter().filter(|o| matches!(o, Outcome::Passed(_))).count();
        let verdict = match r.first() {
            Some(Outcome::Skipped(why)) => {
                skipped += 1;
                format!("not run: {why}")
            }
            _ if passes == runs as usize => match &e.setting {
                None => {
                    passed_all += 1;
                    format!("pass {passes} of {runs}")
                }
                Some((var, value, why)) => {
                    passed_with += 1;
                    format!("pass {passes} of {runs} with {var}={value}: {why}")
                }
            },
            _ => {
                failed += 1;
                let why = r
                    .iter()
                    .find_map(|o| match o {
                        Outcome::Failed(w) => Some(w.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                format!(
                    "FAIL ({passes} of {runs} passed): {}",
                    why.replace('|', "/")
                )
            }
        };
        rows.push_str(&format!("| `{}` | {verdict} |\n", e.dir));
    }
    format!(
        "# CANN's catalogue on the emulator root\n\n{passed_all} pass {runs} runs of {runs} \
         unchanged, {passed_with} with a named setting, {failed} fail, {skipped} not run, of {} \
         programs.\n\n| sample | verdict |\n|---|---|\n{rows}",
        entries.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expectations name CANN's 61 programs once each, each with what says it passed or why
    /// it is not run.
    #[test]
    fn the_expectations_cover_the_catalogue() {
        let entries = entries().unwrap();
        assert_eq!(entries.len(), 61);
        let mut dirs: Vec<&str> = entries.iter().map(|e| e.dir.as_str()).collect();
        dirs.sort();
        dirs.dedup();
        assert_eq!(dirs.len(), 61, "a sample is listed twice");
        for e in &entries {
            match &e.expect {
                Expect::Lines(l) => assert!(l.iter().all(|t| !t.trim().is_empty()), "{}", e.dir),
                Expect::Skip(why) => assert!(!why.is_empty(), "{}", e.dir),
            }
        }
        let with: Vec<_> = entries.iter().filter(|e| e.setting.is_some()).collect();
        assert!(
            with.iter()
                .all(|e| e.setting.as_ref().is_some_and(|s| !s.2.is_empty()))
        );
    }
}
