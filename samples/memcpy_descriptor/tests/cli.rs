//! Runs the built `memcpy_descriptor` binary on the emulator and checks its lines.

use std::process::Command;

#[test]
fn prints_the_reference_lines() {
    let o = Command::new(env!("CARGO_BIN_EXE_memcpy_descriptor"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run memcpy_descriptor");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "[INFO]  Configured a 32-byte memcpy descriptor for 4096 bytes of data",
            "[INFO]  Verified all 1024 copied elements",
            "[INFO]  [SUCCESS] Memcpy descriptor sample completed successfully",
            "[SUCCESS] Memcpy descriptor sample executed successfully.",
        ]
    );
}

/// A release that fails in a `Drop` (every `aclrtFree` failing here) is reported by the shared
/// verdict, which then fails the sample instead of printing `[SUCCESS]`.
#[test]
fn a_failing_release_fails_the_verdict() {
    let o = Command::new(env!("CARGO_BIN_EXE_memcpy_descriptor"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env("ASCENDCL_EMU_FAULTS", "aclrtFree:*")
        .output()
        .expect("run memcpy_descriptor");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("[ERROR]  a release failed: aclrtFree failed: "),
        "{out}"
    );
    assert!(!out.contains("\n[SUCCESS]"), "{out}");
    assert!(
        out.ends_with("[FAILURE] Memcpy descriptor sample failed.\n"),
        "{out}"
    );
}
