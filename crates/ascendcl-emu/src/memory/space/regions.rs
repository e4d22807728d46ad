//! The regions of the device address space: which program addresses are device memory (the
//! spaces: the arena, reservations, imports), which live object each region of it is (for the
//! guard's message), and, under page protection, how many holders have each region open (kernel
//! tasks, a grant of host access).
//!
//! The fault handler reads this registry: it takes the lock with `try_read` only (bounded
//! spinning, never blocking), allocates nothing and calls only `mprotect` and `write`. Its lock
//! is therefore the leaf lock of `base::lock` outside the rank order (whose bookkeeping cannot
//! run in a signal handler), taken last, under which no other lock is taken.

use super::map;
use crate::base::lock::{LeafReadGuard, LeafRwLock, LeafWriteGuard};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// What a region is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum What {
    /// An allocation of `aclrtMalloc*`.
    Allocation,
    /// A mapping of `aclrtMapMem`.
    Mapping,
    /// Memory imported from another process (`aclrtIpcMemImportByKey`).
    Import,
}

impl What {
    fn label(self) -> &'static str {
        match self {
            What::Allocation => "the device allocation",
            What::Mapping => "the virtual memory mapping",
            What::Import => "the IPC import",
        }
    }
}

/// One region: a live object's program range.
#[derive(Debug)]
struct Region {
    /// Unique for the life of the process: a region added at the same start later has another.
    id: u64,
    /// Bytes of program address space (whole pages).
    len: usize,
    /// The bytes the caller asked for.
    size: usize,
    what: What,
    device: i32,
    /// Holders that have the region open.
    opens: AtomicU32,
    /// Held while `opens` changes together with the protection.
    busy: AtomicBool,
}

impl Region {
    /// Runs `f` with the region's lock held (a spin lock: held for one `mprotect` at most).
    fn locked<T>(&self, f: impl FnOnce() -> T) -> T {
        while self
            .busy
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let r = f();
        self.busy.store(false, Ordering::Release);
        r
    }
}

#[derive(Debug, Default)]
struct Registry {
    regions: BTreeMap<usize, Region>,
    /// Ranges of device address space: start → (length, what it is).
    spaces: BTreeMap<usize, (usize, &'static str)>,
}

static REGISTRY: LeafRwLock<Registry> = LeafRwLock::new(Registry {
    regions: BTreeMap::new(),
    spaces: BTreeMap::new(),
});

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn read() -> LeafReadGuard<'static, Registry> {
    REGISTRY.read()
}

fn write() -> LeafWriteGuard<'static, Registry> {
    REGISTRY.write()
}

/// The registry for a signal handler: `try_read` with bounded spinning (a writer holds the lock
/// for a map insertion or removal), `None` when it stays taken.
fn read_in_handler() -> Option<LeafReadGuard<'static, Registry>> {
    for _ in 0..1_000_000 {
        if let Some(g) = REGISTRY.try_read() {
            return Some(g);
        }
        std::hint::spin_loop();
    }
    None
}

impl Registry {
    fn find(&self, addr: usize) -> Option<(usize, &Region)> {
        let (&s, r) = self.regions.range(..=addr).next_back()?;
        (addr < s + r.len).then_some((s, r))
    }

    fn space(&self, addr: usize) -> Option<(usize, usize, &'static str)> {
        let (&s, &(len, label)) = self.spaces.range(..=addr).next_back()?;
        (addr < s + len).then_some((s, len, label))
    }
}

/// Records `[start, start+len)` as device address space (`label` says what it is).
pub(crate) fn add_space(start: usize, len: usize, label: &'static str) {
    write().spaces.insert(start, (len, label));
}

/// Forgets the device address space that starts at `start`.
pub(crate) fn remove_space(start: usize) {
    write().spaces.remove(&start);
}

/// Records the region `[start, start+len)` of a live object of `size` bytes on `device`;
/// returns its id.
pub(crate) fn add(start: usize, len: usize, size: usize, what: What, device: i32) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    write().regions.insert(
        start,
        Region {
            id,
            len,
            size,
            what,
            device,
            opens: AtomicU32::new(0),
            busy: AtomicBool::new(false),
        },
    );
    id
}

/// Forgets the region that starts at `start`; one left open is closed (its holders find it
/// gone when they close it).
pub(crate) fn remove(start: usize) {
    let r = write().regions.remove(&start);
    if let Some(r) = r
        && r.opens.load(Ordering::Acquire) > 0
    {
        let _ = map::protect(start, r.len, false);
    }
}

