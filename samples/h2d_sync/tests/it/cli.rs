//! Runs the built `h2d_sync` binary on the emulator and checks its output and exit status.
//!
//! The binary's stdout is a pipe here, as under `tee`: the kernel's `printf` lines must still
//! arrive in program order.

use crate::common::*;

#[test]
fn the_default_run_matches_the_reference() {
    if !emulator_build() {
        return;
    }
    let o = run(&[], &[]);
    let out = stdout(&o);
    assert!(
        o.status.success(),
        "status {:?}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let order = [
        "[INFO]  Backend: the host emulator",
        "[INFO]  Kernels: DeviceRead/DeviceWrite compiled for the host CPU",
        "[INFO]  Allocate memory on the host memory 0x",
        "[INFO]  Allocate memory on the device memory 0x",
        "[INFO]  Write the data 123 to the virtual memory 0x",
        "[INFO]  Source data: 123",
        "[INFO]  Copy memory from memory 0x",
        "Destination data: 123",
    ];
    let lines: Vec<usize> = order.iter().map(|n| line_of(&out, n)).collect();
    assert!(
        lines.windows(2).all(|w| w[0] < w[1]),
        "out of order {lines:?}:\n{out}"
    );
    // The kernel's line is its own, whole line, and the last one.
    // (device printf prefixes its block, as CANN's printf does)
    assert_eq!(
        out.lines().last(),
        Some("[AIV Block 0/1] Destination data: 123"),
        "{out}"
    );
    assert_eq!(value_after(&out, "Source data:").as_deref(), Some("123"));
    assert_eq!(
        value_after(&out, "Destination data:").as_deref(),
        Some("123")
    );
    assert!(!out.contains("[ERROR]"), "{out}");
}

#[test]
fn value_policy_and_size_are_honoured() {
    if !emulator_build() {
        return;
    }
    for (args, value) in [
        (&["--value", "7", "--policy", "normal-only"][..], "7"),
        (&["--value=-2147483648", "--size", "4"][..], "-2147483648"),
        (
            &[
                "--size",
                "3M",
                "--policy",
                "huge-first-p2p",
                "--value",
                "99",
            ][..],
            "99",
        ),
    ] {
        let o = run(args, &[]);
        let out = stdout(&o);
        assert!(o.status.success(), "{args:?}: {:?}\n{out}", o.status);
        assert_eq!(
            value_after(&out, "Source data:").as_deref(),
            Some(value),
            "{out}"
        );
        assert_eq!(
            value_after(&out, "Destination data:").as_deref(),
            Some(value),
            "{out}"
        );
    }
}

#[test]
fn an_injected_malloc_fault_is_one_error_line() {
    if !emulator_build() {
        return;
    }
    let o = run(&[], &[("ASCENDCL_EMU_FAULTS", "aclrtMalloc:1")]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("[ERROR]")).collect();
    assert_eq!(
        errors,
        [
            "[ERROR]  aclrtMalloc((void**)&devPtrB, 1048576, ACL_MEM_MALLOC_HUGE_FIRST) failed: \
             ACL_ERROR_RT_MEMORY_ALLOCATION (207001): injected fault (ASCENDCL_EMU_FAULTS / \
             ascendcl_emu::inject_fault)"
        ],
        "{out}"
    );
    // The host allocation before it succeeded; nothing after it ran.
    line_of(&out, "Allocate memory on the host memory");
    assert!(
        !out.contains("Allocate memory on the device memory"),
        "{out}"
    );
    assert!(!out.contains("Source data:"), "{out}");
    assert!(!out.contains("Destination data:"), "{out}");
}

#[test]
fn a_device_that_does_not_exist_is_one_sentence() {
    if !emulator_build() {
        return;
    }
    let o = run(&["--device", "99"], &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("[ERROR]")).collect();
    assert_eq!(errors.len(), 1, "{out}");
    let line = errors[0];
    assert!(
        line.starts_with(
            "[ERROR]  aclrtSetDevice(99) failed: ACL_ERROR_RT_INVALID_DEVICEID (107001): "
        ),
        "{line}"
    );
    // The function and the code once each.
    assert_eq!(line.matches("aclrtSetDevice").count(), 1, "{line}");
    assert_eq!(line.matches("107001").count(), 1, "{line}");
    assert!(!out.contains("Destination data:"), "{out}");
}

#[test]
fn the_banner_says_which_backend_and_why() {
    if !emulator_build() {
        return;
    }
    let o = run(&[], &[]);
    let out = stdout(&o);
    line_of(&out, "[INFO]  Backend: the host emulator");
    // The tests name the emulator through ASCENDCL_BACKEND.
    line_of(
        &out,
        "[INFO]  Backend chosen because the emulator was named (ASCENDCL_BACKEND=emulator",
    );
    line_of(&out, "[INFO]  SoC: Ascend910B2 (emulated)");
    line_of(&out, "[INFO]  ACL version: ");
}

#[test]
fn bad_arguments_print_one_error_and_the_usage_on_stdout() {
    for (args, error) in [
        (
            &["--policy", "fastest"][..],
            "[ERROR]  --policy \"fastest\": expected one of huge-first",
        ),
        (
            &["--frobnicate"][..],
            "[ERROR]  unknown argument \"--frobnicate\"",
        ),
        (&["--size"][..], "[ERROR]  --size needs a value"),
    ] {
        let o = run(args, &[]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with(error), "{args:?}: {out}");
        assert_eq!(lines.iter().filter(|l| l.starts_with("[ERROR]")).count(), 1);
        assert_eq!(
            lines[1],
            "usage: h2d_sync [--size BYTES] [--value N] [--policy POLICY] [--device ID]"
        );
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = run(&["--help"], &[]);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("usage: h2d_sync"));
}
