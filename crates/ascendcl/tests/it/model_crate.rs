//! A program outside the workspace builds and runs: `tests/fixtures/model_crate` (its own
//! `[workspace]`, `ascendcl` its only dependency, by path) holds `struct Model { device: Device,
//! weights: DeviceBuffer<f32>, stream: Stream }`, builds one in `main`, moves it into a thread,
//! copies in and out there, compares, and gets the model back; it also checks with
//! `assert_send_sync` every handle type the crate documentation calls thread-safe.
//!
//! The fixture is copied to the test's scratch directory with its path dependency pointed at
//! this crate, and built into the workspace's own target directory with the workspace's profile
//! (from the repository's `.cargo/config.toml`, which cargo reads below it): the third-party
//! crates are already built there, and its builds of the workspace crates sit beside the
//! workspace's (their metadata differs), so neither rebuilds the other. The first run compiles
//! `ascendcl` and the crates under it once more; later runs only check that they are fresh.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `text` to `path` unless it already holds it (an untouched file keeps the build fresh).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

/// The fixture, copied under the scratch directory; returns its directory.
fn fixture() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = crate_dir.join("tests/fixtures/model_crate");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ascendcl-model-user");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(src.join("Cargo.toml"))
        .unwrap()
        .replace(
            "path = \"../../..\"",
            &format!("path = {:?}", crate_dir.display().to_string()),
        );
    assert!(manifest.contains(&*crate_dir.to_string_lossy()));
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(
        &dir.join("src/main.rs"),
        &std::fs::read_to_string(src.join("src/main.rs")).unwrap(),
    );
    // The workspace's lock file pins the versions it has already fetched and built.
    let lock = crate_dir.join("../../Cargo.lock");
    std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
    dir
}

#[test]
fn an_outside_crate_moves_a_model_into_a_thread_and_gets_it_back() {
    let dir = fixture();
    // `CARGO_TARGET_TMPDIR` is `<target dir>/tmp`.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["run", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the program failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "[INFO]  model loaded on device 0: 1024 weights, one stream",
            "[INFO]  worker thread: copied 256 values in and out, read 256 weights uploaded by the main thread",
            "[INFO]  main thread: the returned model's stream is on device 0",
            "[SUCCESS] a model moved into a thread, used there and returned",
        ],
        "{stdout}"
    );
}
