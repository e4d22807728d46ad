//! The table of live allocations (device, pinned host, registered host) and range validation
//! in O(log n) (a binary search of a sorted array).

use super::freed::{Freed, Release};
use super::pages::{page_size, replace_with_reserve};
use super::reserved::Reserved;
use super::space::{self, map::Pair};
use crate::base::error::*;
use crate::base::lock::{Rank, ReadGuard, RwLock, WriteGuard};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;
use std::sync::LazyLock;

/// What an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Device memory of the given device (`aclrtMalloc*`).
    Device(i32),
    /// Pinned host memory (`aclrtMallocHost`).
    Pinned,
    /// Host memory registered with `aclrtHostRegister`.
    Registered,
}

// Where a range lies (`Loc`) and the validated side of an access (`Side`) are the vocabulary the
// memory concept shares with the stream engine, which checks a queued task's sides before it runs.
pub(crate) use crate::engine::work::{Loc, Side};

/// A live allocation.
#[derive(Debug)]
pub(crate) struct Alloc {
    pub start: usize,
    /// The size the caller asked for: the bounds of every access.
    pub size: usize,
    /// Address range owned (start..start+span): a pointer in it belongs to this allocation.
    pub span: usize,
    pub kind: Kind,
    pub page_size: u32,
    /// Incarnation of the device (0 for host memory).
    pub(super) epoch: u64,
    /// What backs the pages, and how a free releases them.
    pub(super) backing: Backing,
    /// What to add to an address of the allocation to reach it from the emulator's code (the
    /// alias of device memory; 0 for host memory).
    pub(super) delta: isize,
    /// The reservation a virtual memory mapping lies in (its start; 0 for everything else):
    /// adjacent mappings of one reservation form one contiguous range.
    pub(super) group: usize,
    /// Bytes charged against the device capacity.
    pub(super) charge: u64,
    /// Size the hardware would make accessible (A2/A3 padding), for messages.
    pub(super) hw_size: usize,
    /// Mapped by `aclrtMapMem` or imported from another process: not freed by `aclrtFree`.
    pub(super) external: bool,
    /// The shared memory file backing the allocation once it was exported (`aclrtIpcMem*`).
    pub(super) shared_fd: Option<OwnedFd>,
    /// Managed (unified) memory (`aclrtMemAllocManaged`).
    pub(super) managed: bool,
}

/// What backs an allocation's pages, and how its free releases them.
#[derive(Debug)]
pub(crate) enum Backing {
    /// Nothing of its own: registered host memory, and virtual memory mappings and imports
    /// (their owners unmap them).
    None,
    /// An anonymous mapping `[base, base+len)` (pinned and managed memory).
    Anon { base: usize, len: usize },
    /// `len` bytes of the device arena from the allocation's start.
    Arena { len: usize },
    /// A memory file of its own in both views (huge pages, or the arena is full).
    File { pair: Pair, fd: OwnedFd },
}

/// The hot part of a live allocation, for [`Table::check`]: 48 bytes, in a sorted vector.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    /// End of the owned address range (`start + span`).
    end: usize,
    /// End of the accessible bytes (`start + size`).
    limit: usize,
    loc: Loc,
    delta: isize,
    /// The reservation of a virtual memory mapping (0 otherwise).
    group: usize,
}

impl Span {
    fn side(&self) -> Side {
        Side {
            loc: self.loc,
            alloc: self.start,
            delta: self.delta,
        }
    }
}

/// The allocation table.
#[derive(Debug, Default)]
pub(crate) struct Table {
    pub(super) live: BTreeMap<usize, Alloc>,
    /// The live allocations' spans sorted by start (the same keys as `live`): copy validation
    /// binary-searches this compact array instead of walking the B-tree.
    index: Vec<Span>,
    /// Ranges freed recently, kept reserved.
    freed: Freed,
    /// Address ranges reserved for virtual memory (`aclrtReserveMemAddress`): where nothing is
    /// mapped, an access is refused.
    reserved: Reserved,
    /// Ranges registered with `aclrtHostRegister[V2]` inside pinned allocations: start → size.
    pub(super) registered_pinned: BTreeMap<usize, usize>,
    used: HashMap<i32, u64>,
    /// Bytes of pinned host memory mapped (page-rounded), charged against the host budget.
    pub(super) pinned: u64,
    /// Usage hints and prefetch records of managed allocations (by start), dropped with them.
    hints: HashMap<usize, super::managed::Hints>,
}

