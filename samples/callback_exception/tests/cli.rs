//! Runs the built sample on the emulator: the exception callback reports the failed task.

use std::process::Command;

#[test]
fn the_callback_reports_the_failed_task() {
    let o = Command::new(env!("CARGO_BIN_EXE_callback_exception"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    // Numbers that vary (stream and thread ids) are replaced by `N`.
    let lines: Vec<String> = out
        .lines()
        .filter(|l| !l.starts_with("[INFO]  Recent error message: "))
        .map(|l| match l.rsplit_once(" is ") {
            Some((head, tail)) if head.contains("stream id") || head.contains("thread id") => {
                format!(
                    "{head} is N{}",
                    &tail[tail.find('.').unwrap_or(tail.len())..]
                )
            }
            _ => l.to_string(),
        })
        .collect();
    assert_eq!(
        lines,
        [
            "[INFO]  Begin an easy task and an error task; the error task will reach the \
             exception callback.",
            "[INFO]  The last task id is: 3.",
            "[INFO]  Exception occurred, callback function.",
            "[INFO]  The error task id is 3.",
            "[INFO]  The error stream id is N.",
            "[INFO]  The error thread id is N.",
            "[INFO]  The error device id is 0.",
            "[INFO]  The error code id is 507035.",
            "[ERROR]  aclrtSynchronizeStream(stream_) returned error code 507035",
            "[INFO]  The thread's last error is ACL_ERROR_RT_VECTOR_CORE_EXCEPTION (507035).",
            "[INFO]  Device 0 error details: Others (repairable: false, details: false)",
            "[INFO]  After assigning the task, the current num is: 1.",
            "[INFO]  Thread exit",
            "[SUCCESS] the failing kernel reached the exception callback with its task, stream, \
             device and code 507035",
        ]
    );
    assert!(
        out.contains("kernel failed: ErrorOP: block 0 of 1: Trap()"),
        "the recent error message names the kernel: {out}"
    );
}
