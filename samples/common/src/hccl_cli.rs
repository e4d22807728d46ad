//! What the two HCCL samples' command-line tests (`tests/cli.rs`) share: running the built binary with a time limit, and the two checks their
//! interfaces have in common (a lost rank, bad arguments).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the sample binary `exe` on the emulator; a run that takes longer than a minute is a
/// failure, not a stall. Returns the exit code and standard output.
pub fn run(exe: &str, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(exe)
        .args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the sample");
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{exe} {args:?} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    (status.code().unwrap_or(-1), out)
}

/// `--lose-rank 1` of three ranks: rank 1 is named on an `[ERROR]` line, the sample `name`
/// ends with its failure line and exit status 1, well before the harness's limit.
pub fn a_lost_rank_is_an_error_not_a_hang(exe: &str, name: &str) {
    let start = Instant::now();
    let (code, out) = run(
        exe,
        &[
            "--ranks",
            "3",
            "--count",
            "64",
            "--lose-rank",
            "1",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[ERROR]  rank 1"), "{out}");
    let failure = format!("[FAILURE] Run the {name} sample failed.");
    assert_eq!(out.lines().last(), Some(failure.as_str()), "{out}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

/// A bad `--ranks` value: exit status 2, the error first, then the usage of `name`.
pub fn bad_arguments_print_the_usage(exe: &str, name: &str) {
    let (code, out) = run(exe, &["--ranks", "zero"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.starts_with("[ERROR]  --ranks"), "{out}");
    assert!(out.contains(&format!("usage: {name}")), "{out}");
}
