//! The emulator's locks: `parking_lot` locks that carry a [`Rank`]. Locks are taken in rank order
//! (a thread holding a lock takes only locks of later ranks), which a debug build checks on every
//! acquisition: taking a lock of the same or an earlier rank than one the thread holds panics
//! before it blocks, so a lock-order inversion fails a test instead of deadlocking a program.
//! A lock whose holder panicked is poisoned: the next acquisition panics with the lock's name (the
//! C layer turns that into 507000 and a message), instead of using state a panic left half
//! updated.

pub(crate) use super::rank::Rank;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Which ranks the calling thread holds (debug builds only).
#[cfg(debug_assertions)]
mod held {
    use super::Rank;
    use std::cell::RefCell;

    thread_local! {
        static HELD: RefCell<Vec<Rank>> = const { RefCell::new(Vec::new()) };
    }

    /// Records that the thread takes `rank`; panics when it holds `rank` or a later one.
    pub(super) fn enter(rank: Rank) {
        let worst = HELD
            .try_with(|h| {
                let mut h = h.borrow_mut();
                let worst = h.iter().copied().max();
                if worst.is_none_or(|w| w < rank) {
                    h.push(rank);
                }
                worst
            })
            .ok()
            .flatten();
        match worst {
            Some(w) if w >= rank => panic!(
                "ascendcl-emu lock order: taking the {} lock ({rank:?}, rank {}) while holding \
                 the {} lock ({w:?}, rank {}); locks are taken in the order of base/rank.rs",
                rank.name(),
                rank as u8,
                w.name(),
                w as u8
            ),
            _ => super::super::rank::observe(worst, rank),
        }
    }

    /// Records that the thread released `rank`.
    pub(super) fn exit(rank: Rank) {
        let _ = HELD.try_with(|h| {
            let mut h = h.borrow_mut();
            if let Some(i) = h.iter().rposition(|r| *r == rank) {
                h.remove(i);
            }
        });
    }
}

#[cfg(not(debug_assertions))]
mod held {
    use super::Rank;
    #[inline(always)]
    pub(super) fn enter(_: Rank) {}
    #[inline(always)]
    pub(super) fn exit(_: Rank) {}
}

/// Reports a poisoned lock.
#[cold]
#[inline(never)]
fn poisoned(rank: Rank) -> ! {
    panic!(
        "ascendcl-emu: the {} lock is poisoned: a panic interrupted an update it guarded, so the \
         state it protects may be inconsistent (please report the first panic)",
        rank.name()
    )
}

/// What every guard does on release: the rank leaves the thread's list, and a release by a panic
/// that started while the lock was held poisons it (a lock taken and released by code that runs
/// during unwinding, a destructor, is not poisoned).
struct Held<'a> {
    rank: Rank,
    poison: &'a AtomicBool,
    /// Whether the thread was already panicking when it took the lock.
    panicking: bool,
}

impl Held<'_> {
    #[inline]
    fn take(rank: Rank, poison: &AtomicBool) -> Held<'_> {
        if poison.load(Ordering::Acquire) {
            poisoned(rank);
        }
        held::enter(rank);
        Held {
            rank,
            poison,
            panicking: std::thread::panicking(),
        }
    }
}

impl Drop for Held<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.panicking && std::thread::panicking() {
            self.poison.store(true, Ordering::Release);
        }
        held::exit(self.rank);
    }
}

/// A mutex with a rank.
pub(crate) struct Mutex<T> {
    rank: Rank,
    poison: AtomicBool,
    inner: parking_lot::Mutex<T>,
}

impl<T: std::fmt::Debug> std::fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutex")
            .field("rank", &self.rank)
            .finish_non_exhaustive()
    }
}

impl<T: Default> Mutex<T> {
    /// A mutex of `rank` holding the default value.
    pub(crate) fn ranked(rank: Rank) -> Mutex<T> {
        Mutex::new(rank, T::default())
    }
}

impl<T> Mutex<T> {
    /// A mutex of `rank` holding `value`.
    pub(crate) const fn new(rank: Rank, value: T) -> Mutex<T> {
        Mutex {
            rank,
            poison: AtomicBool::new(false),
            inner: parking_lot::Mutex::new(value),
        }
    }

