//! Runs the built sample on the emulator in both modes, and with bad arguments.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernel_binary"))
        .args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample")
}

#[test]
fn both_modes_add_correctly() {
    for (mode, n, blocks) in [
        ("simple", "512", "4"),
        ("placeholder", "300", "3"),
        ("simple", "1001", "7"),
    ] {
        let o = run(&["--mode", mode, "--n", n, "--blocks", blocks]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{out}");
        assert!(
            out.starts_with(&format!(
                "[INFO]  Kernel launch sample runs in {mode} mode.\n"
            )),
            "{out}"
        );
        assert!(
            out.ends_with(
                "[INFO]  Run the kernel_binary sample successfully.\n\
                 error ratio: 0.0000, tolerance: 0.0010\n\
                 [SUCCESS] result correct\n"
            ),
            "{out}"
        );
    }
}

#[test]
fn a_file_that_is_no_kernel_binary_is_refused() {
    let o = run(&["--binary", file!()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("aclrtBinaryLoadFromFile failed: ACL_ERROR_RT_PARAM_INVALID (107000)"),
        "{out}"
    );
    assert!(
        out.ends_with("[FAILURE] the kernel_binary sample did not run\n"),
        "{out}"
    );
}
