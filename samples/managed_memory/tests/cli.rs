//! Runs the built `managed_memory` binary on the emulator: the computation and its check, and
//! the skip path of a SoC without managed memory (the allocation failing with 207000).

use std::process::{Command, Output};

fn run(faults: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_managed_memory"));
    c.env("ASCENDCL_BACKEND", "emulator");
    match faults {
        Some(f) => c.env("ASCENDCL_EMU_FAULTS", f),
        None => c.env_remove("ASCENDCL_EMU_FAULTS"),
    };
    c.output().expect("run managed_memory")
}

#[test]
fn computes_on_managed_memory() {
    let o = run(None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let n = lines.len();
    assert_eq!(
        lines[n - 3..],
        [
            "[INFO]  Run the uvm_allocate sample successfully.",
            "error ratio: 0.0000, tolerance: 0.0010",
            "[SUCCESS] result correct"
        ],
        "{out}"
    );
}

#[test]
fn skips_where_managed_memory_is_not_supported() {
    let o = run(Some("aclrtMemAllocManaged:*=207000"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(
            "[SKIP] This SoC has no managed memory: aclrtMemAllocManaged returned error code \
             207000\n"
        ),
        "{out}"
    );
    assert!(
        out.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("[SUCCESS]"),
        "{out}"
    );
}
