//! A rank's shared region: one POSIX shared-memory object per rank and communicator, created
//! before the rank joins and mapped read-write by the other ranks of its server. It holds the
//! rank's doorbell, the control words of every channel the rank sends on, the small buffers it
//! publishes to the one-shot algorithm, and the slots of its outgoing channels.
//!
//! Every rank computes the same [`Layout`] from the size of the communicator, so a peer finds a
//! channel's slots in the sender's region without being told. The last peer of the server to
//! map a region unlinks its name, so once the communicator is up a process that dies leaves
//! nothing in `/dev/shm`.

use super::bell::{Bell, Counter};
use crate::wire::Tag;
use rustix::fs::Mode;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm::OFlags;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// The number of slots of a channel: how far a sender may run ahead of its receiver.
pub(crate) const SLOTS: usize = 4;

/// Which channel between two ranks: collectives and point-to-point transfers never share one, so
/// a receive can never take a chunk of the other kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Coll = 0,
    P2p = 1,
}

const CLASSES: usize = 2;
const MAGIC: u64 = 0x4843_434c_454d_5532; // "HCCLEMU2"
const LINE: usize = 64;

/// A word on a cache line of its own.
#[repr(C, align(64))]
#[derive(Debug, Default)]
pub(crate) struct Padded<T>(pub T);

/// The metadata a sender writes with each chunk (before publishing it).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SlotMeta {
    pub len: u64,
    /// The bytes of the whole transfer this chunk belongs to.
    pub total: u64,
    pub tag: Tag,
}

/// The control words of one channel, in the sender's region: chunks published and chunks the
/// receiver is done with (so their slots may be reused).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct ChanCtl {
    pub sent: Padded<AtomicU64>,
    pub acked: Padded<AtomicU64>,
    pub meta: [std::cell::UnsafeCell<SlotMeta>; SLOTS],
}

/// What a rank published to a one-shot exchange, per parity of the exchange's number.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct Published {
    /// The exchange's number (from 1).
    pub number: AtomicU64,
    pub len: AtomicU64,
    pub tag: std::cell::UnsafeCell<Tag>,
}

/// The first page of a region.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Header {
    magic: AtomicU64,
    rank: AtomicU32,
    n: AtomicU32,
    /// Local peers that mapped this region.
    pub mapped: Padded<AtomicU32>,
    pub bell: Padded<Bell>,
    /// Arrivals at one-shot exchanges (counted in the region of the server's first rank).
    pub arrivals: Padded<Counter>,
    pub published: [Published; 2],
}

/// Where everything lies in a region of a communicator of `n` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub n: usize,
    /// Bytes of one channel slot.
    pub slot: usize,
    /// Bytes of one one-shot buffer (there are two, by parity).
    pub oneshot: usize,
    ctl_at: usize,
    pub_at: usize,
    slots_at: usize,
    pub size: usize,
}

