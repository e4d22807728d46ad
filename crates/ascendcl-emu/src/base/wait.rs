//! Waiting inside stream tasks: futex waits and wakes on 32-bit words (which also work across
//! processes on shared mappings), polling with backoff for words that other writers update
//! without waking anyone, and the comparisons of `aclrtValueWait`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The longest a waiting task sleeps before it looks at its stream's cancellation flag again.
const SLICE: Duration = Duration::from_millis(20);

/// Sleeps while `*word == expected`, for at most `timeout` (spurious wake-ups are possible).
#[cfg(target_os = "linux")]
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the aligned 32-bit word and sleeps; `ts` outlives the call. The
    // shared (not PRIVATE) operation is used so that waiters in other processes mapping the same
    // memory are woken too.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        )
    };
}

/// Without futexes (macOS): a short sleep, after which the caller looks at the word again.
#[cfg(not(target_os = "linux"))]
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    if word.load(Ordering::Acquire) == expected {
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
    }
}

/// Wakes every waiter sleeping on `word`, in any process that maps it.
#[cfg(target_os = "linux")]
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only wakes sleepers; the word is a live aligned AtomicU32.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}

/// Without futexes (macOS) waiters poll: nothing to wake.
#[cfg(not(target_os = "linux"))]
pub(crate) fn futex_wake(_word: &AtomicU32) {}

/// Waits until `word` reaches `target` (wrap-around safe); false when `deadline` passed first.
pub(crate) fn wait_at_least(word: &AtomicU32, target: u32, deadline: Option<Instant>) -> bool {
    loop {
        let cur = word.load(Ordering::Acquire);
        if cur.wrapping_sub(target) as i32 >= 0 {
            return true;
        }
        let mut slice = SLICE;
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            slice = slice.min(left);
        }
        futex_wait(word, cur, slice);
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The condition held.
    Done,
    /// The deadline passed.
    TimedOut,
    /// The stream was aborted, stopped or destroyed by force.
    Cancelled,
}

/// Waits until `word` holds 1 and consumes it (sets it back to 0): the one-shot flag of a
/// notify. `timeout` None waits forever.
pub(crate) fn consume_flag(
    word: &AtomicU32,
    timeout: Option<Duration>,
    cancel: &AtomicBool,
) -> Outcome {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        if word
            .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Outcome::Done;
        }
        if cancel.load(Ordering::Acquire) {
            return Outcome::Cancelled;
        }
        let mut slice = SLICE;
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Outcome::TimedOut;
            }
            slice = slice.min(left);
        }
        futex_wait(word, 0, slice);
    }
}

/// Polls `done` with a growing pause (1 µs to 1 ms) until it holds or the stream is cancelled.
pub(crate) fn poll_until(cancel: &AtomicBool, mut done: impl FnMut() -> bool) -> Outcome {
    let mut pause = Duration::from_micros(1);
    loop {
        if done() {
            return Outcome::Done;
        }
        if cancel.load(Ordering::Acquire) {
            return Outcome::Cancelled;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(1));
    }
}

/// `aclrtValueWait`'s condition for the word `x` and operand `value`: GEQ 0 (a wrap-around-safe
/// "at least"), EQ 1, AND 2 (a common bit), NOR 3 (a bit clear in both).
pub(crate) fn value_condition(x: u64, value: u64, flag: u32) -> bool {
    match flag {
        0 => (x.wrapping_sub(value) as i64) >= 0,
        1 => x == value,
        2 => x & value != 0,
        _ => !(x | value) != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_conditions() {
        assert!(value_condition(5, 5, 0) && value_condition(6, 5, 0) && !value_condition(4, 5, 0));
        // Wrap-around: a counter that just wrapped is still "at least" a value near the top.
        assert!(value_condition(2, u64::MAX - 1, 0));
        assert!(value_condition(7, 7, 1) && !value_condition(7, 8, 1));
        assert!(value_condition(0b0110, 0b0100, 2) && !value_condition(0b0011, 0b0100, 2));
        assert!(value_condition(0b0001, 0b0010, 3));
        assert!(!value_condition(u64::MAX, 0, 3));
    }

    #[test]
    fn a_flag_is_consumed_once() {
        let w = AtomicU32::new(1);
        let cancel = AtomicBool::new(false);
        assert_eq!(consume_flag(&w, None, &cancel), Outcome::Done);
        assert_eq!(w.load(Ordering::SeqCst), 0);
        assert_eq!(
            consume_flag(&w, Some(Duration::from_millis(5)), &cancel),
            Outcome::TimedOut
        );
        cancel.store(true, Ordering::SeqCst);
        assert_eq!(consume_flag(&w, None, &cancel), Outcome::Cancelled);
    }
}
