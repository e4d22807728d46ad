//! Runs the built sample on the emulator: its output is the reference sample's, line for line.

use std::process::Command;

#[test]
fn the_output_is_the_reference_samples() {
    let o = Command::new(env!("CARGO_BIN_EXE_stream_with_failure_mode"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "[INFO]  Assigning task without failure mode.",
            "[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035",
            "[INFO]  Without failure mode, the result is 2.",
            "[INFO]  Assigning task with failure mode.",
            "[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035",
            "[INFO]  After set failure mode, the current result is: 1.",
            "[INFO]  aclrtStreamStop returned 0.",
            "[WARN]  aclrtSynchronizeStream(after stop) returned 507000.",
            "[INFO]  aclrtStreamAbort returned 0.",
            "[INFO]  aclrtSynchronizeStream(after abort) returned 507035 after stream abort, \
             which is expected.",
            "[INFO]  Resource cleanup completed.",
            "[INFO]  Run the stream_with_failure_mode sample successfully.",
            "[SUCCESS] a failing kernel gives 507035 in CONTINUE and STOP mode; stop and abort \
             behave as documented",
        ]
    );
}