fn round(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

impl Layout {
    /// The layout every rank of a communicator of `n` ranks uses, with slots of `slot` bytes
    /// when given. By default the slots shrink as ranks are added, so a region stays within a
    /// fixed budget of address space (only the pages a rank uses are ever backed by memory).
    pub fn new(n: usize, slot: Option<usize>) -> Layout {
        const BUDGET: usize = 64 << 20;
        let slot = slot.unwrap_or_else(|| {
            round(
                (BUDGET / (n.max(1) * CLASSES * SLOTS)).clamp(16 << 10, 512 << 10),
                4096,
            )
        });
        let oneshot = 256 << 10;
        let ctl_at = round(std::mem::size_of::<Header>(), 4096);
        let pub_at = round(ctl_at + n * CLASSES * std::mem::size_of::<ChanCtl>(), 4096);
        let slots_at = pub_at + 2 * oneshot;
        let size = slots_at + n * CLASSES * SLOTS * slot;
        Layout {
            n,
            slot,
            oneshot,
            ctl_at,
            pub_at,
            slots_at,
            size,
        }
    }
}

/// A mapped region: the rank's own (created, unlinked when peers mapped it or on drop) or a
/// peer's (opened).
#[derive(Debug)]
pub(crate) struct Region {
    name: String,
    base: *mut u8,
    layout: Layout,
    owner: bool,
    unlinked: AtomicBool,
}

// SAFETY: the mapping is shared memory reached only through atomics and the channel protocol;
// the pointer stays valid until drop.
unsafe impl Send for Region {}
// SAFETY: as above: concurrent access is through atomics, and chunk bytes are handed over by the
// sent/acked protocol of each channel.
unsafe impl Sync for Region {}

fn shm_name(name: &str) -> String {
    format!("/{name}")
}

impl Region {
    /// Creates this rank's region under a fresh name.
    pub fn create(rank: u32, layout: Layout) -> io::Result<Region> {
        let id = crate::rootinfo::random_id();
        let name = format!(
            "hccl-emu-{}-{}-{rank}",
            std::process::id(),
            crate::rootinfo::hex(&id[..8])
        );
        let fd = rustix::shm::open(
            shm_name(&name).as_str(),
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR,
            Mode::RUSR | Mode::WUSR,
        )?;
        let r = (|| {
            rustix::fs::ftruncate(&fd, layout.size as u64)?;
            map(&fd, layout.size)
        })();
        let base = match r {
            Ok(b) => b,
            Err(e) => {
                let _ = rustix::shm::unlink(shm_name(&name).as_str());
                return Err(e);
            }
        };
        let region = Region {
            name,
            base,
            layout,
            owner: true,
            unlinked: AtomicBool::new(false),
        };
        let h = region.header();
        h.rank.store(rank, Ordering::Relaxed);
        h.n.store(layout.n as u32, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        Ok(region)
    }

    /// Maps a peer's region.
    pub fn open(name: &str, rank: u32, layout: Layout) -> io::Result<Region> {
        if !name.starts_with("hccl-emu-") || name.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name:?} is not a region name of this emulator"),
            ));
        }
        let fd = rustix::shm::open(shm_name(name).as_str(), OFlags::RDWR, Mode::empty())?;
        let st = rustix::fs::fstat(&fd)?;
        if (st.st_size as u64) < layout.size as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the region {name} is smaller than its layout"),
            ));
        }
        let base = map(&fd, layout.size)?;
        let region = Region {
            name: name.to_string(),
            base,
            layout,
            owner: false,
            unlinked: AtomicBool::new(true),
        };
        let h = region.header();
        if h.magic.load(Ordering::Acquire) != MAGIC
            || h.rank.load(Ordering::Relaxed) != rank
            || h.n.load(Ordering::Relaxed) as usize != layout.n
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the region {name} is not rank {rank}'s of this communicator"),
            ));
        }
        Ok(region)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn header(&self) -> &Header {
        // SAFETY: the region starts with a Header (page-aligned mapping of at least its size),
        // whose fields are atomics or cells accessed under the publication protocol.
        unsafe { &*self.base.cast::<Header>() }
    }

    /// The control words of the channel from this region's rank to `peer`.
    pub fn chan(&self, peer: usize, class: Class) -> &ChanCtl {
        assert!(peer < self.layout.n);
        let i = peer * CLASSES + class as usize;
        // SAFETY: within the ChanCtl array of the layout; ChanCtl is atomics and plain data
        // written before a Release of `sent` and read after its Acquire.
        unsafe {
            &*self
                .base
                .add(self.layout.ctl_at + i * std::mem::size_of::<ChanCtl>())
                .cast::<ChanCtl>()
        }
    }

    /// The first byte of slot `slot` of the channel to `peer`.
    pub fn slot(&self, peer: usize, class: Class, slot: usize) -> *mut u8 {
        assert!(peer < self.layout.n && slot < SLOTS);
        let i = (peer * CLASSES + class as usize) * SLOTS + slot;
        // SAFETY: within the mapping (the layout's slot area).
        unsafe { self.base.add(self.layout.slots_at + i * self.layout.slot) }
    }

    /// The first byte of the one-shot buffer of `parity`.
    pub fn oneshot(&self, parity: usize) -> *mut u8 {
        // SAFETY: within the mapping (the layout's publication area).
        unsafe {
            self.base
                .add(self.layout.pub_at + (parity & 1) * self.layout.oneshot)
        }
    }

    /// Unlinks the name of this rank's own region (its mappings stay); idempotent.
    pub fn unlink(&self) {
        if self.owner && !self.unlinked.swap(true, Ordering::AcqRel) {
            let _ = rustix::shm::unlink(shm_name(&self.name).as_str());
        }
    }

    /// Counts this rank as having mapped the (peer's) region; the last of the `mappers` to do
    /// so unlinks its name, so the name is gone once every peer holds a mapping, whatever
    /// happens to its owner afterwards.
    pub fn mapped_by_one_more(&self, mappers: u32) {
        let k = self.header().mapped.0.fetch_add(1, Ordering::AcqRel) + 1;
        if k == mappers {
            let _ = rustix::shm::unlink(shm_name(&self.name).as_str());
        }
        self.header().bell.0.ring();
    }
}

fn map(fd: &rustix::fd::OwnedFd, len: usize) -> io::Result<*mut u8> {
    // SAFETY: a new shared mapping of an fd we hold, at an address the kernel picks; it is
    // unmapped once, on drop.
    let p = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            0,
        )
    }?;
    debug_assert_eq!(p as usize % LINE, 0);
    Ok(p.cast())
}

impl Drop for Region {
    fn drop(&mut self) {
        self.unlink();
        // SAFETY: our mapping, unmapped once.
        unsafe {
            let _ = rustix::mm::munmap(self.base.cast(), self.layout.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_maps_the_same_memory_and_the_name_goes_away() {
        let layout = Layout::new(3, None);
        let own = Region::create(1, layout).unwrap();
        let peer = Region::open(own.name(), 1, layout).unwrap();
        own.chan(2, Class::P2p).sent.0.store(5, Ordering::Release);
        assert_eq!(peer.chan(2, Class::P2p).sent.0.load(Ordering::Acquire), 5);
        // SAFETY: test bytes inside the slot.
        unsafe { own.slot(2, Class::Coll, 3).write(9) };
        // SAFETY: as above.
        assert_eq!(unsafe { peer.slot(2, Class::Coll, 3).read() }, 9);
        assert!(Region::open(own.name(), 0, layout).is_err(), "wrong rank");
        own.unlink();
        assert!(Region::open(own.name(), 1, layout).is_err(), "unlinked");
        // The mapping outlives the name.
        assert_eq!(peer.chan(2, Class::P2p).sent.0.load(Ordering::Acquire), 5);
    }

    #[test]
    fn layouts_fit_their_budget() {
        for n in [1, 2, 8, 64, 1024] {
            let l = Layout::new(n, None);
            assert!(l.slot >= 16 << 10 && l.slot.is_multiple_of(4096));
            assert!(l.size < (80 << 20) || n > 64, "{n}: {}", l.size);
        }
    }
}
