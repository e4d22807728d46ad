//! Device memory access for kernel tasks, which dereference program addresses (the `__gm__`
//! pointers of host-compiled kernels). A launch holds a [`KernelAccess`]; each block runs inside
//! [`KernelAccess::run`] on an emulator thread.
//!
//! * With protection keys, the block's thread grants itself the device key for the block and
//!   drops it after: exact, per thread.
//! * With page protection, a region the task touches is opened (made accessible) for the task,
//!   when the kernel's runtime looks the address up ([`KernelAccess::open`], through
//!   `find_memory`) or when the access faults (the fault handler opens it and the access is
//!   retried), and closed when the launch ends. While it is open, other threads, host code
//!   included, are not caught touching it: the window of this fallback.
//!
//! A block's raw access to device address space where nothing lives (freed memory, the unmapped
//! part of a reservation) faults in either mode: the page is made accessible for the rest of the
//! launch (reads see zeros or stale bytes, writes land nowhere that is live), and the launch
//! fails with the memory exception a device reports, instead of the process crashing.

use super::{Mode, mode, pkey, regions};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Regions one launch records; beyond, a region it opens stays open until it is freed.
const SLOTS: usize = 256;
/// Pages outside every region one launch may touch before a further touch crashes.
const STRAYS: usize = 16;

/// One region a launch opened.
#[derive(Debug, Default)]
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    id: AtomicU64,
}

/// A kernel task's access to device memory, from its first block to the end of the launch.
#[derive(Debug)]
pub(crate) struct KernelAccess {
    mode: Mode,
    slots: [Slot; SLOTS],
    /// Slots taken (may pass SLOTS).
    taken: AtomicUsize,
    /// Pages of device address space outside every region that blocks touched.
    strays: [AtomicUsize; STRAYS],
    /// Stray pages taken (may pass STRAYS).
    strayed: AtomicUsize,
    /// The first address of such a touch (0: none).
    first_stray: AtomicUsize,
}

thread_local! {
    /// The access of the kernel block the calling thread is running (null outside blocks).
    static CURRENT: Cell<*const KernelAccess> = const { Cell::new(std::ptr::null()) };
}

/// Restores the calling thread's state after a block, also when the block unwinds.
struct Restore<'a> {
    access: &'a KernelAccess,
    previous: *const KernelAccess,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if let Mode::Pkey(key) = self.access.mode
            && self.previous.is_null()
        {
            pkey::set(key, false);
        }
        CURRENT.with(|c| c.set(self.previous));
    }
}

impl Default for KernelAccess {
    fn default() -> KernelAccess {
        KernelAccess {
            mode: mode(),
            slots: std::array::from_fn(|_| Slot::default()),
            taken: AtomicUsize::new(0),
            strays: std::array::from_fn(|_| AtomicUsize::new(0)),
            strayed: AtomicUsize::new(0),
            first_stray: AtomicUsize::new(0),
        }
    }
}

impl KernelAccess {
    /// Runs `f` (a kernel block) on the calling thread with access to device memory.
    pub(crate) fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(self));
        let _restore = Restore {
            access: self,
            previous,
        };
        if let Mode::Pkey(key) = self.mode {
            pkey::set(key, true);
        }
        f()
    }

    /// Opens the region holding `addr` for this task (page protection only); whether `addr`
    /// lies in an open region afterwards.
    pub(crate) fn open(&self, addr: usize) -> bool {
        if self.mode != Mode::Protect {
            return true;
        }
        if self.holds(addr) {
            return true;
        }
        match regions::open(addr) {
            Some(r) => {
                self.record(r);
                true
            }
            None => false,
        }
    }

    fn holds(&self, addr: usize) -> bool {
        let n = self.taken.load(Ordering::Acquire).min(SLOTS);
        self.slots[..n].iter().any(|s| {
            let start = s.start.load(Ordering::Acquire);
            start != 0 && start <= addr && addr < s.end.load(Ordering::Acquire)
        })
    }

    /// The first address a block touched in device address space outside every live region
    /// (freed memory, an unmapped part of a reservation), if any.
    pub(crate) fn stray(&self) -> Option<usize> {
        match self.first_stray.load(Ordering::Acquire) {
            0 => None,
            a => Some(a),
        }
    }

    /// Makes the page holding `addr` (device address space where nothing lives) accessible for
    /// the rest of the launch; false when the launch touched too many such pages.
    fn take_stray(&self, addr: usize) -> bool {
        let i = self.strayed.fetch_add(1, Ordering::AcqRel);
        let Some(slot) = self.strays.get(i) else {
            return false;
        };
        let page = addr & !(super::super::page_size() as usize - 1);
        if super::map::protect(page, 1, true).is_err() {
            return false;
        }
        slot.store(page, Ordering::Release);
        let _ = self
            .first_stray
            .compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire);
        true
    }

    /// Records an opened region, to close it when the launch ends.
    fn record(&self, (start, end, id): (usize, usize, u64)) {
        let i = self.taken.fetch_add(1, Ordering::AcqRel);
        if let Some(s) = self.slots.get(i) {
            s.id.store(id, Ordering::Relaxed);
            s.end.store(end, Ordering::Relaxed);
            s.start.store(start, Ordering::Release);
        }
    }
}

impl Drop for KernelAccess {
    fn drop(&mut self) {
        let n = self.strayed.load(Ordering::Acquire).min(STRAYS);
        for s in &self.strays[..n] {
            let page = s.load(Ordering::Acquire);
            if page != 0 {
                let _ = super::map::close_stray(page);
            }
        }
        let n = self.taken.load(Ordering::Acquire).min(SLOTS);
        for s in &self.slots[..n] {
            let start = s.start.load(Ordering::Acquire);
            if start != 0 {
                regions::close(start, s.id.load(Ordering::Acquire));
            }
        }
    }
}

/// For the fault handler: opens the region holding `addr` for the kernel block the calling
/// thread runs; false when the thread runs no block or `addr` is in no region.
pub(crate) fn open_for_fault(addr: usize) -> bool {
    let current = CURRENT.with(|c| c.get());
    if current.is_null() {
        return false;
    }
    // SAFETY: CURRENT points at the access of the block this thread is running (set by `run`,
    // which outlives the block).
    let access = unsafe { &*current };
    if access.mode == Mode::Protect
        && let Some(r) = regions::open_in_handler(addr)
    {
        access.record(r);
        return true;
    }
    if matches!(
        regions::lookup_in_handler(addr),
        Some(regions::Found::Space { .. })
    ) {
        return access.take_stray(addr);
    }
    false
}

/// Whether the calling thread is running a kernel block.
pub(crate) fn in_kernel() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}