    /// Takes the lock (in rank order; a poisoned lock panics).
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        let held = Held::take(self.rank, &self.poison);
        MutexGuard {
            _held: held,
            inner: self.inner.lock(),
        }
    }

    /// The value, when the lock is no longer shared.
    pub(crate) fn into_inner(self) -> T {
        if self.poison.load(Ordering::Acquire) {
            poisoned(self.rank);
        }
        self.inner.into_inner()
    }
}

/// The guard of a [`Mutex`].
pub(crate) struct MutexGuard<'a, T> {
    // Field order: a release during a panic poisons the lock before it is unlocked.
    _held: Held<'a>,
    inner: parking_lot::MutexGuard<'a, T>,
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

/// A reader-writer lock with a rank (readers and writers alike take it in rank order).
pub(crate) struct RwLock<T> {
    rank: Rank,
    poison: AtomicBool,
    inner: parking_lot::RwLock<T>,
}

impl<T> RwLock<T> {
    /// A lock of `rank` holding `value`.
    pub(crate) const fn new(rank: Rank, value: T) -> RwLock<T> {
        RwLock {
            rank,
            poison: AtomicBool::new(false),
            inner: parking_lot::RwLock::new(value),
        }
    }

    /// Takes the lock to read.
    #[inline]
    pub(crate) fn read(&self) -> ReadGuard<'_, T> {
        let held = Held::take(self.rank, &self.poison);
        ReadGuard {
            _held: held,
            inner: self.inner.read(),
        }
    }

    /// Takes the lock to write.
    #[inline]
    pub(crate) fn write(&self) -> WriteGuard<'_, T> {
        let held = Held::take(self.rank, &self.poison);
        WriteGuard {
            _held: held,
            inner: self.inner.write(),
        }
    }
}

/// A read guard of a [`RwLock`].
pub(crate) struct ReadGuard<'a, T> {
    _held: Held<'a>,
    inner: parking_lot::RwLockReadGuard<'a, T>,
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

/// A write guard of a [`RwLock`].
pub(crate) struct WriteGuard<'a, T> {
    _held: Held<'a>,
    inner: parking_lot::RwLockWriteGuard<'a, T>,
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

/// The one lock outside the rank order: a reader-writer lock that a signal handler reads (the
/// device address space's registry, read by the `SIGSEGV` handler), where the ranks' bookkeeping
/// cannot run. The handler only tries it (`try_read`: no blocking, no allocation; a `std` lock,
/// whose release is at most a futex wake). It is a leaf: no lock is taken while it is held. A
/// poisoned lock is used as it is (its holders change one map entry at a time).
pub(crate) struct LeafRwLock<T>(std::sync::RwLock<T>);

/// A read guard of a [`LeafRwLock`].
pub(crate) type LeafReadGuard<'a, T> = std::sync::RwLockReadGuard<'a, T>;
/// A write guard of a [`LeafRwLock`].
pub(crate) type LeafWriteGuard<'a, T> = std::sync::RwLockWriteGuard<'a, T>;

impl<T> LeafRwLock<T> {
    /// A lock holding `value`.
    pub(crate) const fn new(value: T) -> LeafRwLock<T> {
        LeafRwLock(std::sync::RwLock::new(value))
    }

    /// Takes the lock to read.
    pub(crate) fn read(&self) -> LeafReadGuard<'_, T> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the lock to write.
    pub(crate) fn write(&self) -> LeafWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the lock to read if no writer holds it (from a signal handler).
    pub(crate) fn try_read(&self) -> Option<LeafReadGuard<'_, T>> {
        match self.0.try_read() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

/// A condition variable for [`Mutex`] guards. While a thread waits, the lock is released but its
/// rank stays on the thread's list: the thread takes nothing else until it wakes.
#[derive(Debug, Default)]
pub(crate) struct Condvar(parking_lot::Condvar);

impl Condvar {
    /// A condition variable.
    pub(crate) const fn new() -> Condvar {
        Condvar(parking_lot::Condvar::new())
    }

