//! `cargo xtask qualify`: whether this workspace works on a machine's CANN, in one report.
//!
//! With `ASCENDCL_BACKEND=cann` (set here when unset) it runs the test suites that mean
//! something on hardware ([`SUITES`]), every sample (or those named), and writes
//! `report.md` and `report.json` into the output directory (default `target/qualify`): the
//! versions (Rust, the crates, the ACL API and the runtime package), the SoC, and pass or fail
//! for each test and sample, with the tests that skipped themselves and why.
//!
//! Emulator-only tests are marked two ways, and left out or listed as such:
//! * whole test targets that install the emulator or its fault injection themselves
//!   ([`EMULATOR_ONLY`]) are not run;
//! * single tests that need an emulator-only feature (fault injection, leak reports, host-mode
//!   kernel binaries, its device count) call the suites' `needs_emulator`/`needs_devices`
//!   helpers, which print `skipped: <test>: <why>` on stderr and return: those lines are
//!   collected and reported as skipped, not as passes.
//!
//! `--stand-in` qualifies the emulator's C library in place of CANN: the install root of
//! `cargo xtask emu-root` (its `libacl_rt.so` is the emulator), found through
//! `ASCEND_HOME_PATH` by the loader as a real install is. The samples' kernels are built in NPU
//! mode through that root's `ascendc.cmake` (for `SOC_VERSION`, default the emulator's
//! Ascend910B2), as on a machine with CANN, and the stand-in has 8 devices
//! (`ASCENDCL_EMU_DEVICES`, unless set).

use crate::{sample, tools};
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str =
    "usage: cargo xtask qualify [--stand-in] [--out DIR] [--samples a,b,...] [--no-tests]";

/// The test targets that run on hardware: (package, test target).
pub const SUITES: &[(&str, &str)] = &[("ascendcl", "it"), ("hccl", "it")];

/// Test targets that only mean something on the emulator, never run here, and why.
pub const EMULATOR_ONLY: &[(&str, &str, &str)] = &[
    (
        "ascendcl",
        "isolated",
        "fault injection and leak reports of the emulator crate",
    ),
    (
        "ascendcl",
        "callback_releases",
        "installs a wrapped emulator table",
    ),
    (
        "ascendcl",
        "release_order",
        "installs a wrapped emulator table",
    ),
    (
        "ascendcl",
        "tracing",
        "installs the emulator to check the spans",
    ),
    (
        "hccl",
        "tracing",
        "installs the emulator to check the spans",
    ),
];

/// The samples whose output carries the versions and the SoC; always run.
const VERSION_SAMPLES: [&str; 2] = ["system_info", "device_multi_thread"];

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TestResult {
    suite: String,
    name: String,
    outcome: &'static str,
}

