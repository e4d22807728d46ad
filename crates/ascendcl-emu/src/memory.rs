//! The table of live allocations (device, pinned host, registered host), malloc policies with
//! real page effects, and range validation in O(log n) (a binary search of a sorted array).

use crate::config::{self, HugePages};
use crate::error::*;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{LazyLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

const KIB4: usize = 4096;
const MIB1: usize = 1 << 20;
const MIB2: usize = 2 << 20;
const GIB1: usize = 1 << 30;
/// Freed ranges kept reserved (so a stale pointer is reported as freed, not taken for host
/// memory) before the oldest is returned to the system.
const TOMB_MAX_ENTRIES: usize = 4096;
const TOMB_MAX_BYTES: usize = 64 << 30;

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

/// Where one side of a copy lies, as the runtime's location/kind check sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loc {
    /// Pinned or registered host memory.
    Host,
    /// Device memory of a device.
    Device(i32),
    /// Any other (pageable) host memory.
    Unreg,
}

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
    epoch: u64,
    /// The mapping to release (0 length for registered memory).
    map_base: usize,
    map_len: usize,
    /// Bytes charged against the device capacity.
    charge: u64,
    /// Size the hardware would make accessible (A2/A3 padding), for messages.
    hw_size: usize,
    /// Mapped by `aclrtMapMem` or imported from another process: not freed by `aclrtFree`.
    external: bool,
    /// The shared memory file backing the allocation once it was exported (`aclrtIpcMem*`).
    shared_fd: Option<i32>,
    /// Managed (unified) memory (`aclrtMemAllocManaged`).
    managed: bool,
}

#[derive(Debug)]
struct Tomb {
    len: usize,
    size: usize,
    map_base: usize,
    map_len: usize,
}

/// The hot part of a live allocation, for [`Table::check`]: 32 bytes, in a sorted vector.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    /// End of the owned address range (`start + span`).
    end: usize,
    /// End of the accessible bytes (`start + size`).
    limit: usize,
    loc: Loc,
}

/// The allocation table.
#[derive(Debug)]
pub(crate) struct Table {
    live: BTreeMap<usize, Alloc>,
    /// The live allocations' spans sorted by start (the same keys as `live`): copy validation
    /// binary-searches this compact array instead of walking the B-tree.
    index: Vec<Span>,
    tombs: BTreeMap<usize, Tomb>,
    /// Envelope of the freed ranges (`tomb_lo..tomb_hi`, empty when there are none): a range
    /// outside it needs no lookup in `tombs`.
    tomb_lo: usize,
    tomb_hi: usize,
    fifo: VecDeque<usize>,
    tomb_bytes: usize,
    used: HashMap<i32, u64>,
    /// Bytes of pinned host memory mapped (page-rounded), charged against the host budget.
    pinned: u64,
    /// Usage hints and prefetch records of managed allocations (by start), dropped with them.
    hints: HashMap<usize, crate::managed::Hints>,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            live: BTreeMap::new(),
            index: Vec::new(),
            tombs: BTreeMap::new(),
            tomb_lo: usize::MAX,
            tomb_hi: 0,
            fifo: VecDeque::new(),
            tomb_bytes: 0,
            used: HashMap::new(),
            pinned: 0,
            hints: HashMap::new(),
        }
    }
}

static TABLE: LazyLock<RwLock<Table>> = LazyLock::new(|| RwLock::new(Table::default()));

pub(crate) fn read() -> RwLockReadGuard<'static, Table> {
    TABLE.read().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn write() -> RwLockWriteGuard<'static, Table> {
    TABLE.write().unwrap_or_else(|e| e.into_inner())
}

/// One validated side of an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Side {
    pub loc: Loc,
    /// Start of the allocation the side lies in (0 for unregistered memory).
    pub alloc: usize,
}

