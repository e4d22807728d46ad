//! Runs the built `custom_allocator` binary on the emulator and checks its lines, in order.

use std::process::Command;

#[test]
fn prints_the_reference_lines_in_order() {
    let o = Command::new(env!("CARGO_BIN_EXE_custom_allocator"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run custom_allocator");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "[INFO]  CustomAlloc size=256",
            "[INFO]  CustomAllocAdvise size=128",
            "[INFO]  CustomAlloc size=128",
            "[INFO]  CustomFree invoked",
            "[INFO]  CustomFree invoked",
        ],
        "{out}"
    );
    assert!(
        lines[5].starts_with("[INFO]  Allocator desc queried: descOut=0x")
            && lines[5].ends_with(", allocCount=2, freeCount=2"),
        "{out}"
    );
    assert_eq!(
        lines[6..],
        ["[SUCCESS] Run the custom_allocator sample successfully."]
    );
}
