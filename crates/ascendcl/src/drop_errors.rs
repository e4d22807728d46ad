//! Failures during `Drop`, kept for the program to read.
//!
//! Every handle of this crate has an explicit consuming method that returns the release's
//! `Result` (`Stream::destroy`, `DeviceBuffer::free`, `Device::reset`, ...). A handle that is simply
//! dropped releases itself on a best-effort basis: `Drop` never panics, and a failure is pushed onto
//! a process-wide list that [`take_drop_errors`] drains.

use crate::Error;
use std::sync::Mutex;

/// At most this many failures are kept; later ones are counted only.
const CAP: usize = 1024;

struct Sticky {
    errors: Vec<Error>,
    overflow: usize,
}

static DROP_ERRORS: Mutex<Sticky> = Mutex::new(Sticky {
    errors: Vec::new(),
    overflow: 0,
});

fn lock() -> std::sync::MutexGuard<'static, Sticky> {
    DROP_ERRORS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Returns and clears the failures reported by `Drop` implementations since the last call, oldest
/// first. The list is process-wide (it holds failures from every thread) and keeps at most 1024
/// entries; see [`drop_errors_overflow`] for the number discarded.
pub fn take_drop_errors() -> Vec<Error> {
    let mut s = lock();
    s.overflow = 0;
    std::mem::take(&mut s.errors)
}

/// How many drop failures were discarded because the list was full, since the last
/// [`take_drop_errors`].
pub fn drop_errors_overflow() -> usize {
    lock().overflow
}

/// Records the failure of a best-effort release.
pub(crate) fn report(r: crate::Result<()>) {
    if let Err(e) = r {
        crate::trace::event!(
            ERROR,
            api = e.api().unwrap_or(""),
            error = %e,
            "a release in Drop failed (also kept for take_drop_errors)"
        );
        let mut s = lock();
        if s.errors.len() < CAP {
            s.errors.push(e);
        } else {
            s.overflow += 1;
        }
    }
}