/// Opens the region holding `addr` once more (page protection): its program side becomes
/// accessible with the first holder. Returns the region's start, end and id ([`close`] takes the
/// start and the id).
pub(crate) fn open(addr: usize) -> Option<(usize, usize, u64)> {
    open_in(&read(), addr, false)
}

/// [`open`] from the fault handler.
pub(crate) fn open_in_handler(addr: usize) -> Option<(usize, usize, u64)> {
    // A fault on a region that counts as open (its protection was changed under it: a stray
    // page of a launch closed over it) makes it accessible again, so the access cannot fault
    // for ever.
    open_in(&*read_in_handler()?, addr, true)
}

fn open_in(reg: &Registry, addr: usize, fault: bool) -> Option<(usize, usize, u64)> {
    let (start, r) = reg.find(addr)?;
    let ok = r.locked(|| {
        if (fault || r.opens.load(Ordering::Relaxed) == 0)
            && map::protect(start, r.len, true).is_err()
        {
            return false;
        }
        r.opens.fetch_add(1, Ordering::Relaxed);
        true
    });
    ok.then_some((start, start + r.len, r.id))
}

/// Opens the region holding `addr` to the host for as long as it lives (a grant of host access):
/// one more holder that never closes, under page protection; the default key, under keys.
pub(crate) fn grant_host(addr: usize) {
    match super::mode() {
        super::Mode::Open => {}
        super::Mode::Protect => {
            let _ = open(addr);
        }
        super::Mode::Pkey(_) => {
            if let Some((start, r)) = read().find(addr) {
                let _ = super::pkey::protect(start, r.len, 0);
            }
        }
    }
}

/// Closes what [`open`] opened: the program side becomes inaccessible with the last holder. A
/// region freed meanwhile (or replaced by another at the same start) is left alone.
pub(crate) fn close(start: usize, id: u64) {
    let reg = read();
    let Some(r) = reg.regions.get(&start).filter(|r| r.id == id) else {
        return;
    };
    r.locked(|| {
        if r.opens.fetch_sub(1, Ordering::Relaxed) == 1 {
            let _ = map::protect(start, r.len, false);
        }
    });
}

/// The number of holders that have the region holding `addr` open (0 outside every region).
#[cfg(test)]
pub(crate) fn opens(addr: usize) -> u32 {
    read()
        .find(addr)
        .map_or(0, |(_, r)| r.opens.load(Ordering::Acquire))
}

/// What an address of device address space is, as the fault handler reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// In a live region: what it is, where it starts, its size and device.
    Region {
        what: &'static str,
        start: usize,
        size: usize,
        device: i32,
    },
    /// In device address space outside every live region.
    Space {
        label: &'static str,
        start: usize,
        len: usize,
    },
}

/// What `addr` is, for the fault handler; `None` outside device address space (or when the
/// registry could not be read).
pub(crate) fn lookup_in_handler(addr: usize) -> Option<Found> {
    let reg = read_in_handler()?;
    if let Some((start, r)) = reg.find(addr) {
        return Some(Found::Region {
            what: r.what.label(),
            start,
            size: r.size,
            device: r.device,
        });
    }
    reg.space(addr)
        .map(|(start, len, label)| Found::Space { label, start, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_found_and_described() {
        let start = 0x7e00_0000_0000usize;
        add_space(start, 1 << 30, "test space");
        let id = add(start + 4096, 8192, 5000, What::Allocation, 3);
        assert_eq!(
            lookup_in_handler(start + 4096 + 4999),
            Some(Found::Region {
                what: "the device allocation",
                start: start + 4096,
                size: 5000,
                device: 3
            })
        );
        assert_eq!(
            lookup_in_handler(start + 100),
            Some(Found::Space {
                label: "test space",
                start,
                len: 1 << 30
            })
        );
        assert!(
            matches!(
                lookup_in_handler(start + (1 << 29)),
                Some(Found::Space { .. })
            ) && lookup_in_handler(start + (1 << 30)).is_none()
        );
        assert_eq!(lookup_in_handler(start - 1), None);
        // A stale close (another id) changes nothing.
        close(start + 4096, id + 1_000_000);
        assert_eq!(opens(start + 4096), 0);
        remove(start + 4096);
        remove_space(start);
        assert_eq!(lookup_in_handler(start + 4096), None);
    }
}
