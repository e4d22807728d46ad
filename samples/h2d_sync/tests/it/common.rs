//! Runs the built `h2d_sync` binary on the emulator, as the tests of this binary do.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The emulator runs host-mode kernels only; in an NPU-mode build these tests have nothing to run.
pub fn emulator_build() -> bool {
    let host = ascendc_kernels::mode() == ascendc_kernels::Mode::Host;
    if !host {
        eprintln!("skipped: kernels were built in NPU mode, which the emulator cannot run");
    }
    host
}

/// How long one run may take before the test gives up on it (a hang is a failure, not a stall).
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_h2d_sync"));
    cmd.args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .env_remove("ASCENDCL_EMU_LEAK_REPORT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run h2d_sync");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        err.read_to_end(&mut v).map(|_| v)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for h2d_sync") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            child.kill().expect("kill h2d_sync");
            child.wait().expect("reap h2d_sync");
            let out = out.join().unwrap().unwrap_or_default();
            panic!(
                "h2d_sync {args:?} {env:?} did not finish within {TIMEOUT:?}; its output:\n{}",
                String::from_utf8_lossy(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap().expect("read stdout"),
        stderr: err.join().unwrap().expect("read stderr"),
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Index of the first line containing `needle`, with a readable failure.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line containing {needle:?} in:\n{text}"))
}

/// What run.sh's grep/awk extracts: the field after the marker's colon on its first line.
pub fn value_after(text: &str, marker: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains(marker))?;
    Some(line.split(':').nth(1)?.trim().to_string())
}
