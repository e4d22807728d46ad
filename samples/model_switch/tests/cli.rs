//! Runs the built sample on the emulator: the branch of each selector value, as printed.

use std::process::Command;

#[test]
fn each_selector_value_runs_its_branch() {
    let o = Command::new(env!("CARGO_BIN_EXE_model_switch"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let row = |v: &str| format!("[INFO]  The vector data is: {}", [v; 8].join("  "));
    let mut want = Vec::new();
    for (when, values) in [
        ("After executing", ["3.4000", "0.0000", "5.4000"]),
        ("After second execution", ["3.4000", "4.4000", "0.0000"]),
    ] {
        for (i, v) in values.iter().enumerate() {
            want.push(format!("[INFO]  {when}, print data{}.", i + 1));
            want.push(row(v));
        }
    }
    want.push("[SUCCESS] Run the model_switch sample successfully.".to_string());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, want, "{out}");
}