    /// Waits for a notification.
    #[inline]
    pub(crate) fn wait<T>(&self, g: &mut MutexGuard<'_, T>) {
        self.0.wait(&mut g.inner);
    }

    /// Waits for a notification or `deadline`; whether the deadline passed.
    #[inline]
    pub(crate) fn wait_until_instant<T>(
        &self,
        g: &mut MutexGuard<'_, T>,
        deadline: Instant,
    ) -> bool {
        self.0.wait_until(&mut g.inner, deadline).timed_out()
    }

    /// Wakes every waiter.
    #[inline]
    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
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
            None => cv.wait(&mut g),
            Some(d) => {
                if Instant::now() >= d {
                    return (g, false);
                }
                cv.wait_until_instant(&mut g, d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn locks_in_rank_order_are_taken() {
        let a = Mutex::new(Rank::Stream, 1);
        let b = Mutex::new(Rank::Event, 2);
        let ga = a.lock();
        let gb = b.lock();
        assert_eq!(*ga + *gb, 3);
        drop(gb);
        drop(ga);
        // Released out of order, then taken again.
        let ga = a.lock();
        let gb = b.lock();
        drop(ga);
        drop(gb);
        let _ga = a.lock();
    }

    #[cfg(debug_assertions)]
    #[test]
    fn a_lock_taken_out_of_order_panics_before_it_blocks() {
        let a = Arc::new(Mutex::new(Rank::Stream, ()));
        let b = Arc::new(Mutex::new(Rank::Event, ()));
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let r = std::thread::spawn(move || {
            let _gb = b2.lock();
            let _ga = a2.lock();
        })
        .join();
        let msg = r.expect_err("out of order must panic");
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("lock order"), "{msg}");
        assert!(msg.contains(Rank::Stream.name()), "{msg}");
        // The refused lock was never taken, so it is not poisoned; the one held while the thread
        // panicked is.
        let _ga = a.lock();
        assert!(b.poison.load(Ordering::Acquire));
    }

    #[cfg(debug_assertions)]
    #[test]
    fn the_same_rank_twice_panics() {
        let r = std::thread::spawn(|| {
            let a = RwLock::new(Rank::MemoryTable, ());
            let _r1 = a.read();
            let _r2 = a.read();
        })
        .join();
        assert!(
            r.is_err(),
            "a second read of one lock by one thread must panic"
        );
    }

    #[test]
    fn a_lock_whose_holder_panicked_is_reported() {
        let a = Arc::new(Mutex::new(Rank::Limits, 0u32));
        let a2 = Arc::clone(&a);
        let r = std::thread::spawn(move || {
            let mut g = a2.lock();
            *g = 1;
            panic!("interrupted");
        })
        .join();
        assert!(r.is_err());
        let a3 = Arc::clone(&a);
        let msg = std::thread::spawn(move || {
            let _g = a3.lock();
        })
        .join()
        .expect_err("a poisoned lock must be reported");
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("poisoned"), "{msg}");
        assert!(msg.contains(Rank::Limits.name()), "{msg}");
    }

    #[test]
    fn a_lock_taken_while_unwinding_is_not_poisoned() {
        struct Releases<'a>(&'a Mutex<u32>);
        impl Drop for Releases<'_> {
            fn drop(&mut self) {
                *self.0.lock() += 1;
            }
        }
        let a = Mutex::new(Rank::Limits, 0u32);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _r = Releases(&a);
            panic!("unwinds through a destructor that takes the lock");
        }));
        assert!(r.is_err());
        assert_eq!(*a.lock(), 1);
    }

    #[test]
    fn a_condvar_wait_releases_the_lock() {
        let m = Arc::new((Mutex::new(Rank::Event, false), Condvar::new()));
        let m2 = Arc::clone(&m);
        let t = std::thread::spawn(move || {
            *m2.0.lock() = true;
            m2.1.notify_all();
        });
        let g = m.0.lock();
        let (g, ok) = wait_until(
            &m.1,
            g,
            Some(Instant::now() + std::time::Duration::from_secs(5)),
            |v| *v,
        );
        assert!(ok && *g);
        drop(g);
        t.join().unwrap();
    }
}