static TABLE: LazyLock<RwLock<Table>> =
    LazyLock::new(|| RwLock::new(Rank::MemoryTable, Table::default()));

/// The table, for reading.
pub(crate) fn read() -> ReadGuard<'static, Table> {
    super::teardown::ensure();
    TABLE.read()
}

/// The table, for changing.
pub(crate) fn write() -> WriteGuard<'static, Table> {
    super::teardown::ensure();
    TABLE.write()
}

impl Table {
    pub(super) fn find(&self, addr: usize) -> Option<&Alloc> {
        let (_, a) = self.live.range(..=addr).next_back()?;
        (addr < a.start + a.span).then_some(a)
    }

    /// Adds a live allocation (to the map and the index).
    fn add_live(&mut self, a: Alloc) {
        let span = Span {
            start: a.start,
            end: a.start + a.span,
            limit: a.start + a.size,
            loc: match a.kind {
                Kind::Device(d) => Loc::Device(d),
                Kind::Pinned | Kind::Registered => Loc::Host,
            },
            delta: a.delta,
            group: a.group,
        };
        match self.index.binary_search_by_key(&a.start, |s| s.start) {
            Ok(i) => self.index[i] = span,
            Err(i) => self.index.insert(i, span),
        }
        self.live.insert(a.start, a);
    }

    /// Removes the live allocation that starts at `start` (from the map and the index).
    pub(super) fn remove_live(&mut self, start: usize) -> Option<Alloc> {
        let a = self.live.remove(&start)?;
        self.hints.remove(&start);
        if let Ok(i) = self.index.binary_search_by_key(&start, |s| s.start) {
            self.index.remove(i);
        }
        Some(a)
    }

    /// Validates that `[addr, addr+len)` is usable: inside one live allocation, or outside every
    /// allocation and freed range (unregistered host memory, which is the caller's business).
    ///
    /// A range that starts in pageable memory and runs into an allocation or a freed range, and
    /// a range that wraps around the address space, are 107000 as well. One binary search of the
    /// sorted live spans (the last one that starts at or before the range's last byte is the one
    /// the range starts in, or the first one it runs into); only a range outside every live
    /// allocation and inside the envelope of the freed ranges also looks up the freed map the
    /// same way. No allocation unless the check fails.
    ///
    /// Virtual memory mappings placed back to back in one reservation form one range: a range
    /// may span them. A range that reaches the part of a reservation where nothing is mapped is
    /// 107000.
    #[inline]
    pub(crate) fn check(&self, what: &str, addr: usize, len: usize) -> R<Side> {
        let Some(end) = addr.checked_add(len) else {
            return overflow(what, addr, len);
        };
        let last = if len == 0 { addr } else { end - 1 };
        let i = self.index.partition_point(|s| s.start <= last);
        if let Some(a) = i.checked_sub(1).map(|i| &self.index[i]) {
            if a.start <= addr {
                if addr < a.end {
                    if end > a.limit {
                        return self.past_end(what, addr, len, a.start);
                    }
                    return Ok(a.side());
                }
            } else {
                // `a` starts inside the range, after its first byte: the range may start in
                // an adjacent mapping of the same reservation.
                if a.group != 0
                    && end <= a.limit
                    && let Some(first) = self.contiguous_start(i - 1, addr)
                {
                    return Ok(first.side());
                }
                let a = &self.live[&a.start];
                return self.runs_into(what, addr, len, kind_name(a.kind), a.start, a.size);
            }
        }
        if let Some((s, rlen)) = self.reserved.first_in(addr, last) {
            return unmapped(what, addr, len, s, rlen);
        }
        if let Some((s, size, inside)) = self.freed.first_in(addr, last) {
            if inside {
                return use_after_free(what, addr, s, size);
            }
            return self.runs_into(what, addr, len, "freed", s, size);
        }
        Ok(Side::PAGEABLE)
    }

    /// The span of index `j - k` (k ≥ 1) that holds `addr`, when every span from it to `j` is a
    /// mapping of `j`'s reservation placed right after the one before it, on the same device.
    fn contiguous_start(&self, j: usize, addr: usize) -> Option<&Span> {
        let last = &self.index[j];
        let mut k = j;
        while k > 0 {
            let (p, s) = (&self.index[k - 1], &self.index[k]);
            if p.group != last.group || p.limit != s.start || p.loc != last.loc {
                return None;
            }
            if p.start <= addr {
                return Some(p);
            }
            k -= 1;
        }
        None
    }

