//! `cargo xtask asc-examples`: AscendC's own examples (CANN's asc-devkit repository,
//! `examples/01_simd_cpp_api`), built unchanged by their own CMakeLists through the emulator
//! root's ASC language (host mode) and run the way each README says: cmake, make, the data
//! generator, the program, the verifier. For local verification only: it fetches the repository
//! (git, from GitHub), which CI cannot; the table of docs/kernels.md comes from its report.
//!
//! ```text
//! cargo xtask asc-examples [--source DIR] [--arch dav-2201|all] [--jobs N] [FILTER...]
//! ```
//!
//! `--source` is a checkout of asc-devkit (default: `target/asc-devkit`, cloned when missing);
//! FILTERs keep the examples whose path contains one of them. Each example is copied to
//! `target/asc-examples/<path>`, its commands' output kept in `run.log` there. The report lists
//! every example with its verdict: pass, or the step that failed and its first error line.

use crate::tools;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: cargo xtask asc-examples [--source DIR] [--arch dav-2201|dav-3510|all] [FILTER...]";
const REPOSITORY: &str = "https://github.com/mirror-cann/asc-devkit";
/// How long one example may take (build and run).
const TIMEOUT: Duration = Duration::from_secs(600);

/// One example's outcome.
struct Outcome {
    path: String,
    arch: String,
    pass: bool,
    reason: String,
    seconds: f64,
}

/// Runs `cargo xtask asc-examples`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut source: Option<PathBuf> = None;
    let mut arch = "dav-2201".to_string();
    let mut filters = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--source" => source = it.next().map(PathBuf::from),
            "--arch" => arch = it.next().cloned().ok_or(USAGE)?,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => {
                return Err(format!("asc-examples: unknown option {s}\n{USAGE}"));
            }
            s => filters.push(s.to_string()),
        }
    }
    let source = match source {
        Some(s) => s,
        None => {
            let dir = tools::target_dir().join("asc-devkit");
            if !dir.join("examples").is_dir() {
                tools::step(&format!("git clone --depth 1 {REPOSITORY}"));
                tools::run(
                    Command::new("git")
                        .args(["clone", "--depth", "1", REPOSITORY])
                        .arg(&dir),
                )?;
            }
            dir
        }
    };
    let examples_root = source.join("examples/01_simd_cpp_api");
    let root = crate::emu_root::layout(&tools::target_dir().join("emu-root-release"), true)?;
    let cmake = tools::cmake()?;
    let python = python_with_numpy()?;

    let mut dirs = Vec::new();
    find_examples(&examples_root, &mut dirs)?;
    dirs.sort();
    let work = tools::target_dir().join("asc-examples");
    let mut outcomes = Vec::new();
    for dir in dirs {
        let rel = dir
            .strip_prefix(&examples_root)
            .unwrap_or(&dir)
            .display()
            .to_string();
        if !filters.is_empty() && !filters.iter().any(|f| rel.contains(f.as_str())) {
            continue;
        }
        let example_arch = default_arch(&dir.join("CMakeLists.txt"));
        if arch != "all" && example_arch != arch {
            continue;
        }
        let copy = work.join(&rel);
        let _ = std::fs::remove_dir_all(&copy);
        copy_dir(&dir, &copy)?;
        let start = Instant::now();
        let (pass, reason) = run_example(&copy, &root, &cmake, &python);
        let o = Outcome {
            path: rel,
            arch: example_arch,
            pass,
            reason,
            seconds: start.elapsed().as_secs_f64(),
        };
        println!(
            "{:4} {:7.1}s  {}  {}",
            if o.pass { "pass" } else { "FAIL" },
            o.seconds,
            o.path,
            o.reason
        );
        outcomes.push(o);
    }
    report(&outcomes);
    Ok(())
}

/// The directories with a CMakeLists and a README (the examples), under `dir`.
fn find_examples(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if dir.join("CMakeLists.txt").is_file() && dir.join("README.md").is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries.flatten() {
        if e.path().is_dir() {
            find_examples(&e.path(), out)?;
        }
    }
    Ok(())
}