/// Runs `cargo xtask qualify ...`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut stand_in = false;
    let mut no_tests = false;
    let mut out = tools::target_dir().join("qualify");
    let mut samples: Option<Vec<String>> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stand-in" => stand_in = true,
            "--no-tests" => no_tests = true,
            "--out" => out = PathBuf::from(it.next().ok_or(USAGE)?),
            "--samples" => {
                let list = it.next().ok_or(USAGE)?;
                samples = Some(list.split(',').map(str::to_string).collect());
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("qualify: unexpected argument {other:?}\n{USAGE}")),
        }
    }
    match std::env::var("ASCENDCL_BACKEND") {
        Ok(v) if !v.is_empty() && v != "cann" => {
            return Err(format!(
                "qualify runs on CANN: ASCENDCL_BACKEND={v:?} names another backend"
            ));
        }
        _ => {}
    }
    let mut env: Vec<(&str, std::ffi::OsString)> = vec![("ASCENDCL_BACKEND", "cann".into())];
    if stand_in {
        let root = crate::emu_root::layout(&tools::target_dir().join("qualify-root"), false)?;
        let lib64 = root.join("lib64");
        let mut ld = std::ffi::OsString::from(lib64.as_os_str());
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
            ld.push(":");
            ld.push(old);
        }
        env.push(("ASCEND_HOME_PATH", root.into_os_string()));
        env.push(("LD_LIBRARY_PATH", ld));
        // An 8-device server, as the Atlas servers HCCL's tests are written for.
        if std::env::var_os("ASCENDCL_EMU_DEVICES").is_none() {
            env.push(("ASCENDCL_EMU_DEVICES", "8".into()));
        }
        // The stand-in has no npu-smi: the kernels are built for the SoC it claims to be.
        if std::env::var_os("SOC_VERSION").is_none() {
            let soc = std::env::var("ASCENDCL_EMU_SOC").unwrap_or_else(|_| "Ascend910B2".into());
            env.push(("SOC_VERSION", soc.into()));
        }
    }
    for (k, v) in &env {
        // SAFETY: the xtask is single-threaded here; every later step (cargo, the samples) is a
        // child process that inherits the variables.
        unsafe { std::env::set_var(k, v) };
    }
    if stand_in {
        for var in ["ASCENDCL_LIB", "ASCEND_INSTALL_PATH", "ASCEND_TOOLKIT_HOME"] {
            // SAFETY: as above.
            unsafe { std::env::remove_var(var) };
        }
    }
    let install = ascendcl_sdk::SearchEnv::from_process()
        .find_install()
        .map_err(|e| format!("qualify needs a CANN install (or --stand-in): {e}"))?;
    tools::step(&format!("qualifying against {}", install.root.display()));

    let mut tests = Vec::new();
    let mut skipped = Vec::new();
    let suites = if no_tests { &[][..] } else { SUITES };
    for (package, target) in suites {
        tools::step(&format!(
            "cargo test -p {package} --test {target} (ASCENDCL_BACKEND=cann)"
        ));
        let output = tools::cargo()
            .args(["test", "-p", package, "--test", target, "--no-fail-fast"])
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let suite = format!("{package}/{target}");
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let log = out.join(format!("{package}-{target}.log"));
        write(&log, &format!("{stdout}\n--- stderr ---\n{stderr}"))?;
        let found = parse_tests(&suite, &stdout);
        if found.is_empty() {
            return Err(format!(
                "{suite} reported no test (did it build?):\n{}",
                tail(&stderr, 40)
            ));
        }
        tests.extend(found);
        skipped.extend(parse_skips(&suite, &stderr));
    }

    let mut names = samples.clone();
    if let Some(n) = &mut names {
        for s in VERSION_SAMPLES {
            if !n.iter().any(|x| x == s) {
                n.push(s.to_string());
            }
        }
    }
    let outcomes = sample::run_for_report(names.as_deref())?;
    let log_of = |name: &str| {
        outcomes
            .iter()
            .find(|o| o.name == name)
            .map_or("", |o| o.log.as_str())
    };
    let versions = Versions {
        rustc: command_line("rustc", &["-V"]),
        crates: env!("CARGO_PKG_VERSION").to_string(),
        acl: value_after(log_of("system_info"), "ACL Runtime API version:"),
        package: value_after(log_of("system_info"), "version string:"),
        soc: value_after(log_of("device_multi_thread"), "chipset platform is:")
            .map(|s| s.trim_end_matches('.').to_string()),
        install: install.root.display().to_string(),
        stand_in,
    };

    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let json = report_json(&versions, &tests, &skipped, &outcomes);
    let md = report_markdown(&versions, &tests, &skipped, &outcomes);
    write(&out.join("report.json"), &json)?;
    write(&out.join("report.md"), &md)?;
    let failed_tests = tests.iter().filter(|t| t.outcome == "failed").count();
    let failed_samples = outcomes.iter().filter(|o| o.result.is_err()).count();
    tools::note(&format!(
        "report: {} and report.json ({} tests: {failed_tests} failed, {} skipped themselves; {} \
         samples: {failed_samples} failed)",
        out.join("report.md").display(),
        tests.len(),
        skipped.len(),
        outcomes.len()
    ));
    if failed_tests + failed_samples == 0 {
        Ok(())
    } else {
        Err(format!(
            "qualification failed: {failed_tests} tests and {failed_samples} samples (see the report)"
        ))
    }
}

/// What the report says the machine runs.
struct Versions {
    rustc: Option<String>,
    crates: String,
    acl: Option<String>,
    package: Option<String>,
    soc: Option<String>,
    install: String,
    stand_in: bool,
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn command_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The text after the first `marker` in `log`, to the end of its line, trimmed.
fn value_after(log: &str, marker: &str) -> Option<String> {
    log.lines().find_map(|l| {
        let at = l.find(marker)?;
        Some(l[at + marker.len()..].trim().to_string())
    })
}

/// libtest's `test NAME ... ok|FAILED|ignored` lines.
fn parse_tests(suite: &str, stdout: &str) -> Vec<TestResult> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("test ")?;
            let (name, result) = rest.rsplit_once(" ... ")?;
            let outcome = match result.trim() {
                "ok" => "passed",
                "FAILED" => "failed",
                r if r.starts_with("ignored") => "ignored",
                _ => return None,
            };
            Some(TestResult {
                suite: suite.to_string(),
                name: name.trim().to_string(),
                outcome,
            })
        })
        .collect()
}

/// The suites' `skipped: <test>: <why>` lines, as (suite, test, why).
fn parse_skips(suite: &str, stderr: &str) -> Vec<(String, String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("skipped: ")?;
            let (test, why) = rest.split_once(": ")?;
            Some((suite.to_string(), test.to_string(), why.to_string()))
        })
        .collect()
}

