//! Runs the built `host_register_zero_copy` binary on the emulator and checks its lines.

use std::process::Command;

#[test]
fn prints_the_reference_lines() {
    let o = Command::new(env!("CARGO_BIN_EXE_host_register_zero_copy"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run host_register_zero_copy");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "[INFO]  Start to run simple_zero_copy sample.",
            "[INFO]  Registered three Host buffers and obtained their Device mapping addresses.",
            "[INFO]  Verified 16384 FP16 additions through mapped Host memory.",
            "[SUCCESS] Run the simple_zero_copy sample successfully.",
        ]
    );
}
