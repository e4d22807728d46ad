//! Runs the built sample on the emulator and checks the reference sample's lines with the
//! emulator's answers.

use std::process::Command;

#[test]
fn lines_are_the_reference_samples_with_the_emulators_answers() {
    let o = Command::new(env!("CARGO_BIN_EXE_runtime_compatibility"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .env_remove("ASCENDCL_EMU_SOC")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let soc = lines
        .iter()
        .find_map(|l| l.strip_prefix("[INFO]  Architecture compatibility for "))
        .and_then(|l| l.strip_suffix(": 1"))
        .unwrap_or_else(|| panic!("no compatible architecture line: {out}"));
    assert!(soc.starts_with("Ascend910"), "{soc}");
    let compat = format!("[INFO]  Architecture compatibility for {soc}: 1");
    assert_eq!(
        lines,
        [
            "[INFO]  CANN package [runtime] version string: 9.0.0",
            "[INFO]  CANN package [runtime] version number: 90000000",
            "[INFO]  CANN attribute count: 2",
            "[INFO]  CANN attribute ACL_CANN_ATTR_INF_NAN support value: 1",
            "[INFO]  CANN attribute ACL_CANN_ATTR_BF16 support value: 1",
            compat.as_str(),
            "[INFO]  Device capability ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV: 1",
            "[INFO]  [SUCCESS] Runtime compatibility sample completed successfully",
            "[SUCCESS] Runtime compatibility sample executed successfully.",
        ]
    );
}