fn report_json(
    v: &Versions,
    tests: &[TestResult],
    skipped: &[(String, String, String)],
    samples: &[sample::Outcome],
) -> String {
    let value = serde_json::json!({
        "versions": {
            "rustc": v.rustc,
            "crates": v.crates,
            "acl_api": v.acl,
            "runtime_package": v.package,
            "soc": v.soc,
            "install": v.install,
            "stand_in": v.stand_in,
        },
        "tests": tests.iter().map(|t| serde_json::json!({
            "suite": t.suite, "name": t.name, "outcome": t.outcome,
        })).collect::<Vec<_>>(),
        "skipped_themselves": skipped.iter().map(|(s, t, w)| serde_json::json!({
            "suite": s, "test": t, "why": w,
        })).collect::<Vec<_>>(),
        "emulator_only_targets": EMULATOR_ONLY.iter().map(|(p, t, w)| serde_json::json!({
            "package": p, "target": t, "why": w,
        })).collect::<Vec<_>>(),
        "samples": samples.iter().map(|o| serde_json::json!({
            "name": o.name,
            "outcome": if o.result.is_ok() { "passed" } else { "failed" },
            "error": o.result.as_ref().err(),
            "seconds": o.seconds,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn report_markdown(
    v: &Versions,
    tests: &[TestResult],
    skipped: &[(String, String, String)],
    samples: &[sample::Outcome],
) -> String {
    let or = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".to_string());
    let count = |what: &str| tests.iter().filter(|t| t.outcome == what).count();
    let mut md = String::from("# Qualification report\n\n");
    md.push_str("| what | value |\n|---|---|\n");
    md.push_str(&format!(
        "| install | {}{} |\n",
        v.install,
        if v.stand_in {
            " (the emulator's C library standing in for CANN)"
        } else {
            ""
        }
    ));
    md.push_str(&format!("| SoC | {} |\n", or(&v.soc)));
    md.push_str(&format!("| ACL API | {} |\n", or(&v.acl)));
    md.push_str(&format!("| runtime package | {} |\n", or(&v.package)));
    md.push_str(&format!("| crates | {} |\n", v.crates));
    md.push_str(&format!("| Rust | {} |\n\n", or(&v.rustc)));
    md.push_str(&format!(
        "## Tests\n\n{} passed, {} failed, {} ignored; {} of the passes skipped themselves \
         (emulator-only, listed below).\n\n",
        count("passed"),
        count("failed"),
        count("ignored"),
        skipped.len()
    ));
    let failed: Vec<_> = tests.iter().filter(|t| t.outcome == "failed").collect();
    if !failed.is_empty() {
        md.push_str("Failed:\n\n");
        for t in failed {
            md.push_str(&format!("- `{}` {}\n", t.suite, t.name));
        }
        md.push('\n');
    }
    md.push_str("| suite | test | outcome |\n|---|---|---|\n");
    for t in tests {
        md.push_str(&format!("| {} | {} | {} |\n", t.suite, t.name, t.outcome));
    }
    md.push_str(
        "\n### Skipped themselves (need the emulator)\n\n| suite | test | why |\n|---|---|---|\n",
    );
    for (s, t, w) in skipped {
        md.push_str(&format!("| {s} | {t} | {w} |\n"));
    }
    md.push_str(
        "\n### Not run: emulator-only test targets\n\n| package | target | why |\n|---|---|---|\n",
    );
    for (p, t, w) in EMULATOR_ONLY {
        md.push_str(&format!("| {p} | {t} | {w} |\n"));
    }
    md.push_str("\n## Samples\n\n| sample | outcome | time |\n|---|---|---|\n");
    for o in samples {
        let outcome = match &o.result {
            Ok(()) => "passed".to_string(),
            Err(e) => {
                let first: String = e.lines().next().unwrap_or("").chars().take(160).collect();
                format!("FAILED: {}", first.replace('|', "\\|"))
            }
        };
        md.push_str(&format!(
            "| {} | {outcome} | {:.2} s |\n",
            o.name, o.seconds
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines_and_skips_are_read() {
        let out = "running 3 tests\ntest a::b ... ok\ntest c ... FAILED\ntest d ... ignored, slow\n\
                   test result: FAILED. 1 passed; 1 failed\n";
        let t = parse_tests("x/it", out);
        let got: Vec<_> = t.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        assert_eq!(got, [("a::b", "passed"), ("c", "failed"), ("d", "ignored")]);
        let s = parse_skips(
            "x/it",
            "   Compiling x\nskipped: faults: needs the emulator's fault injection; the active backend is cann\n",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].1, "faults");
        assert!(s[0].2.starts_with("needs the emulator's"));
    }

    #[test]
    fn versions_come_from_the_samples_lines() {
        let log = "[INFO]  ACL Runtime API version: 1.17.0\n[INFO]  CANN package [runtime] version string: 8.5.0\n";
        assert_eq!(
            value_after(log, "ACL Runtime API version:").as_deref(),
            Some("1.17.0")
        );
        assert_eq!(
            value_after(log, "version string:").as_deref(),
            Some("8.5.0")
        );
        assert_eq!(value_after(log, "nothing:"), None);
    }
}
