//! The fault sweep: for every function the emulator implements, run the sample once with the
//! first call of that function failing (`ASCENDCL_EMU_FAULTS=<function>:1`) and the leak report
//! on (`ASCENDCL_EMU_LEAK_REPORT=1`). Every run must end cleanly:
//!
//! * no crash and no panic: exit status 0 or 1;
//! * every leak report printed (at each device reset and at `aclFinalize`) shows nothing alive;
//! * for a function the sample calls, the failure is named: an `[ERROR]` line naming it with
//!   status 1, or — only when the failure is harmless — a `[WARN]` line naming it with status 0
//!   and the values checked as in a normal run;
//! * for a function the sample does not call, the output is the normal run's.
//!
//! The figures (runs, clean runs, functions the sample calls) are printed at the end.

use crate::common::*;
use std::io::Write;
use std::process::Output;

/// Every runtime function the sample calls on a normal run, in call order. A function missing
/// here whose fault changes the output fails the sweep (the list must be kept complete). The
/// kernel launch also calls `aclrtDestroyBinary` (on the descriptor, once the binary is loaded):
/// its failure only leaks the descriptor and changes nothing the sample reports, so it is not
/// listed.
const CALLED: &[&str] = &[
    "aclInit",
    "aclrtGetSocName",
    "aclrtGetVersion",
    "aclrtSetDevice",
    "aclrtGetCurrentContext",
    "aclrtCreateStreamWithConfig",
    "aclrtMallocHost",
    "aclrtMalloc",
    "aclrtMemcpy",
    "aclrtCreateBinary",
    "aclrtBinaryLoad",
    "aclrtBinaryGetFunction",
    "aclrtKernelArgsInit",
    "aclrtKernelArgsAppend",
    "aclrtKernelArgsFinalize",
    "aclrtLaunchKernelWithConfig",
    "aclrtSynchronizeStream",
    "aclrtDestroyStreamForce",
    "aclrtFreeHost",
    "aclrtFree",
    "aclrtResetDeviceForce",
    "aclFinalize",
];

/// Failures the sample survives, saying so: a query whose answer is only printed, and the
/// releases it retries once.
const HARMLESS: &[&str] = &[
    "aclrtGetSocName",
    "aclrtGetVersion",
    "aclrtDestroyStreamForce",
    "aclrtFreeHost",
    "aclrtFree",
    "aclrtResetDeviceForce",
    "aclFinalize",
];

/// Stdout with addresses masked, for comparing runs.
fn masked(out: &str) -> String {
    let mut s = String::with_capacity(out.len());
    let mut rest = out;
    while let Some(i) = rest.find("0x") {
        s.push_str(&rest[..i + 2]);
        rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
        s.push('…');
    }
    s.push_str(rest);
    s
}

/// The leak report lines on stderr that show something still alive.
fn leaks(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("ascendcl-emu leak report"))
        .filter(|l| {
            let counts = l.split_once(": ").map_or("", |(_, r)| r);
            let counts = counts.split_once(": ").map_or(counts, |(_, r)| r);
            counts
                .split(", ")
                .any(|part| part.split(' ').next().is_some_and(|n| n != "0"))
        })
        .collect()
}

/// Checks one run; `Err` says what is wrong.
fn check(function: &str, o: &Output, normal: &str) -> Result<(), String> {
    let out = stdout(o);
    let err = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    if !matches!(code, Some(0 | 1)) {
        return Err(format!("exit status {:?}", o.status));
    }
    if err.contains("panicked") {
        return Err("a panic".to_string());
    }
    let leaked = leaks(&err);
    if !leaked.is_empty() {
        return Err(format!("leaks: {leaked:?}"));
    }
    if !CALLED.contains(&function) {
        return if code == Some(0) && masked(&out) == normal {
            Ok(())
        } else {
            Err("the output changed: add the function to CALLED".to_string())
        };
    }
    let named = |tag: &str| {
        out.lines()
            .any(|l| l.starts_with(tag) && l.contains(function))
    };
    match code {
        Some(1) if named("[ERROR]") => Ok(()),
        Some(1) => Err("exit 1 without an [ERROR] line naming the function".to_string()),
        _ if !HARMLESS.contains(&function) => {
            Err("exit 0 although the failure is not harmless".to_string())
        }
        _ if !named("[WARN]") => Err("exit 0 without a [WARN] line naming it".to_string()),
        _ => {
            let (s, d) = (
                value_after(&out, "Source data:"),
                value_after(&out, "Destination data:"),
            );
            if s.is_some() && s == d {
                Ok(())
            } else {
                Err(format!("values {s:?} / {d:?}"))
            }
        }
    }
}

#[test]
fn failing_the_first_call_of_any_function_ends_cleanly() {
    if !emulator_build() {
        return;
    }
    let leak_env = ("ASCENDCL_EMU_LEAK_REPORT", "1");
    let baseline = run(&[], &[leak_env]);
    assert!(baseline.status.success(), "{}", stdout(&baseline));
    assert!(leaks(&String::from_utf8_lossy(&baseline.stderr)).is_empty());
    let normal = masked(&stdout(&baseline));
    for f in CALLED {
        assert!(ascendcl_emu::IMPLEMENTED.contains(f), "{f}");
    }

    // One process per function, a few at a time (each run is a separate process, so they are
    // independent).
    let sweep = |functions: &[&str]| -> Vec<String> {
        let mut failures = Vec::new();
        for &function in functions {
            let fault = format!("{function}:1");
            let o = run(&[], &[("ASCENDCL_EMU_FAULTS", &fault), leak_env]);
            if let Err(why) = check(function, &o, &normal) {
                failures.push(format!(
                    "{fault}: {why}\n--- stdout\n{}--- stderr\n{}",
                    stdout(&o),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
        failures
    };
    let lanes = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let chunk = ascendcl_emu::IMPLEMENTED.len().div_ceil(lanes);
    let failures: Vec<String> = std::thread::scope(|s| {
        let running: Vec<_> = ascendcl_emu::IMPLEMENTED
            .chunks(chunk)
            .map(|functions| s.spawn(|| sweep(functions)))
            .collect();
        running
            .into_iter()
            .flat_map(|l| l.join().expect("a sweep lane panicked"))
            .collect()
    });
    let triggered = ascendcl_emu::IMPLEMENTED
        .iter()
        .filter(|f| CALLED.contains(f))
        .count();
    let runs = ascendcl_emu::IMPLEMENTED.len();
    let _ = writeln!(
        std::io::stderr(),
        "fault sweep: {runs} runs, {} clean; {triggered} functions called by the sample",
        runs - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