/// The architecture an example's CMakeLists builds for by default.
fn default_arch(cmakelists: &Path) -> String {
    let text = std::fs::read_to_string(cmakelists).unwrap_or_default();
    text.split("CMAKE_ASC_ARCHITECTURES \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("none")
        .to_string()
}

/// What a README says to run and what it shows: the commands of its first shell block that
/// makes the build directory, and the lines of the next shell block that holds no command (the
/// execution result: `test pass!`, or the program's lines), without elided lines.
fn readme_steps(readme: &str) -> Option<(Vec<String>, Vec<String>)> {
    let blocks: Vec<&str> = readme
        .split("```bash")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    let at = blocks.iter().position(|b| b.contains("mkdir -p build"))?;
    let commands = blocks[at]
        .lines()
        .map(|l| l.split(" # ").next().unwrap_or("").trim())
        .map(|l| l.split("\t#").next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let is_command = |b: &str| {
        ["cmake", "mkdir", "python3", "./demo", "source "]
            .iter()
            .any(|w| b.contains(w))
    };
    let expected = blocks[at + 1..]
        .iter()
        .find(|b| !is_command(b) && b.lines().any(|l| !l.trim().is_empty()))
        .map(|b| {
            b.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.contains("...") && !l.contains('…'))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Some((commands, expected))
}

/// Runs an example's commands in its copy `dir`; the verdict and, for a failure, why.
fn run_example(dir: &Path, root: &Path, cmake: &Path, python: &Path) -> (bool, String) {
    let readme = std::fs::read_to_string(dir.join("README_en.md"))
        .or_else(|_| std::fs::read_to_string(dir.join("README.md")))
        .unwrap_or_default();
    let Some((commands, expected)) = readme_steps(&readme) else {
        return (false, "no build commands in its README".into());
    };
    let script = format!("set -e\n{}\n", commands.join("\n"));
    let cmake_dir = cmake.parent().unwrap_or(Path::new("/"));
    let python_dir = python.parent().unwrap_or(Path::new("/"));
    let path = format!(
        "{}:{}:{}:{}",
        root.join("bin").display(),
        cmake_dir.display(),
        python_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let log = dir.join("run.log");
    let Ok(log_file) = std::fs::File::create(&log) else {
        return (false, "cannot write run.log".into());
    };
    let Ok(err_file) = log_file.try_clone() else {
        return (false, "cannot write run.log".into());
    };
    let child = Command::new("timeout")
        .arg(TIMEOUT.as_secs().to_string())
        .arg("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("ASCEND_HOME_PATH", root)
        .env("ASCEND_TOOLKIT_HOME", root)
        .env("CMAKE_PREFIX_PATH", root.join("lib64/cmake"))
        .env("LD_LIBRARY_PATH", root.join("lib64"))
        .env("PATH", path)
        .stdout(log_file)
        .stderr(err_file)
        .status();
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let ok = child.map(|s| s.success()).unwrap_or(false);
    let missing = expected.iter().find(|l| !out.contains(l.as_str()));
    if ok && missing.is_none() && !out.contains("test failed") {
        return (true, String::new());
    }
    if let (true, Some(l)) = (ok, missing) {
        return (false, format!("its output lacks the README's line `{l}`"));
    }
    (false, failure_reason(&out, ok))
}

/// The first line that says what went wrong.
fn failure_reason(out: &str, exited_ok: bool) -> String {
    let pick = |needle: &str| {
        out.lines()
            .find(|l| l.contains(needle))
            .map(|l| l.trim().chars().take(220).collect::<String>())
    };
    for needle in [
        "does not provide",
        "error:",
        "kernel failed",
        "Error",
        "error",
        "test failed",
        "mismatch",
    ] {
        if let Some(l) = pick(needle) {
            return l;
        }
    }
    if exited_ok {
        "ran, but printed no pass verdict".into()
    } else {
        out.lines()
            .last()
            .unwrap_or("failed without output")
            .chars()
            .take(220)
            .collect()
    }
}

/// A python3 with numpy (the examples' generators and verifiers): the machine's, else a
/// virtual environment in target/tools with numpy from PyPI.
fn python_with_numpy() -> Result<PathBuf, String> {
    let has = |py: &Path| {
        Command::new(py)
            .args(["-c", "import numpy, ml_dtypes"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let system = PathBuf::from("python3");
    if has(&system) {
        return Ok(system);
    }
    let venv = tools::tools_dir().join("asc-examples-venv");
    let py = venv.join("bin/python3");
    if !has(&py) {
        tools::step("python3 -m venv + pip install numpy (the examples' data scripts)");
        tools::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        tools::run(Command::new(&py).args(["-m", "pip", "install", "-q", "numpy", "ml_dtypes"]))?;
    }
    Ok(py)
}

fn report(outcomes: &[Outcome]) {
    let mut folders: Vec<(String, usize, usize)> = Vec::new();
    for o in outcomes {
        let folder = o.path.split('/').next().unwrap_or("").to_string();
        match folders.iter_mut().find(|f| f.0 == folder) {
            Some(f) => {
                f.1 += usize::from(o.pass);
                f.2 += 1;
            }
            None => folders.push((folder, usize::from(o.pass), 1)),
        }
    }
    println!("\n| example | arch | result |\n|---|---|---|");
    for o in outcomes {
        let verdict = if o.pass {
            "pass".to_string()
        } else {
            format!("fails: {}", o.reason.replace('|', "\\|"))
        };
        println!("| `{}` | {} | {verdict} |", o.path, o.arch);
    }
    println!();
    for (folder, pass, total) in folders {
        println!("{folder}: {pass} of {total} pass");
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        if src.is_dir() {
            if entry.file_name() != "build" {
                copy_dir(&src, &dst)?;
            }
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("copying {} to {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_steps_are_the_commands_and_the_result_shown() {
        let readme = "text\n```bash\nsource x/set_env.sh\n```\n- run\n  ```bash\n  mkdir -p build && cd build;    # make it\n  cmake ..;make -j;\n  python3 ../scripts/gen_data.py   # data\n  ./demo\n  ```\n  ```bash\n  cmake -DCMAKE_ASC_RUN_MODE=cpu ..;make -j;\n  ```\n- result\n  ```bash\n  [AIV Block 0/8] Hello\n  ......\n  test pass!\n  ```\n";
        let (commands, expected) = readme_steps(readme).unwrap();
        assert_eq!(
            commands,
            [
                "mkdir -p build && cd build;",
                "cmake ..;make -j;",
                "python3 ../scripts/gen_data.py",
                "./demo"
            ]
        );
        assert_eq!(expected, ["[AIV Block 0/8] Hello", "test pass!"]);
        assert!(readme_steps("```bash\nls\n```").is_none());
    }
}
