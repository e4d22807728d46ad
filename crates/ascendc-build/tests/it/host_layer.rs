//! The AscendC host layer on its own: tests/cpp/host_layer.cpp, compiled with the host C++
//! compiler (`$CXX`, else `c++`) with every warning an error, run with four block threads.

use std::path::Path;
use std::process::Command;

#[test]
fn host_layer_checks_pass() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ascendc_host_layer_test");
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
        .arg(manifest.join("tests/cpp/host_layer.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler {cxx}: {e}"));
    assert!(
        compiled.status.success(),
        "host_layer.cpp does not compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&exe)
        .env("ASCENDC_HOST_THREADS", "4")
        .output()
        .expect("the test program runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.ends_with("all checks passed\n"), "{stderr}");
    let mut expected = String::new();
    for b in 0..8 {
        expected.push_str(&format!("block {b} line 1\nblock {b} line 2\n"));
    }
    expected.push_str("--\nDumpTensor: desc=5, 4 element(s): -2 -1 0 1\n");
    assert_eq!(String::from_utf8_lossy(&run.stdout), expected);
}
