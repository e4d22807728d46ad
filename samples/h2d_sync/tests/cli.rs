//! Runs the built `h2d_sync` binary on the emulator and checks its output and exit status.
//!
//! The binary's stdout is a pipe here, as under `tee`: the kernel's `printf` lines must still
//! arrive in program order.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The emulator runs host-mode kernels only; in an NPU-mode build these tests have nothing to run.
fn emulator_build() -> bool {
    let host = ascendc_kernels::mode() == ascendc_kernels::Mode::Host;
    if !host {
        eprintln!("skipped: kernels were built in NPU mode, which the emulator cannot run");
    }
    host
}

/// How long one run may take before the test gives up on it (a hang is a failure, not a stall).
const TIMEOUT: Duration = Duration::from_secs(60);

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_h2d_sync"));
    cmd.args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
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

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Index of the first line containing `needle`, with a readable failure.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line containing {needle:?} in:\n{text}"))
}

/// What run.sh's grep/awk extracts: the field after the marker's colon on its first line.
fn value_after(text: &str, marker: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains(marker))?;
    Some(line.split(':').nth(1)?.trim().to_string())
}

#[test]
fn the_default_run_matches_the_reference() {
    if !emulator_build() {
        return;
    }
    let o = run(&[], &[]);
    let out = stdout(&o);
    assert!(
        o.status.success(),
        "status {:?}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let order = [
        "[INFO]  Backend: emulated device",
        "[INFO]  Kernels: DeviceRead/DeviceWrite compiled for the host CPU",
        "[INFO]  Allocate memory on the host memory 0x",
        "[INFO]  Allocate memory on the device memory 0x",
        "[INFO]  Write the data 123 to the virtual memory 0x",
        "[INFO]  Source data: 123",
        "[INFO]  Copy memory from memory 0x",
        "Destination data: 123",
    ];
    let lines: Vec<usize> = order.iter().map(|n| line_of(&out, n)).collect();
    assert!(
        lines.windows(2).all(|w| w[0] < w[1]),
        "out of order {lines:?}:\n{out}"
    );
    // The kernel's line is its own, whole line, and the last one.
    assert_eq!(out.lines().last(), Some("Destination data: 123"), "{out}");
    assert_eq!(value_after(&out, "Source data:").as_deref(), Some("123"));
    assert_eq!(
        value_after(&out, "Destination data:").as_deref(),
        Some("123")
    );
    assert!(!out.contains("[ERROR]"), "{out}");
}

#[test]
fn value_policy_and_size_are_honoured() {
    if !emulator_build() {
        return;
    }
    for (args, value) in [
        (&["--value", "7", "--policy", "normal-only"][..], "7"),
        (&["--value=-2147483648", "--size", "4"][..], "-2147483648"),
        (
            &[
                "--size",
                "3M",
                "--policy",
                "huge-first-p2p",
                "--value",
                "99",
            ][..],
            "99",
        ),
    ] {
        let o = run(args, &[]);
        let out = stdout(&o);
        assert!(o.status.success(), "{args:?}: {:?}\n{out}", o.status);
        assert_eq!(
            value_after(&out, "Source data:").as_deref(),
            Some(value),
            "{out}"
        );
        assert_eq!(
            value_after(&out, "Destination data:").as_deref(),
            Some(value),
            "{out}"
        );
    }
}

#[test]
fn an_injected_malloc_fault_is_reported_with_its_causes() {
    if !emulator_build() {
        return;
    }
    let o = run(&[], &[("ASCENDCL_EMU_FAULTS", "aclrtMalloc:1")]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let failed = line_of(
        &out,
        "[ERROR]  Operation failed: aclrtMalloc((void**)&devPtrB, 1048576, ACL_MEM_MALLOC_HUGE_FIRST) failed",
    );
    let cause = line_of(&out, "[ERROR]    caused by: aclrtMalloc failed");
    assert!(failed < cause, "{out}");
    // The host allocation before it succeeded; nothing after it ran.
    line_of(&out, "Allocate memory on the host memory");
    assert!(
        !out.contains("Allocate memory on the device memory"),
        "{out}"
    );
    assert!(!out.contains("Source data:"), "{out}");
    assert!(!out.contains("Destination data:"), "{out}");
}

#[test]
fn a_device_that_does_not_exist_fails_cleanly() {
    if !emulator_build() {
        return;
    }
    let o = run(&["--device", "99"], &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    line_of(&out, "[ERROR]  Operation failed: aclrtSetDevice(99) failed");
    let cause = &out
        .lines()
        .nth(line_of(&out, "caused by:"))
        .unwrap()
        .to_string();
    assert!(cause.contains("aclrtSetDevice"), "{cause}");
    assert!(cause.contains("107001"), "{cause}");
    assert!(!out.contains("Destination data:"), "{out}");
}

#[test]
fn bad_arguments_exit_with_usage() {
    let o = run(&["--policy", "fastest"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("[ERROR]  --policy \"fastest\": expected one of huge-first"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("usage: h2d_sync"));
    let o = run(&["--help"], &[]);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("usage: h2d_sync"));
}
