//! Shared helpers: every test runs on the host emulator and shares one runtime per process.
#![allow(dead_code)]

use ascendcl::{BackendChoice, Runtime};

/// A runtime handle on the emulator.
pub fn rt() -> Runtime {
    Runtime::with_backend(BackendChoice::Emulator).expect("the emulator backend initialises")
}

/// Asserts that `r` failed with the numeric aclError `code`.
#[track_caller]
pub fn assert_code<T: std::fmt::Debug>(r: ascendcl::Result<T>, code: i32) -> ascendcl::Error {
    let e = r.expect_err("expected an error");
    assert_eq!(e.code(), Some(code), "unexpected error: {e}");
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
