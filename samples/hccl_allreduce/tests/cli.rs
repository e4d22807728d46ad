//! Runs the built `hccl_allreduce` binary on the emulator: a normal run, a lost rank reported
//! quickly, bad arguments.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the sample; a run that takes longer than a minute is a failure, not a stall.
fn run(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hccl_allreduce"))
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
            panic!("hccl_allreduce {args:?} did not finish within a minute");
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

#[test]
fn a_run_checks_every_rank() {
    let (code, out) = run(&["--ranks", "3", "--count", "1001"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("Found 3 NPU device(s) available\n"),
        "{out}"
    );
    // The first 8 of 1001 elements, i * 3 on every rank, in rank order.
    let ranks: Vec<&str> = out.lines().filter(|l| l.starts_with("rankId: ")).collect();
    let want: Vec<String> = (0..3)
        .map(|r| format!("rankId: {r}, output: [ 0 3 6 9 12 15 18 21 ]"))
        .collect();
    assert_eq!(ranks, want, "{out}");
    assert_eq!(
        out.lines().last(),
        Some("[SUCCESS] Run the hccl_allreduce sample successfully."),
        "{out}"
    );
    assert!(!out.contains("[ERROR]"), "{out}");
}

#[test]
fn a_lost_rank_is_an_error_not_a_hang() {
    let start = Instant::now();
    let (code, out) = run(&[
        "--ranks",
        "3",
        "--count",
        "64",
        "--lose-rank",
        "1",
        "--timeout",
        "5",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[ERROR]  rank 1"), "{out}");
    assert_eq!(
        out.lines().last(),
        Some("[FAILURE] Run the hccl_allreduce sample failed."),
        "{out}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn bad_arguments_print_the_usage() {
    let (code, out) = run(&["--ranks", "zero"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.starts_with("[ERROR]  --ranks"), "{out}");
    assert!(out.contains("usage: hccl_allreduce"), "{out}");
}
