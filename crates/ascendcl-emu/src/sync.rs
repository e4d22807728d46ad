//! Small locking helpers that ignore poisoning (a panicking caller must not wedge the runtime).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Locks `m`, ignoring poisoning.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv` until `done` holds or `deadline` passes; returns the guard and whether `done`
/// holds.
pub(crate) fn wait_until<'a, T>(
    cv: &Condvar,
    mut g: MutexGuard<'a, T>,
    deadline: Option<Instant>,
    mut done: impl FnMut(&T) -> bool,
) -> (MutexGuard<'a, T>, bool) {
    loop {
        if done(&g) {
            return (g, true);
        }
        match deadline {
            None => g = cv.wait(g).unwrap_or_else(|e| e.into_inner()),
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return (g, false);
                }
                g = cv
                    .wait_timeout(g, d - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}
