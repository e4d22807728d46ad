//! Runs the built `hccl_multiprocess` binary on the emulator: a normal run, a lost rank reported
//! quickly, bad arguments.

use sample_common::hccl_cli;

const EXE: &str = env!("CARGO_BIN_EXE_hccl_multiprocess");

/// Runs the sample (see [`hccl_cli::run`]).
fn run(args: &[&str]) -> (i32, String) {
    hccl_cli::run(EXE, args)
}

#[test]
fn a_run_checks_every_rank() {
    let (code, out) = run(&["--ranks", "3", "--count", "1001"]);
    assert_eq!(code, 0, "{out}");
    for r in 0..3 {
        assert!(out.contains(&format!("rank {r}")), "{out}");
    }
    assert_eq!(
        out.lines().last(),
        Some("[SUCCESS] Run the hccl_multiprocess sample successfully."),
        "{out}"
    );
    assert!(!out.contains("[ERROR]"), "{out}");
}

#[test]
fn a_lost_rank_is_an_error_not_a_hang() {
    hccl_cli::a_lost_rank_is_an_error_not_a_hang(EXE, "hccl_multiprocess");
}

#[test]
fn bad_arguments_print_the_usage() {
    hccl_cli::bad_arguments_print_the_usage(EXE, "hccl_multiprocess");
}
