//! The AscendC host layer on its own: the programs of tests/cpp (one per API family, sharing
//! tests/cpp/harness.h), each compiled with the host C++ compiler (`$CXX`, else `c++`) with
//! every warning an error and run with four block threads.

use std::path::Path;
use std::process::{Command, Output};

/// Compiles and runs `tests/cpp/<name>.cpp`; asserts that every check passed.
fn run_checks(name: &str) -> Output {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ascendc_host_{name}"));
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let compiled = Command::new(&cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
            "-I",
        ])
        .arg(manifest.join("include"))
        .arg(manifest.join(format!("tests/cpp/{name}.cpp")))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler {cxx}: {e}"));
    assert!(
        compiled.status.success(),
        "{name}.cpp does not compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&exe)
        .env("ASCENDC_HOST_THREADS", "4")
        .output()
        .expect("the test program runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{name}: {stderr}");
    assert!(stderr.ends_with("all checks passed\n"), "{name}: {stderr}");
    run
}

#[test]
fn host_layer_checks_pass() {
    let run = run_checks("host_layer");
    let mut expected = String::new();
    for b in 0..8 {
        expected.push_str(&format!(
            "[AIV Block {b}/8] block {b} line 1\n[AIV Block {b}/8] block {b} line 2\n"
        ));
    }
    expected.push_str("--\n[AIV Block 0/1] DumpTensor: desc=5, 4 element(s): -2 -1 0 1\n");
    assert_eq!(String::from_utf8_lossy(&run.stdout), expected);
}

#[test]
fn vector_instruction_forms() {
    run_checks("vector_forms");
}

#[test]
fn compare_and_select() {
    run_checks("compare_select");
}

#[test]
fn gathering() {
    run_checks("gather");
}

#[test]
fn reductions() {
    run_checks("reduce");
}

#[test]
fn cube_path() {
    run_checks("cube");
}

#[test]
fn matmul_high_level_api() {
    run_checks("matmul");
}

#[test]
fn data_movement_forms() {
    run_checks("copy_forms");
}