    /// The contiguous range of mappings (of one reservation) around the span of index `j`.
    fn contiguous_run(&self, j: usize) -> (usize, usize) {
        let s = &self.index[j];
        if s.group == 0 {
            return (s.start, s.limit);
        }
        let (mut lo, mut hi) = (j, j);
        while lo > 0 {
            let p = &self.index[lo - 1];
            if p.group != s.group || p.limit != self.index[lo].start || p.loc != s.loc {
                break;
            }
            lo -= 1;
        }
        while hi + 1 < self.index.len() {
            let n = &self.index[hi + 1];
            if n.group != s.group || n.start != self.index[hi].limit || n.loc != s.loc {
                break;
            }
            hi += 1;
        }
        (self.index[lo].start, self.index[hi].limit)
    }

    /// The failure of a range that starts in the allocation at `start` and runs past its end
    /// (into the next mappings of its reservation, as far as they are contiguous).
    #[cold]
    fn past_end(&self, what: &str, addr: usize, len: usize, start: usize) -> R<Side> {
        let a = &self.live[&start];
        if a.group != 0
            && let Ok(j) = self.index.binary_search_by_key(&start, |s| s.start)
        {
            let (lo, hi) = self.contiguous_run(j);
            if addr + len <= hi {
                // Unreachable through `check`, which accepts the range; kept for safety.
                return Ok(self.index[j].side());
            }
            let (s, rlen) = self.reserved.find(hi).unwrap_or((lo, hi - lo));
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "{what} range {addr:#x}+{len} runs past the mapped part of the virtual \
                     address range reserved at {s:#x} ({rlen} bytes): nothing is mapped at \
                     {hi:#x} (aclrtMapMem)"
                ),
            );
        }
        past_end(what, addr, len, a)
    }

    /// The failure of a range whose first byte is not in the allocation (or freed range) at
    /// `start`, which it reaches.
    #[cold]
    fn runs_into(
        &self,
        what: &str,
        addr: usize,
        len: usize,
        kind: &str,
        start: usize,
        size: usize,
    ) -> R<Side> {
        // The range may start in another allocation (or freed range) that it runs out of.
        if let Some(a) = self.find(addr) {
            return self.past_end(what, addr, len, a.start);
        }
        if let Some((s, rlen)) = self.reserved.find(addr) {
            return unmapped(what, addr, len, s, rlen);
        }
        if let Some((s, size)) = self.freed.find(addr) {
            return use_after_free(what, addr, s, size);
        }
        fail(
            RT_PARAM_INVALID,
            format!(
                "{what} range {addr:#x}+{len} starts in pageable host memory and runs into the \
                 {kind} allocation of {size} bytes at {start:#x} (an overrun of the caller's \
                 buffer; the emulator detects it, hardware may not)"
            ),
        )
    }

    /// Whether the allocation starting at `start` is still live (for tasks that run later).
    pub(crate) fn still_live(&self, side: Side) -> bool {
        side.loc == Loc::Unreg
            || self
                .index
                .binary_search_by_key(&side.alloc, |s| s.start)
                .is_ok()
    }

    /// The live allocation holding byte `addr`: its start, its size (the bytes a kernel may
    /// access) and its kind. For a virtual memory mapping, the range of the mappings placed
    /// back to back around it in its reservation.
    #[inline]
    pub(crate) fn region_of(&self, addr: usize) -> Option<(usize, usize, Kind)> {
        let i = self
            .index
            .partition_point(|s| s.start <= addr)
            .checked_sub(1)?;
        let s = &self.index[i];
        if addr >= s.limit {
            return None;
        }
        let kind = match s.loc {
            Loc::Device(d) => Kind::Device(d),
            _ => self.live[&s.start].kind,
        };
        let (lo, hi) = self.contiguous_run(i);
        Some((lo, hi - lo, kind))
    }

    /// Location type and page size of a pointer, for `aclrtPointerGetAttributes`.
    pub(crate) fn attributes(&self, addr: usize) -> R<(Loc, u32)> {
        if let Some(a) = self.find(addr) {
            let loc = match a.kind {
                Kind::Device(d) => Loc::Device(d),
                _ => Loc::Host,
            };
            return Ok((loc, a.page_size));
        }
        if let Some((s, _)) = self.freed.find(addr) {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "ptr {addr:#x} lies in memory freed earlier (allocation at {s:#x}); the \
                     emulator detects use after free, hardware may not"
                ),
            );
        }
        Ok((Loc::Unreg, page_size()))
    }

    /// The live allocation that contains `addr`, as its start and size (`aclrtMemGetAddressRange`).
    pub(crate) fn range_of(&self, addr: usize) -> Option<(usize, usize)> {
        self.find(addr).map(|a| (a.start, a.size))
    }

    /// Whether `addr` lies in managed memory.
    pub(crate) fn is_managed(&self, addr: usize) -> bool {
        self.find(addr).is_some_and(|a| a.managed)
    }

    /// The managed allocation `addr` lies in: its start and the length of its mapping (the
    /// size rounded up to 2 MiB pages).
    pub(crate) fn managed_at(&self, addr: usize) -> Option<(usize, usize)> {
        self.find(addr)
            .filter(|a| a.managed)
            .map(|a| (a.start, a.span))
    }

    /// The hints of the managed allocation at `start` (none recorded yet: `None`).
    pub(crate) fn hints(&self, start: usize) -> Option<&super::managed::Hints> {
        self.hints.get(&start)
    }

    /// The hints of the managed allocation at `start`, created for `span` bytes on first use.
    pub(crate) fn hints_mut(&mut self, start: usize, span: usize) -> &mut super::managed::Hints {
        self.hints
            .entry(start)
            .or_insert_with(|| super::managed::Hints::new(span))
    }

    /// Bytes of device `dev` in use.
    pub(crate) fn used(&self, dev: i32) -> u64 {
        self.used.get(&dev).copied().unwrap_or(0)
    }

    /// Counts of live allocations: (device allocations of `dev` or of all devices, pinned, registered).
    pub(crate) fn counts(&self, dev: Option<i32>) -> (usize, u64, usize, usize) {
        let mut n = (0, 0, 0, 0);
        for a in self.live.values() {
            match a.kind {
                Kind::Device(d) if dev.is_none_or(|x| x == d) => {
                    n.0 += 1;
                    n.1 += a.size as u64;
                }
                Kind::Pinned => n.2 += 1,
                Kind::Registered => n.3 += 1,
                _ => {}
            }
        }
        n.3 += self.registered_pinned.len();
        n
    }

    pub(super) fn insert(&mut self, a: Alloc) {
        match a.kind {
            Kind::Device(d) => *self.used.entry(d).or_default() += a.charge,
            Kind::Pinned => self.pinned += a.charge,
            Kind::Registered => {}
        }
        self.add_live(a);
    }

    fn retire(&mut self, a: Alloc) {
        match a.kind {
            Kind::Device(d) => {
                let u = self.used.entry(d).or_default();
                *u = u.saturating_sub(a.charge);
            }
            Kind::Pinned => {
                self.pinned = self.pinned.saturating_sub(a.charge);
                self.forget_registrations_in(a.start, a.span);
            }
            Kind::Registered => {}
        }
        if a.shared_fd.is_some() {
            // Exported: later imports fail; mappings importers made stay valid (the file stays
            // alive with them).
            super::ipc::close_owner(super::ipc::What::IpcMemory, a.start as u64);
        }
        // The range stays reserved: in-flight work that still touches it lands in harmless
        // memory, and a stale pointer is reported as freed. A range that cannot be kept
        // reserved was unmapped: the system may hand it out again, so it is not remembered.
        match a.backing {
            Backing::None => {}
            Backing::Anon { base, len } => {
                if replace_with_reserve(base, len) {
                    self.freed.bury(base, len, a.size, Release::Unmap);
                }
            }
            Backing::Arena { len } => {
                space::regions::remove(a.start);
                let Some(arena) = space::arena::get() else {
                    return;
                };
                if a.shared_fd.is_some() {
                    // Back to the arena's own pages (the export's file goes with the fd).
                    super::export::unshare(arena, a.start, len);
                }
                arena.discard(a.start, len);
                self.freed.bury(a.start, len, a.size, Release::Arena);
            }
            Backing::File { pair, fd } => {
                space::regions::remove(a.start);
                drop(fd);
                // SAFETY: the allocation's own pair, no longer in the table: its pages go, its
                // program range stays reserved as a freed range and its alias is unmapped.
                if unsafe { space::map::unreserve(pair) }.is_ok() {
                    super::pages::unmap(pair.alias, pair.len);
                    // Device address space while it stays reserved: a kernel still touching
                    // it fails its launch instead of crashing the process.
                    space::regions::add_space(pair.at, pair.len, "device memory");
                    self.freed.bury(pair.at, pair.len, a.size, Release::Space);
                } else {
                    // SAFETY: as above.
                    unsafe { space::map::release(pair) };
                }
            }
        }
    }

    /// Frees the allocation that starts at `ptr`, which must be of the `want` kind.
    pub(crate) fn free(&mut self, ptr: usize, want: Kind) -> R {
        let Some(a) = self.live.get(&ptr) else {
            if let Some(a) = self.find(ptr) {
                return fail(
                    RT_MEMORY_FREE,
                    format!(
                        "{ptr:#x} is inside the {} allocation at {:#x}, not its start",
                        kind_name(a.kind),
                        a.start
                    ),
                );
            }
            if self.freed.find(ptr).is_some() {
                return fail(
                    RT_MEMORY_FREE,
                    format!(
                        "{ptr:#x} was already freed: double free (the emulator detects it; the \
                         real runtime does not check and its behaviour is undefined)"
                    ),
                );
            }
            return fail(
                RT_MEMORY_FREE,
                format!("{ptr:#x} was not allocated by the runtime"),
            );
        };
        if a.external {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "{ptr:#x} was mapped with aclrtMapMem or imported from another process; \
                     release it with aclrtUnmapMem or aclrtIpcMemClose"
                ),
            );
        }
        let same = matches!(
            (a.kind, want),
            (Kind::Device(_), Kind::Device(_)) | (Kind::Pinned, Kind::Pinned)
        );
        if !same {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "{ptr:#x} is {} memory; free it with {}",
                    kind_name(a.kind),
                    match a.kind {
                        Kind::Device(_) => "aclrtFree",
                        Kind::Pinned => "aclrtFreeHost",
                        Kind::Registered => "aclrtHostUnregister",
                    }
                ),
            );
        }
        let a = self.remove_live(ptr).expect("present");
        self.retire(a);
        Ok(())
    }

    /// Frees every allocation of incarnation `epoch` of device `dev`; returns (count, bytes).
    pub(crate) fn release_device(&mut self, dev: i32, epoch: u64) -> (usize, u64) {
        let keys: Vec<usize> = self
            .live
            .values()
            .filter(|a| a.kind == Kind::Device(dev) && a.epoch == epoch)
            .map(|a| a.start)
            .collect();
        let mut bytes = 0;
        for k in &keys {
            let a = self.remove_live(*k).expect("present");
            bytes += a.size as u64;
            self.retire(a);
        }
        (keys.len(), bytes)
    }

    /// Frees all pinned memory and forgets all registrations; returns (pinned, registered).
    pub(crate) fn release_host(&mut self) -> (usize, usize) {
        let keys: Vec<(usize, Kind)> = self
            .live
            .values()
            .filter(|a| !matches!(a.kind, Kind::Device(_)))
            .map(|a| (a.start, a.kind))
            .collect();
        let mut n = (0, std::mem::take(&mut self.registered_pinned).len());
        for (k, kind) in keys {
            let a = self.remove_live(k).expect("present");
            if kind == Kind::Pinned {
                n.0 += 1;
            } else {
                n.1 += 1;
            }
            self.retire(a);
        }
        n
    }

    /// Registers memory mapped by the caller (`aclrtMapMem`, an import) as device memory of
    /// `dev` (or host memory, `dev` None): copies treat it as such; nothing is charged, and
    /// `aclrtFree` refuses it.
    ///
    /// `delta` leads from its addresses to the emulator's view of them; `group` is the
    /// reservation a virtual memory mapping lies in (0 for an import).
    pub(crate) fn insert_external(
        &mut self,
        start: usize,
        len: usize,
        dev: Option<i32>,
        page: u32,
        (delta, group): (isize, usize),
    ) -> R {
        if let Some((_, a)) = self
            .live
            .range(..start + len)
            .next_back()
            .filter(|(_, a)| a.start + a.span > start)
        {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "range {start:#x}+{len} overlaps the {} allocation at {:#x}",
                    kind_name(a.kind),
                    a.start
                ),
            );
        }
        self.insert(Alloc {
            start,
            size: len,
            span: len,
            kind: dev.map_or(Kind::Pinned, Kind::Device),
            page_size: page,
            epoch: 0,
            backing: Backing::None,
            delta,
            group,
            charge: 0,
            hw_size: len,
            external: true,
            shared_fd: None,
            managed: false,
        });
        Ok(())
    }

    /// Records `[start, start+len)` as reserved for virtual memory.
    pub(crate) fn add_reservation(&mut self, start: usize, len: usize) {
        self.reserved.add(start, len);
    }

    /// Forgets the reservation that starts at `start`.
    pub(crate) fn remove_reservation(&mut self, start: usize) {
        self.reserved.remove(start);
    }

    /// A reservation that `[start, end)` reaches: its start and length.
    pub(super) fn reservation_within(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        self.reserved.first_in(start, end - 1)
    }

    /// Forgets memory registered with [`Table::insert_external`] that starts at `start`.
    /// Keeps the program range `[base, base+len)` of device address space that was just let go
    /// (a closed import, a released reservation: already inaccessible and unbacked, still
    /// recorded as device address space) reserved as a freed range of `size` bytes, so that a
    /// stale pointer is reported as freed and a kernel still touching it fails its launch; the
    /// oldest such ranges are unmapped and forgotten beyond the record's bounds.
    pub(crate) fn bury_space(&mut self, base: usize, len: usize, size: usize) {
        self.freed.bury(base, len, size, Release::Space);
    }

    pub(crate) fn remove_external(&mut self, start: usize) -> bool {
        match self.live.get(&start) {
            Some(a) if a.external => {
                self.remove_live(start);
                true
            }
            _ => false,
        }
    }

    /// Charges `bytes` against device `dev`'s `capacity` (physical allocations); 207001 beyond.
    pub(crate) fn charge(&mut self, dev: i32, bytes: u64, capacity: u64) -> R {
        let used = self.used(dev);
        if used.saturating_add(bytes) > capacity {
            return fail(
                RT_MEMORY_ALLOCATION,
                format!(
                    "device {dev} is out of memory: {bytes} bytes requested, {} of {capacity} \
                     bytes free (ASCENDCL_EMU_MEMORY sets the capacity)",
                    capacity.saturating_sub(used)
                ),
            );
        }
        *self.used.entry(dev).or_default() += bytes;
        Ok(())
    }

    /// Returns bytes charged with [`Table::charge`].
    pub(crate) fn uncharge(&mut self, dev: i32, bytes: u64) {
        let u = self.used.entry(dev).or_default();
        *u = u.saturating_sub(bytes);
    }
}

