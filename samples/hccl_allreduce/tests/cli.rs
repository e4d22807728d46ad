//! Runs the built `hccl_allreduce` binary on the emulator: a normal run, a lost rank reported
//! quickly, bad arguments.

use sample_common::hccl_cli;

const EXE: &str = env!("CARGO_BIN_EXE_hccl_allreduce");

/// Runs the sample (see [`hccl_cli::run`]).
fn run(args: &[&str]) -> (i32, String) {
    hccl_cli::run(EXE, args)
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
    hccl_cli::a_lost_rank_is_an_error_not_a_hang(EXE, "hccl_allreduce");
}

#[test]
fn bad_arguments_print_the_usage() {
    hccl_cli::bad_arguments_print_the_usage(EXE, "hccl_allreduce");
}
