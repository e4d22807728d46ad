//! Runs the built sample on the emulator and checks the reference sample's lines.

use std::process::Command;

#[test]
fn lines_and_results_are_the_reference_samples() {
    let o = Command::new(env!("CARGO_BIN_EXE_custom_kernel_launch"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let results: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  result["))
        .collect();
    assert_eq!(
        results,
        [
            "0] = 1.5 (expected: 1.5)",
            "1] = 3.0 (expected: 3.0)",
            "2] = 4.5 (expected: 4.5)",
            "3] = 6.0 (expected: 6.0)",
            "4] = 7.5 (expected: 7.5)",
            "5] = 9.0 (expected: 9.0)",
            "6] = 10.5 (expected: 10.5)",
            "7] = 12.0 (expected: 12.0)",
        ],
        "{out}"
    );
    assert!(
        out.starts_with("ACL init successfully\nSet device 0 successfully\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "Custom AscendC kernel <<<>>> call successfully\nSynchronize stream successfully\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("ACL finalize successfully\n\n[SUCCESS] Sample run successfully with <<<>>> kernel call!\n"),
        "{out}"
    );
}