#[cold]
fn overflow(what: &str, addr: usize, len: usize) -> R<Side> {
    fail(
        RT_PARAM_INVALID,
        format!("{what} range {addr:#x}+{len} overflows the address space"),
    )
}

#[cold]
fn past_end(what: &str, addr: usize, len: usize, a: &Alloc) -> R<Side> {
    let end = addr + len;
    let over = end - (a.start + a.size);
    let hint = if matches!(a.kind, Kind::Device(_)) && end <= a.start + a.hw_size {
        format!(
            "; real A2/A3 hardware pads this allocation to ALIGN_UP(size,32)+32 = {} bytes and \
             would not report it: the emulator is stricter than hardware",
            a.hw_size
        )
    } else {
        String::new()
    };
    fail(
        RT_PARAM_INVALID,
        format!(
            "{what} range {addr:#x}+{len} runs {over} bytes past the end of the {} allocation of \
             {} bytes at {:#x}{hint}",
            kind_name(a.kind),
            a.size,
            a.start
        ),
    )
}

#[cold]
fn unmapped(what: &str, addr: usize, len: usize, start: usize, rlen: usize) -> R<Side> {
    fail(
        RT_PARAM_INVALID,
        format!(
            "{what} range {addr:#x}+{len} lies in the virtual address range reserved at \
             {start:#x} ({rlen} bytes) where nothing is mapped (aclrtMapMem maps physical \
             memory there)"
        ),
    )
}

#[cold]
fn use_after_free(what: &str, addr: usize, start: usize, size: usize) -> R<Side> {
    fail(
        RT_PARAM_INVALID,
        format!(
            "{what} {addr:#x} lies in memory that was freed (the allocation of {size} bytes at \
             {start:#x}); use after free (the emulator detects it, hardware may not)"
        ),
    )
}

pub(super) fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Device(_) => "device",
        Kind::Pinned => "pinned host",
        Kind::Registered => "registered host",
    }
}
