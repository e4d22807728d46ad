//! A doorbell (an event count): one per rank, in the rank's shared region. A rank that waits
//! for anything — a peer's chunk, a free slot, every rank's arrival — sleeps on its own bell;
//! whoever changes what it waits for rings it. Ringing costs one atomic increment, plus a
//! futex wake only when the owner sleeps.

use super::futex;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::{Duration, Instant};

/// The words of a doorbell, as laid out in shared memory.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct Bell {
    /// Incremented by every ring; the futex word.
    count: AtomicU32,
    /// Threads sleeping on `count` (or about to).
    sleepers: AtomicU32,
}

/// Why a wait ended without its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupt {
    /// The deadline passed.
    Deadline,
    /// The stop check said so (the communicator was aborted).
    Stopped,
}

/// How a waiter polls before it sleeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patience {
    /// How long to poll the condition before sleeping.
    pub poll: Duration,
    /// Whether to spin (when there are fewer busy ranks than cores) or yield the CPU between
    /// polls.
    pub spin: bool,
}

/// The longest a sleeper sleeps before it looks at its condition, the deadline and the stop
/// check again (a missed ring, if any, costs at most this).
const SLICE: Duration = Duration::from_millis(50);

impl Bell {
    /// Wakes the owner if it waits.
    #[inline]
    pub fn ring(&self) {
        self.count.fetch_add(1, Ordering::Release);
        // Pairs with the fence in `wait`: either the sleeper sees the change that preceded this
        // ring, or this sees the sleeper.
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            futex::wake_all(&self.count);
        }
    }

    /// Waits until `ready` returns `Some`, `stop` returns true, or `deadline` passes.
    pub fn wait<T>(
        &self,
        patience: Patience,
        deadline: Option<Instant>,
        stop: impl FnMut() -> bool,
        ready: impl FnMut() -> Option<T>,
    ) -> Result<T, Interrupt> {
        wait_on(&self.count, &self.sleepers, patience, deadline, stop, ready)
    }
}

/// A counter many ranks wait on at once (the arrivals at a one-shot exchange): whoever brings
/// it to what they wait for wakes them all with one call.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct Counter {
    value: AtomicU32,
    sleepers: AtomicU32,
}

impl Counter {
    /// Adds one; returns the new value. Wakes the sleepers when it is `wake_at`.
    pub fn arrive(&self, wake_at: u32) -> u32 {
        let now = self.value.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        if now == wake_at {
            self.wake();
        }
        now
    }

    /// Wakes every sleeper (to look at its condition, or at an abort).
    pub fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            futex::wake_all(&self.value);
        }
    }

    /// Whether the counter reached `target` (modulo wrapping).
    pub fn reached(&self, target: u32) -> bool {
        self.value.load(Ordering::Acquire).wrapping_sub(target) as i32 >= 0
    }

    /// Waits until the counter reaches `target`, `stop` returns true or `deadline` passes.
    pub fn wait(
        &self,
        target: u32,
        patience: Patience,
        deadline: Option<Instant>,
        stop: impl FnMut() -> bool,
    ) -> Result<(), Interrupt> {
        wait_on(
            &self.value,
            &self.sleepers,
            patience,
            deadline,
            stop,
            || self.reached(target).then_some(()),
        )
    }
}

/// Waits on the futex word `word` (`sleepers` counting the threads asleep on it) until `ready`
/// returns `Some`, `stop` returns true, or `deadline` passes.
fn wait_on<T>(
    word: &AtomicU32,
    sleepers: &AtomicU32,
    patience: Patience,
    deadline: Option<Instant>,
    mut stop: impl FnMut() -> bool,
    mut ready: impl FnMut() -> Option<T>,
) -> Result<T, Interrupt> {
    {
        if let Some(v) = ready() {
            return Ok(v);
        }
        let start = Instant::now();
        let poll_end = start + patience.poll;
        loop {
            let now = Instant::now();
            if now >= poll_end {
                break;
            }
            if patience.spin {
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::yield_now();
            }
            if let Some(v) = ready() {
                return Ok(v);
            }
        }
        loop {
            if stop() {
                return Err(Interrupt::Stopped);
            }
            let left = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return ready().ok_or(Interrupt::Deadline);
                    }
                    (d - now).min(SLICE)
                }
                None => SLICE,
            };
            let seen = word.load(Ordering::Acquire);
            sleepers.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if let Some(v) = ready() {
                sleepers.fetch_sub(1, Ordering::Relaxed);
                return Ok(v);
            }
            futex::wait(word, seen, left);
            sleepers.fetch_sub(1, Ordering::Relaxed);
            if let Some(v) = ready() {
                return Ok(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    const PATIENT: Patience = Patience {
        poll: Duration::ZERO,
        spin: false,
    };

    #[test]
    fn a_ring_wakes_a_sleeper_and_deadlines_and_stops_end_waits() {
        let bell = Arc::new(Bell::default());
        let flag = Arc::new(AtomicBool::new(false));
        let t = {
            let (bell, flag) = (Arc::clone(&bell), Arc::clone(&flag));
            std::thread::spawn(move || {
                bell.wait(
                    PATIENT,
                    None,
                    || false,
                    || flag.load(Ordering::Acquire).then_some(7),
                )
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        flag.store(true, Ordering::Release);
        bell.ring();
        assert_eq!(t.join().unwrap(), Ok(7));
        let soon = Some(Instant::now() + Duration::from_millis(10));
        assert_eq!(
            bell.wait(PATIENT, soon, || false, || None::<()>),
            Err(Interrupt::Deadline)
        );
        assert_eq!(
            bell.wait(PATIENT, None, || true, || None::<()>),
            Err(Interrupt::Stopped)
        );
    }
}
