//! Runs the built `vector_add` binary on the emulator and checks its steps and verdict.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vector_add"))
        .args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run vector_add")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn default_run_succeeds_with_every_step() {
    let o = run(&[]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("[INFO]  Backend: "), "{out}");
    assert_eq!(
        &lines[1..],
        [
            "[INFO]  Kernels: vector_add built in host mode by ascendc-build",
            "[INFO]  n = 4096, alpha = 2.5, blocks = 8",
            "[INFO]  Copy a and b to the device (16384 bytes each)",
            "[INFO]  Launch vector_add on 8 block(s): dst = a + alpha * b",
            "[INFO]  Copy dst back and check it on the host",
            "[SUCCESS] dst = a + alpha * b for all 4096 elements; dst[4095] = -38.125",
        ]
    );
}

#[test]
fn odd_sizes_and_block_counts() {
    for (n, blocks) in [("1", "1"), ("1001", "3"), ("100000", "16"), ("7", "8")] {
        let o = run(&["--n", n, "--blocks", blocks, "--alpha", "-0.75"]);
        let out = stdout(&o);
        assert!(o.status.success(), "{n} {blocks}: {out}");
        assert!(
            out.contains(&format!(
                "[SUCCESS] dst = a + alpha * b for all {n} elements"
            )),
            "{out}"
        );
    }
}

#[test]
fn zero_blocks_is_refused_before_the_launch() {
    let o = run(&["--blocks", "0"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("[ERROR] cannot launch vector_add with 0 blocks"),
        "{out}"
    );
    assert!(out.ends_with("[FAILURE] vector_add did not run\n"), "{out}");
}

#[test]
fn bad_options_print_the_usage() {
    let o = run(&["--n", "many"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.starts_with("[ERROR] --n many: invalid digit"), "{out}");
    assert!(out.contains("usage: vector_add"), "{out}");
}
