//! The tests that change process-wide state of the runtime or the emulator: fault injection,
//! leak counts and forced resets, `aclInit` and `aclFinalize` themselves, the process-wide
//! exception and stream-state callbacks, the emulated SoC. Every test holds [`exclusive`] for its
//! whole run, so they run one at a time, in a process of their own (this binary), and each leaves
//! the state as it found it. Only on the emulator: the binary needs the `emulator` feature (fault
//! injection and leak reports come from the emulator crate itself), and on another backend each
//! test says so and stops.

#[path = "../common/mod.rs"]
mod common;

mod exception;
mod host_fn_subscription;
mod lifecycle_callbacks;
mod profile;
mod scenarios;
mod stream_state;
mod tracking_faults;

use std::sync::{Mutex, MutexGuard};

/// Held by every test of this binary for its whole run: the tests run one at a time.
#[derive(Debug)]
pub struct Exclusive {
    config: ascendcl_emu::Config,
    _lock: MutexGuard<'static, ()>,
}

/// Waits until no other test of the binary runs. On release (also when the test panicked) the
/// emulator's configuration is restored and every injected fault removed, so that a failed test
/// does not leave its state to the next.
pub fn exclusive() -> Exclusive {
    static LOCK: Mutex<()> = Mutex::new(());
    let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    Exclusive {
        config: ascendcl_emu::config(),
        _lock: lock,
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        ascendcl_emu::clear_faults();
        ascendcl_emu::set_config(self.config.clone());
    }
}
