//! A production build: `ascendcl` without its default `emulator` feature. On a machine without
//! CANN such a binary has no backend, and the error must say so and what to do — not suggest an
//! emulator that is not there. Built and run by `cargo xtask test` with `--no-default-features`;
//! with the feature on this file is empty.
#![cfg(not(feature = "emulator"))]

use ascendcl::{BackendChoice, BackendKind, Error, LoadError, Runtime};

#[test]
fn without_cann_the_default_choice_is_a_clear_error() {
    // Naming the emulator names the feature (and installs nothing).
    let e = Runtime::with_backend(BackendChoice::Emulator).unwrap_err();
    assert!(
        matches!(e, Error::Load(LoadError::EmulatorUnavailable)),
        "{e:?}"
    );
    assert!(e.to_string().contains("`emulator` feature"), "{e}");

    // Whether this machine has a loadable CANN decides which answer is right.
    let cann_here = ascendcl::sys::load_cann().is_ok();
    match Runtime::with_backend(BackendChoice::Default) {
        Ok(rt) => {
            assert!(cann_here, "a runtime without the emulator and without CANN");
            assert_eq!(rt.backend().kind, Some(BackendKind::Cann));
        }
        Err(e) => {
            assert!(!cann_here, "CANN loads, yet the runtime failed: {e}");
            assert!(
                matches!(e, Error::Load(LoadError::NoBackend { .. })),
                "{e:?}"
            );
            let text = e.to_string();
            for needle in [
                "does not include the host emulator",
                "default-features = false",
                "set_env.sh",
                "tried:",
            ] {
                assert!(text.contains(needle), "{needle:?} missing from {text}");
            }
            assert!(!text.contains("ASCENDCL_BACKEND=emulator"), "{text}");
        }
    }
}
