//! Runs the built sample on the emulator: the limit's lines, one `Hello World` per block of the
//! limit, and the verdict.

use std::process::Command;

#[test]
fn one_hello_per_block_of_the_limit() {
    let o = Command::new(env!("CARGO_BIN_EXE_launch_kernel_with_reslimit"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let hellos: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.ends_with("Hello World"))
        .collect();
    let want: Vec<String> = (0..8)
        .map(|i| format!("[AIV Block {i}/8] Hello World"))
        .collect();
    assert_eq!(hellos, want, "{out}");
    let infos: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("[INFO]  "))
        .collect();
    assert_eq!(
        infos,
        [
            "ACL initialized.",
            "Device 0 selected.",
            "Stream created.",
            "Device resource limit type 0 set to 8.",
            "Current device resource limit type 0 is 8.",
            "Run the launch_kernel_with_reslimit sample successfully.",
        ],
        "{out}"
    );
    assert!(
        out.ends_with("[SUCCESS] Launch kernels under resource limits successfully.\n"),
        "{out}"
    );
}
