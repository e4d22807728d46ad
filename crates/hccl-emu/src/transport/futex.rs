//! Futex waits and wakes on 32-bit words. The words may lie in shared memory mapped by several
//! processes, so the shared (not the process-private) futex operations are used.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `word` holds `expected`, for at most `timeout` (or until woken; spurious
/// returns are possible, so callers look at their condition again).
#[cfg(target_os = "linux")]
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    use rustix::thread::futex;
    let ts = futex::Timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean: look again.
    let _ = futex::wait(word, futex::Flags::empty(), expected, Some(&ts));
}

/// Without futexes the waiter sleeps briefly and looks again.
#[cfg(not(target_os = "linux"))]
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    if word.load(std::sync::atomic::Ordering::Acquire) == expected {
        std::thread::sleep(timeout.min(Duration::from_micros(200)));
    }
}

/// Wakes every thread sleeping on `word`, in any process.
#[cfg(target_os = "linux")]
pub(crate) fn wake_all(word: &AtomicU32) {
    let _ =
        rustix::thread::futex::wake(word, rustix::thread::futex::Flags::empty(), i32::MAX as u32);
}

/// Without futexes waiters poll: nothing to wake.
#[cfg(not(target_os = "linux"))]
pub(crate) fn wake_all(_word: &AtomicU32) {}