impl Table {
    fn find(&self, addr: usize) -> Option<&Alloc> {
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
        };
        match self.index.binary_search_by_key(&a.start, |s| s.start) {
            Ok(i) => self.index[i] = span,
            Err(i) => self.index.insert(i, span),
        }
        self.live.insert(a.start, a);
    }

    /// Removes the live allocation that starts at `start` (from the map and the index).
    fn remove_live(&mut self, start: usize) -> Option<Alloc> {
        let a = self.live.remove(&start)?;
        self.hints.remove(&start);
        if let Ok(i) = self.index.binary_search_by_key(&start, |s| s.start) {
            self.index.remove(i);
        }
        Some(a)
    }

    /// Recomputes the envelope of the freed ranges (they never overlap: each is a reserved
    /// mapping of this module).
    fn update_tomb_envelope(&mut self) {
        self.tomb_lo = self.tombs.first_key_value().map_or(usize::MAX, |(&s, _)| s);
        self.tomb_hi = self.tombs.last_key_value().map_or(0, |(&s, t)| s + t.len);
    }

    fn find_tomb(&self, addr: usize) -> Option<(usize, &Tomb)> {
        let (&s, t) = self.tombs.range(..=addr).next_back()?;
        (addr < s + t.len).then_some((s, t))
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
                        return past_end(what, addr, len, &self.live[&a.start]);
                    }
                    return Ok(Side {
                        loc: a.loc,
                        alloc: a.start,
                    });
                }
            } else {
                // `a` starts inside the range, after its first byte.
                let a = &self.live[&a.start];
                return self.runs_into(what, addr, len, kind_name(a.kind), a.start, a.size);
            }
        }
        if last < self.tomb_lo || addr >= self.tomb_hi {
            return Ok(Side {
                loc: Loc::Unreg,
                alloc: 0,
            });
        }
        if let Some((&s, t)) = self.tombs.range(..=last).next_back() {
            if s <= addr {
                if addr < s + t.len {
                    return use_after_free(what, addr, s, t.size);
                }
            } else {
                return self.runs_into(what, addr, len, "freed", s, t.size);
            }
        }
        Ok(Side {
            loc: Loc::Unreg,
            alloc: 0,
        })
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
            return past_end(what, addr, len, a);
        }
        if let Some((s, t)) = self.find_tomb(addr) {
            return use_after_free(what, addr, s, t.size);
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
    /// access) and its kind.
    pub(crate) fn region_of(&self, addr: usize) -> Option<(usize, usize, Kind)> {
        let a = self.find(addr)?;
        (addr < a.start + a.size).then_some((a.start, a.size, a.kind))
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
        if let Some((s, _)) = self.find_tomb(addr) {
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
    pub(crate) fn hints(&self, start: usize) -> Option<&crate::managed::Hints> {
        self.hints.get(&start)
    }

    /// The hints of the managed allocation at `start`, created for `span` bytes on first use.
    pub(crate) fn hints_mut(&mut self, start: usize, span: usize) -> &mut crate::managed::Hints {
        self.hints
            .entry(start)
            .or_insert_with(|| crate::managed::Hints::new(span))
    }

    /// Whether `addr` lies in a range registered with `aclrtHostRegister[V2]`.
    pub(crate) fn is_registered(&self, addr: usize) -> bool {
        self.find(addr).is_some_and(|a| a.kind == Kind::Registered)
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
        n
    }

    fn insert(&mut self, a: Alloc) {
        match a.kind {
            Kind::Device(d) => *self.used.entry(d).or_default() += a.charge,
            Kind::Pinned => self.pinned += a.charge,
            Kind::Registered => {}
        }
        self.add_live(a);
    }

    fn retire(&mut self, a: Alloc) {
        if let Some(fd) = a.shared_fd {
            // Exported: later imports fail; mappings importers made stay valid.
            crate::ipc::close_owner(crate::ipc::What::IpcMemory, a.start as u64);
            // SAFETY: the descriptor belongs to this allocation and is closed once, here.
            unsafe { libc::close(fd) };
        }
        match a.kind {
            Kind::Device(d) => {
                let u = self.used.entry(d).or_default();
                *u = u.saturating_sub(a.charge);
            }
            Kind::Pinned => self.pinned = self.pinned.saturating_sub(a.charge),
            Kind::Registered => {}
        }
        if a.map_len == 0 {
            return;
        }
        // Keep the range reserved: in-flight work that still touches it lands in harmless
        // memory, and a stale pointer is reported as freed. When it cannot be kept reserved it
        // was unmapped: the system may hand it out again, so it is not remembered as freed.
        if !replace_with_reserve(a.map_base, a.map_len) {
            return;
        }
        self.tombs.insert(
            a.map_base,
            Tomb {
                len: a.map_len,
                size: a.size,
                map_base: a.map_base,
                map_len: a.map_len,
            },
        );
        self.fifo.push_back(a.map_base);
        self.tomb_bytes += a.map_len;
        while self.fifo.len() > TOMB_MAX_ENTRIES || self.tomb_bytes > TOMB_MAX_BYTES {
            let Some(old) = self.fifo.pop_front() else {
                break;
            };
            if let Some(t) = self.tombs.remove(&old) {
                self.tomb_bytes -= t.map_len;
                unmap(t.map_base, t.map_len);
            }
        }
        self.update_tomb_envelope();
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
            if self.find_tomb(ptr).is_some() {
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
        let mut n = (0, 0);
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
    pub(crate) fn insert_external(
        &mut self,
        start: usize,
        len: usize,
        dev: Option<i32>,
        page: u32,
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
            map_base: 0,
            map_len: 0,
            charge: 0,
            hw_size: len,
            external: true,
            shared_fd: None,
            managed: false,
        });
        Ok(())
    }

    /// Forgets memory registered with [`Table::insert_external`] that starts at `start`.
    pub(crate) fn remove_external(&mut self, start: usize) -> bool {
        match self.live.get(&start) {
            Some(a) if a.external => {
                self.remove_live(start);
                true
            }
            _ => false,
        }
    }

    /// Makes the device allocation that starts at `start` shareable with other processes: its
    /// pages move into a shared memory file mapped at the same address (contents kept). Returns
    /// the file, the allocation's size and device. Work in flight on the allocation must be
    /// finished (the emulator does not stop it while the pages move).
    pub(crate) fn share(&mut self, start: usize) -> R<(i32, usize, i32)> {
        let a = match self.live.get_mut(&start) {
            Some(a) if !a.external => a,
            _ => {
                return fail(
                    RT_PARAM_INVALID,
                    format!(
                        "{start:#x} is not the start of a device allocation made by aclrtMalloc"
                    ),
                );
            }
        };
        let Kind::Device(dev) = a.kind else {
            return fail(RT_PARAM_INVALID, format!("{start:#x} is not device memory"));
        };
        if let Some(fd) = a.shared_fd {
            return Ok((fd, a.size, dev));
        }
        let fd = crate::notify::memfd(c"ascendcl-emu-ipc-memory", a.map_len).map_err(|e| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!("cannot create shared memory for the export: {e}"),
        })?;
        // SAFETY: the file was just sized to map_len; the mapping is private to this call.
        let tmp = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                a.map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if tmp == libc::MAP_FAILED {
            // SAFETY: closing the descriptor we own.
            unsafe { libc::close(fd) };
            return fail(
                RT_MEMORY_ALLOCATION,
                "cannot map shared memory for the export",
            );
        }
        // SAFETY: both ranges are map_len bytes: the allocation's mapping and the new file.
        unsafe {
            std::ptr::copy_nonoverlapping(a.map_base as *const u8, tmp.cast::<u8>(), a.map_len);
            libc::munmap(tmp, a.map_len);
        }
        // SAFETY: replaces the allocation's own mapping, at the same address and length, with
        // the shared file now holding the same bytes.
        let p = unsafe {
            libc::mmap(
                a.map_base as *mut libc::c_void,
                a.map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            // SAFETY: closing the descriptor we own; the old mapping is untouched on failure.
            unsafe { libc::close(fd) };
            return fail(RT_MEMORY_ALLOCATION, "cannot map the export into place");
        }
        a.shared_fd = Some(fd);
        Ok((fd, a.size, dev))
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

    /// Registers `[ptr, ptr+size)` as pinned host memory.
    pub(crate) fn register(&mut self, ptr: usize, size: usize) -> R {
        let end = ptr.checked_add(size).ok_or_else(|| Fail {
            code: INVALID_PARAM,
            msg: format!("ptr {ptr:#x} + size {size} overflows"),
        })?;
        let overlap = self
            .live
            .range(..end)
            .next_back()
            .filter(|(_, a)| a.start + a.span > ptr);
        if let Some((_, a)) = overlap {
            let code = if a.kind == Kind::Registered {
                HOST_MEMORY_ALREADY_REGISTERED
            } else {
                RT_PARAM_INVALID
            };
            return fail(
                code,
                format!(
                    "range {ptr:#x}+{size} overlaps the {} range of {} bytes at {:#x}",
                    kind_name(a.kind),
                    a.size,
                    a.start
                ),
            );
        }
        self.insert(Alloc {
            start: ptr,
            size,
            span: size,
            kind: Kind::Registered,
            page_size: page_size(),
            epoch: 0,
            map_base: 0,
            map_len: 0,
            charge: 0,
            hw_size: size,
            external: false,
            shared_fd: None,
            managed: false,
        });
        Ok(())
    }

    /// Forgets the registration that starts at `ptr`.
    pub(crate) fn unregister(&mut self, ptr: usize) -> R {
        match self.live.get(&ptr) {
            Some(a) if a.kind == Kind::Registered => {
                self.remove_live(ptr);
                Ok(())
            }
            _ => fail(
                HOST_MEMORY_NOT_REGISTERED,
                format!("{ptr:#x} is not the start of a range registered with aclrtHostRegister"),
            ),
        }
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
fn use_after_free(what: &str, addr: usize, start: usize, size: usize) -> R<Side> {
    fail(
        RT_PARAM_INVALID,
        format!(
            "{what} {addr:#x} lies in memory that was freed (the allocation of {size} bytes at \
             {start:#x}); use after free (the emulator detects it, hardware may not)"
        ),
    )
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Device(_) => "device",
        Kind::Pinned => "pinned host",
        Kind::Registered => "registered host",
    }
}

/// The system page size.
pub(crate) fn page_size() -> u32 {
    static PS: LazyLock<u32> = LazyLock::new(|| {
        // SAFETY: sysconf has no preconditions.
        let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if v > 0 { v as u32 } else { KIB4 as u32 }
    });
    *PS
}

fn thp_available() -> bool {
    static THP: LazyLock<bool> = LazyLock::new(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|s| !s.contains("[never]"))
            .unwrap_or(false)
    });
    *THP
}

fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

/// The size variant of a malloc function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizing {
    /// `aclrtMalloc`, `aclrtMallocCached`: ALIGN_UP(size, 32) + 32 (A2/A3).
    Padded,
    /// `aclrtMallocAlign32`: ALIGN_UP(size, 32).
    Align32,
}

struct Mapping {
    base: usize,
    len: usize,
    start: usize,
    page: u32,
}

/// The OS's huge-page mmap flags and madvise hints. Linux has them; other systems (macOS) have
/// none, so there `HUGE_ONLY` allocations fail as on a Linux machine with no huge pages
/// reserved (the message says why), and `HUGE_FIRST` uses normal pages.
#[cfg(target_os = "linux")]
mod huge {
    pub(super) const MAP_2M: Option<libc::c_int> = Some(libc::MAP_HUGETLB);
    pub(super) const MAP_1G: Option<libc::c_int> = Some(libc::MAP_HUGETLB | libc::MAP_HUGE_1GB);
    pub(super) const ADVISE_HUGE: Option<libc::c_int> = Some(libc::MADV_HUGEPAGE);
    pub(super) const ADVISE_NORMAL: Option<libc::c_int> = Some(libc::MADV_NOHUGEPAGE);
    pub(super) const NONE_FREE: &str =
        "the machine has none free (see HugePages_Free in /proc/meminfo)";
}
#[cfg(not(target_os = "linux"))]
mod huge {
    pub(super) const MAP_2M: Option<libc::c_int> = None;
    pub(super) const MAP_1G: Option<libc::c_int> = None;
    pub(super) const ADVISE_HUGE: Option<libc::c_int> = None;
    pub(super) const ADVISE_NORMAL: Option<libc::c_int> = None;
    pub(super) const NONE_FREE: &str =
        "this OS has none the emulator can use (it maps huge pages on Linux only)";
}

fn map_anon(len: usize, extra_flags: libc::c_int) -> Option<usize> {
    // Huge-page mappings must reserve their pages now (MAP_NORESERVE would let the mmap succeed
    // and fault on first touch when none are free); normal mappings are lazy and unreserved.
    let noreserve = if extra_flags != 0 {
        0
    } else {
        libc::MAP_NORESERVE
    };
    // SAFETY: an anonymous private mapping at an address the kernel chooses touches no existing
    // memory; the result is checked for MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | noreserve | extra_flags,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

fn unmap(base: usize, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY: [base, base+len) is a mapping this module created and no longer hands out.
    unsafe { libc::munmap(base as *mut libc::c_void, len) };
}

/// Whether the range stayed reserved (otherwise it was unmapped).
fn replace_with_reserve(base: usize, len: usize) -> bool {
    // SAFETY: [base, base+len) is a mapping this module owns; replacing it with a fresh
    // anonymous mapping at the same address releases its pages and keeps the range reserved.
    let p = unsafe {
        libc::mmap(
            base as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        // Could not keep it reserved: release it instead.
        unmap(base, len);
        return false;
    }
    true
}

fn advise(base: usize, len: usize, advice: libc::c_int) -> bool {
    // SAFETY: madvise with HUGEPAGE/NOHUGEPAGE only changes how the kernel backs a mapping this
    // module owns; it never changes its contents.
    unsafe { libc::madvise(base as *mut libc::c_void, len, advice) == 0 }
}

/// Maps `len` bytes aligned to `align` (a power of two ≥ the page size).
fn map_aligned(len: usize, align: usize) -> Option<(usize, usize)> {
    if align <= page_size() as usize {
        return map_anon(len, 0).map(|b| (b, len));
    }
    let total = len.checked_add(align)?;
    let raw = map_anon(total, 0)?;
    let start = align_up(raw, align)?;
    let head = start - raw;
    let tail = total - head - len;
    unmap(raw, head);
    unmap(start + len, tail);
    Some((start, len))
}

fn map_for_policy(api: &str, requested: usize, size: usize, policy: u32) -> R<Mapping> {
    let huge = config::with(|c| c.hugepages);
    let oom = |why: String| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("cannot allocate {requested} bytes: {why}"),
    };
    let too_big = || oom("size overflows".to_string());
    let base_policy = match policy {
        0..=7 => policy,
        _ => 0,
    };
    match base_policy {
        1 | 4 => {
            if huge == HugePages::Off {
                return Err(oom(
                    "HUGE_ONLY needs huge pages and ASCENDCL_EMU_HUGEPAGES=off".to_string(),
                ));
            }
            let len = align_up(size, MIB2).ok_or_else(too_big)?;
            let base = huge::MAP_2M
                .and_then(|flags| map_anon(len, flags))
                .ok_or_else(|| {
                    oom(format!(
                        "{api} with a HUGE_ONLY policy needs 2 MiB huge pages and {}",
                        huge::NONE_FREE
                    ))
                })?;
            Ok(Mapping {
                base,
                len,
                start: base,
                page: MIB2 as u32,
            })
        }
        6 | 7 => {
            if huge == HugePages::Off {
                return Err(oom(
                    "HUGE1G_ONLY needs huge pages and ASCENDCL_EMU_HUGEPAGES=off".to_string(),
                ));
            }
            let len = align_up(size, GIB1).ok_or_else(too_big)?;
            let base = huge::MAP_1G
                .and_then(|flags| map_anon(len, flags))
                .ok_or_else(|| {
                    oom(format!(
                        "{api} with a HUGE1G_ONLY policy needs 1 GiB huge pages and {}",
                        huge::NONE_FREE
                    ))
                })?;
            Ok(Mapping {
                base,
                len,
                start: base,
                page: GIB1 as u32,
            })
        }
        0 | 3 if size > MIB1 && huge == HugePages::Auto && thp_available() => {
            let len = align_up(size, MIB2).ok_or_else(too_big)?;
            let (base, len) =
                map_aligned(len, MIB2).ok_or_else(|| oom("mmap failed".to_string()))?;
            let page = if huge::ADVISE_HUGE.is_some_and(|advice| advise(base, len, advice)) {
                MIB2 as u32
            } else {
                page_size()
            };
            Ok(Mapping {
                base,
                len,
                start: base,
                page,
            })
        }
        _ => {
            let len = align_up(size, page_size() as usize).ok_or_else(too_big)?;
            let base = map_anon(len, 0).ok_or_else(|| oom("mmap failed".to_string()))?;
            if let Some(advice) = huge::ADVISE_NORMAL {
                advise(base, len, advice);
            }
            Ok(Mapping {
                base,
                len,
                start: base,
                page: page_size(),
            })
        }
    }
}

/// Allocates device memory on `dev` with `policy`, charging it against `capacity`.
pub(crate) fn malloc_device(
    api: &str,
    (dev, epoch): (i32, u64),
    size: usize,
    policy: u32,
    sizing: Sizing,
    capacity: u64,
) -> R<usize> {
    let huge1g = matches!(policy, 6 | 7);
    let hw_size = match sizing {
        Sizing::Padded if !huge1g => align_up(size, 32).and_then(|v| v.checked_add(32)),
        _ => align_up(size, 32),
    }
    .ok_or_else(|| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("size {size} overflows"),
    })?;
    {
        let t = read();
        let used = t.used(dev);
        if used.saturating_add(hw_size as u64) > capacity {
            return out_of_memory(dev, size, hw_size, sizing, used, capacity);
        }
    }
    let m = map_for_policy(api, size, hw_size, policy)?;
    let mut t = write();
    let used = t.used(dev);
    if used.saturating_add(hw_size as u64) > capacity {
        drop(t);
        unmap(m.base, m.len);
        return out_of_memory(dev, size, hw_size, sizing, used, capacity);
    }
    t.insert(Alloc {
        start: m.start,
        size,
        span: m.len - (m.start - m.base),
        kind: Kind::Device(dev),
        page_size: m.page,
        epoch,
        map_base: m.base,
        map_len: m.len,
        charge: hw_size as u64,
        hw_size,
        external: false,
        shared_fd: None,
        managed: false,
    });
    Ok(m.start)
}

/// The failure of a device allocation beyond the capacity. When the runtime's padding (the size
/// charged, `hw_size`) is what does not fit, the message says so.
#[cold]
fn out_of_memory<T>(
    dev: i32,
    size: usize,
    hw_size: usize,
    sizing: Sizing,
    used: u64,
    capacity: u64,
) -> R<T> {
    let free = capacity.saturating_sub(used);
    let rule = match sizing {
        Sizing::Padded if hw_size >= size.saturating_add(32) => "ALIGN_UP(size, 32) + 32",
        _ => "ALIGN_UP(size, 32)",
    };
    let padding = if hw_size == size {
        String::new()
    } else if size as u64 <= free {
        format!(
            ", which the runtime pads to {rule} = {hw_size} bytes: the padding is what does not \
             fit"
        )
    } else {
        format!(" (padded to {rule} = {hw_size} bytes)")
    };
    fail(
        RT_MEMORY_ALLOCATION,
        format!(
            "device {dev} is out of memory: {size} bytes requested{padding}; {free} of \
             {capacity} bytes free (ASCENDCL_EMU_MEMORY sets the capacity)"
        ),
    )
}

/// Allocates `size` bytes of pinned host memory within the process's pinned budget
/// ([`crate::Config::host_memory`]).
pub(crate) fn malloc_host(size: usize) -> R<usize> {
    let len = align_up(size, page_size() as usize).ok_or_else(|| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("size {size} overflows"),
    })?;
    let budget = config::with(|c| c.host_memory);
    let over = |pinned: u64| {
        (pinned.saturating_add(len as u64) > budget).then(|| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!(
                "the pinned host memory budget is exhausted: {size} bytes requested ({len} with \
                 page rounding), {} of {budget} bytes left (ASCENDCL_EMU_HOST_MEMORY sets the \
                 budget; by default half of the machine's physical memory)",
                budget.saturating_sub(pinned)
            ),
        })
    };
    if let Some(f) = over(read().pinned) {
        return Err(f);
    }
    let base = map_anon(len, 0).ok_or_else(|| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("cannot allocate {size} bytes of host memory"),
    })?;
    let mut t = write();
    if let Some(f) = over(t.pinned) {
        drop(t);
        unmap(base, len);
        return Err(f);
    }
    t.insert(Alloc {
        start: base,
        size,
        span: len,
        kind: Kind::Pinned,
        page_size: page_size(),
        epoch: 0,
        map_base: base,
        map_len: len,
        charge: len as u64,
        hw_size: size,
        external: false,
        shared_fd: None,
        managed: false,
    });
    Ok(base)
}

