//! Runs the built `add_custom` binary on the emulator and checks its steps and verdict.

use std::process::{Command, Output};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_add_custom"));
    cmd.args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run add_custom")
}

#[test]
fn tiled_add_matches_the_host_sum_rounded_to_half() {
    for threads in ["1", "3"] {
        let o = run(&[], &[("ASCENDC_HOST_THREADS", threads)]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("[INFO]  Backend: "), "{out}");
        assert_eq!(
            &lines[1..5],
            [
                "[INFO]  Kernels: add_custom built in host mode by ascendc-build",
                "[INFO]  Copy x and y to the device (16384 halves, 32768 bytes each)",
                "[INFO]  Launch add_custom on 8 blocks: 16 tiles of 128 per block, two buffers \
                 per queue",
                "[INFO]  Copy z back and check it on the host",
            ]
        );
        assert!(
            lines[5].starts_with("[SUCCESS] z = x + y for all 16384 elements; z[16383] = "),
            "{out}"
        );
        assert_eq!(lines.len(), 6, "{out}");
    }
}

#[test]
fn a_failing_runtime_call_is_reported() {
    let o = run(&[], &[("ASCENDCL_EMU_FAULTS", "aclrtMalloc:2")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("[ERROR] aclrtMalloc failed: "), "{out}");
    assert!(out.ends_with("[FAILURE] add_custom did not run\n"), "{out}");
}

/// A release that fails in a `Drop` (every `aclrtFree` failing here) is reported and fails the
/// sample: no `[SUCCESS]` after it.
#[test]
fn a_failing_release_fails_the_sample() {
    let o = run(&[], &[("ASCENDCL_EMU_FAULTS", "aclrtFree:*")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("[ERROR]  a release failed: aclrtFree failed: "),
        "{out}"
    );
    assert!(!out.contains("[SUCCESS]"), "{out}");
    assert!(
        out.ends_with("[FAILURE] add_custom: a release failed\n"),
        "{out}"
    );
}
