//! The short poll a thread makes before it sleeps on a stream's condition variable: a hand-off
//! caught while polling costs well under a microsecond instead of two sleeping wake-ups.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// How long a waiter (the worker waiting for work, a thread synchronising the stream) polls
/// before it sleeps on the condition variable: a hand-off caught while polling costs well under
/// a microsecond instead of two sleeping wake-ups. Bounded, so an idle stream sleeps.
const POLL: Duration = Duration::from_micros(20);
/// The part of [`POLL`] spent in a pure spin (`spin_loop`); the rest yields the CPU between
/// polls. No pure spin on a single CPU, where the other thread cannot progress meanwhile.
const SPIN: Duration = Duration::from_micros(5);

/// Polls `done` for up to [`POLL`] (or until `deadline`); whether it became true.
pub(crate) fn poll(deadline: Option<Instant>, done: impl Fn() -> bool) -> bool {
    static MULTI_CPU: LazyLock<bool> =
        LazyLock::new(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1));
    if done() {
        return true;
    }
    let start = Instant::now();
    let mut end = start + POLL;
    if let Some(d) = deadline {
        end = end.min(d);
    }
    let spin_end = if *MULTI_CPU { start + SPIN } else { start };
    loop {
        let now = Instant::now();
        if now >= end {
            return done();
        }
        if now < spin_end {
            for _ in 0..16 {
                std::hint::spin_loop();
                if done() {
                    return true;
                }
            }
        } else {
            std::thread::yield_now();
            if done() {
                return true;
            }
        }
    }
}
