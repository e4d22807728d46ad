//! Runs the built sample on the emulator and checks the reference sample's results.

use std::process::Command;

#[test]
fn results_are_the_reference_samples() {
    let o = Command::new(env!("CARGO_BIN_EXE_device_normal"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let results: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[INFO]  result["))
        .collect();
    assert_eq!(
        results,
        [
            "0] is: 1.200000",
            "1] is: 2.200000",
            "2] is: 3.200000",
            "3] is: 5.400000",
            "4] is: 6.400000",
            "5] is: 7.400000",
            "6] is: 9.600000",
            "7] is: 10.600000",
        ]
    );
    assert!(
        out.starts_with("[INFO]  Start to run device_normal sample.\n"),
        "{out}"
    );
    assert!(
        out.ends_with("[SUCCESS] out = self + alpha * other on the device, checked on the host\n"),
        "{out}"
    );
}
