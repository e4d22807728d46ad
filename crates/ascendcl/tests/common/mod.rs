//! Shared helpers. Every test runs on the backend `ASCENDCL_BACKEND` names (unset: CANN when
//! installed, else the host emulator), so `ASCENDCL_BACKEND=cann cargo test -p ascendcl` qualifies
//! a real NPU. Tests that need what only the emulator offers (fault injection, leak reports, its
//! device count) skip themselves on another backend, saying why on stderr.
#![allow(dead_code, unused_imports)]

/// The typed error codes, for every test that uses these helpers.
pub use ascendcl::AclError;
use ascendcl::{BackendKind, Device, Runtime};
use std::io::Write;
use std::sync::{Mutex, MutexGuard};

/// A runtime handle on the backend named by `ASCENDCL_BACKEND`. On a real runtime one handle is
/// kept for the whole process, so that parallel tests never finalise and re-initialise it (CANN
/// may refuse `aclInit` after `aclFinalize`); the emulator is finalised and re-initialised freely.
pub fn rt() -> Runtime {
    let r = Runtime::new().unwrap_or_else(|e| panic!("the runtime initialises: {e}"));
    if !emulator_active() {
        Runtime::global().expect("a process-wide runtime handle");
    }
    r
}

/// Whether the process's backend is the emulator.
pub fn emulator_active() -> bool {
    ascendcl::sys::active().is_some_and(|b| b.kind == BackendKind::Emulator)
}

/// Prints a skip notice where `cargo test` shows it even for passing tests (straight to the
/// process's stderr, not through the captured `eprintln!`).
pub fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

/// `true` on the emulator; elsewhere prints why `test` is skipped and returns `false`.
pub fn needs_emulator(test: &str, feature: &str) -> bool {
    if emulator_active() {
        return true;
    }
    let active = ascendcl::sys::active().map_or("no".to_string(), |b| b.kind.to_string());
    skip(
        test,
        &format!("needs the emulator's {feature}; the active backend is {active}"),
    );
    false
}

/// `true` when the backend has at least `n` devices; otherwise prints why `test` is skipped.
pub fn needs_devices(r: &Runtime, n: u32, test: &str) -> bool {
    let have = r.device_count().unwrap_or(0);
    if have >= n {
        return true;
    }
    skip(test, &format!("needs {n} devices; the backend has {have}"));
    false
}

/// Asserts that `r` failed with the aclError `code` (an `AclError` constant).
#[track_caller]
pub fn assert_code<T: std::fmt::Debug>(
    r: ascendcl::Result<T>,
    code: impl Into<ascendcl::AclError>,
) -> ascendcl::Error {
    let e = r.expect_err("expected an error");
    assert_eq!(e.code(), Some(code.into()), "unexpected error: {e}");
    e
}

/// Asserts that `r` is an argument error rejected before FFI.
#[track_caller]
pub fn assert_argument<T: std::fmt::Debug>(r: ascendcl::Result<T>) -> ascendcl::Error {
    let e = r.expect_err("expected an argument error");
    assert!(
        matches!(e, ascendcl::Error::Argument { .. }),
        "expected an argument error, got {e:?}"
    );
    e
}

/// The device of the tests whose tasks fail on purpose (failing kernels, expired waits, stopped
/// streams): the last one, device 1 of the emulator. A device-wide synchronisation reports, and
/// takes, the failure of any stream of its device, and a device's error details keep its last
/// kernel failure; the tests that expect either to be clean use device 0, so the tests of a binary,
/// which share one process, keep failures off it. (With a single device both are device 0.)
pub fn failure_device(r: &Runtime) -> Device {
    let n = r.device_count().expect("aclrtGetDeviceCount");
    r.device(n.saturating_sub(1) as i32)
        .expect("the last device opens")
}

/// Held by the tests that set or read device 0's resource limits, which are device-wide.
pub fn device_limits() -> MutexGuard<'static, ()> {
    static LIMITS: Mutex<()> = Mutex::new(());
    LIMITS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The host-mode kernel binary of tests/kernels/module_kernels.c, compiled once per test binary
/// with `$CC` (else `cc`).
pub fn module_kernels() -> &'static std::path::Path {
    use std::path::{Path, PathBuf};
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/module_kernels.c");
        let so = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ascendcl_module_kernels.so");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let out = std::process::Command::new(&cc)
            .args(["-std=c11", "-O1", "-shared", "-fPIC", "-fvisibility=hidden"])
            .arg(&src)
            .arg("-o")
            .arg(&so)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        so
    })
}