/// Where managed memory is placed when the address space allows it (as on hardware).
const MANAGED_BASE: usize = 0x900_0000_0000;

/// Allocates `size` bytes (rounded up to 2 MiB) of managed memory for device `dev`: host and
/// device share it (one address space in the emulator). Not charged against the device's
/// capacity: managed pages live wherever they were last touched.
pub(crate) fn malloc_managed((dev, epoch): (i32, u64), size: usize) -> R<usize> {
    let len = align_up(size, MIB2).ok_or_else(|| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("size {size} overflows"),
    })?;
    // SAFETY: an anonymous private mapping; the address is a hint only.
    let p = unsafe {
        libc::mmap(
            MANAGED_BASE as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    // Managed memory is made of whole 2 MiB pages: where the hint was not honoured with an
    // aligned address, map again with that alignment.
    let p = match p {
        libc::MAP_FAILED => None,
        p if (p as usize).is_multiple_of(MIB2) => Some(p as usize),
        p => {
            unmap(p as usize, len);
            map_aligned(len, MIB2).map(|(start, _)| start)
        }
    };
    let Some(p) = p else {
        return fail(
            RT_MEMORY_ALLOCATION,
            format!("cannot allocate {size} bytes of managed memory"),
        );
    };
    let base = p;
    write().insert(Alloc {
        start: base,
        size,
        span: len,
        kind: Kind::Device(dev),
        page_size: MIB2 as u32,
        epoch,
        map_base: base,
        map_len: len,
        charge: 0,
        hw_size: size,
        external: false,
        shared_fd: None,
        managed: true,
    });
    Ok(base)
}
