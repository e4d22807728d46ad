//! Virtual memory management: address reservations, physical allocations backed by shared
//! memory files (so that they can be exported to other processes), and the mappings between
//! them. A reservation is device address space ([`super::space`]): a program range that stays
//! inaccessible, and an alias of the same length. A mapping places the physical allocation's
//! file at the same offset of both, so mappings placed back to back are one contiguous range in
//! both views. Mapped ranges are registered in the allocation table, so copies see device
//! memory, and the table knows the reservations, so an access where nothing is mapped is
//! refused.

use crate::base::config;
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use crate::memory;
use crate::memory::space::{self, Mode, map::Pair, regions};
use rustix::mm::MapFlags;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::BorrowedFd;
use std::sync::LazyLock;

/// The granularity of device (and huge-page host) physical memory.
pub(crate) const MIB2: usize = 2 << 20;
/// The granularity of 1 GiB-page memory.
pub(crate) const GIB1: usize = 1 << 30;

/// A physical allocation (`aclrtDrvMemHandle`).
#[derive(Debug)]
pub(crate) struct Physical {
    pub fd: i32,
    pub size: usize,
    /// Its granularity: a mapping of it starts at a multiple of this.
    granularity: usize,
    /// The device whose memory it is; None for host memory.
    pub device: Option<i32>,
    /// Bytes charged against the device's capacity (0 for imports and host memory).
    charged: u64,
    /// Mappings of it that are still in place.
    mapped: usize,
    /// `aclrtFreePhysical` was called while mapped: released at the last unmap.
    freed: bool,
    /// Imported from another process.
    pub imported: bool,
}

struct Reservation {
    /// The program range and its alias.
    pair: Pair,
    /// Mappings in the reservation: start → (length, physical handle).
    maps: BTreeMap<usize, (usize, usize)>,
}

#[derive(Default)]
struct Vmm {
    reservations: BTreeMap<usize, Reservation>,
    physical: HashMap<usize, Physical>,
}

static VMM: LazyLock<Mutex<Vmm>> = LazyLock::new(|| Mutex::ranked(Rank::Vmm));

fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

/// `aclrtReserveMemAddress`: reserves `size` bytes (rounded up to 2 MiB) aligned to 2 MiB (or
/// `alignment` when larger); `expect` is a hint. Returns the start.
pub(crate) fn reserve(size: usize, alignment: usize, expect: usize) -> R<usize> {
    let align = alignment.max(MIB2);
    if !align.is_power_of_two() {
        return fail(
            RT_PARAM_INVALID,
            format!("alignment {alignment} is not a power of two"),
        );
    }
    let len = align_up(size, MIB2).ok_or_else(|| Fail {
        code: RT_PARAM_INVALID,
        msg: format!("size {size} overflows"),
    })?;
    let pair = space::map::reserve(len, align, expect).map_err(|e| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("cannot reserve {len} bytes of address space: {e}"),
    })?;
    let start = pair.at;
    let mut v = VMM.lock();
    regions::add_space(start, len, "the virtual memory reservation");
    memory::write().add_reservation(start, len);
    v.reservations.insert(
        start,
        Reservation {
            pair,
            maps: BTreeMap::new(),
        },
    );
    Ok(start)
}

/// `aclrtReleaseMemAddress`.
pub(crate) fn release(start: usize) -> R {
    let mut v = VMM.lock();
    let Some(r) = v.reservations.get(&start) else {
        return fail(
            RT_PARAM_INVALID,
            format!("{start:#x} is not an address reserved with aclrtReserveMemAddress"),
        );
    };
    if !r.maps.is_empty() {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "the reservation at {start:#x} still has {} mapping(s); unmap them first",
                r.maps.len()
            ),
        );
    }
    let pair = r.pair;
    v.reservations.remove(&start);
    let mut t = memory::write();
    t.remove_reservation(start);
    // Kept reserved as device address space for a while (see `Table::bury_space`): a kernel
    // still holding an address of it fails its launch instead of crashing the process.
    // SAFETY: the reservation is this module's own, with nothing mapped in it.
    if unsafe { space::map::unreserve(pair) }.is_ok() {
        memory::pages::unmap(pair.alias, pair.len);
        t.bury_space(pair.at, pair.len, pair.len);
    } else {
        regions::remove_space(start);
        // SAFETY: as above.
        unsafe { space::map::release(pair) };
    }
    Ok(())
}

/// `aclrtMallocPhysical`: `size` bytes (rounded up to the granularity) on `device` (None: host).
pub(crate) fn malloc(size: usize, granularity: usize, device: Option<i32>) -> R<usize> {
    let len = align_up(size, granularity).ok_or_else(|| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("size {size} overflows"),
    })?;
    let charged = match device {
        Some(d) => {
            let cap = config::with(|c| c.memory);
            memory::write().charge(d, len as u64, cap)?;
            len as u64
        }
        None => 0,
    };
    let file = space::map::memory_file(c"ascendcl-emu-physical", len, space::map::Pages::Normal);
    let fd = match file.map(std::os::fd::IntoRawFd::into_raw_fd) {
        Ok(fd) => fd,
        Err(e) => {
            if let Some(d) = device {
                memory::write().uncharge(d, charged);
            }
            return fail(
                RT_MEMORY_ALLOCATION,
                format!("cannot allocate {len} bytes: {e}"),
            );
        }
    };
    Ok(insert(Physical {
        fd,
        size: len,
        granularity,
        device,
        charged,
        mapped: 0,
        freed: false,
        imported: false,
    }))
}

/// Registers a physical allocation opened from another process (device memory: its
/// granularity is taken as the 2 MiB of device memory's smallest pages).
pub(crate) fn insert_imported(fd: i32, size: usize, device: i32) -> usize {
    insert(Physical {
        fd,
        size,
        granularity: MIB2,
        device: Some(device),
        charged: 0,
        mapped: 0,
        freed: false,
        imported: true,
    })
}

fn insert(p: Physical) -> usize {
    let h = crate::base::hub::new_handle();
    VMM.lock().physical.insert(h, p);
    h
}

/// The file, size and device of a physical allocation made by this process (an import is
/// refused: it cannot be exported again).
pub(crate) fn physical(h: usize) -> R<(i32, usize, Option<i32>)> {
    VMM.lock()
        .physical
        .get(&h)
        .filter(|p| !p.freed && !p.imported)
        .map(|p| (p.fd, p.size, p.device))
        .ok_or_else(|| Fail {
            code: RT_INVALID_HANDLE,
            msg: format!("{h:#x} is not a live physical allocation made by this process"),
        })
}

fn drop_physical(v: &mut Vmm, h: usize) {
    if let Some(p) = v.physical.remove(&h) {
        // SAFETY: the descriptor belongs to the allocation, closed once here.
        unsafe { libc::close(p.fd) };
        if let Some(d) = p.device {
            memory::write().uncharge(d, p.charged);
        }
        crate::memory::ipc::close_owner(crate::memory::ipc::What::Physical, h as u64);
    }
}

/// `aclrtFreePhysical`: released now, or at the last unmap when still mapped.
pub(crate) fn free(h: usize) -> R {
    let mut v = VMM.lock();
    let Some(p) = v.physical.get_mut(&h).filter(|p| !p.freed) else {
        return fail(
            RT_INVALID_HANDLE,
            format!("{h:#x} is not a live physical allocation"),
        );
    };
    if p.mapped > 0 {
        p.freed = true;
        return Ok(());
    }
    drop_physical(&mut v, h);
    Ok(())
}

/// `aclrtMapMem`: maps the whole physical allocation `h` at `at` (a multiple of its granularity),
/// inside a reservation.
pub(crate) fn map(at: usize, size: usize, offset: usize, h: usize) -> R {
    let mut v = VMM.lock();
    let (fd, psize, granularity, device) = {
        let p = v
            .physical
            .get(&h)
            .filter(|p| !p.freed)
            .ok_or_else(|| Fail {
                code: RT_INVALID_HANDLE,
                msg: format!("{h:#x} is not a live physical allocation"),
            })?;
        (p.fd, p.size, p.granularity, p.device)
    };
    if offset != 0 {
        return fail(RT_PARAM_INVALID, format!("offset {offset} must be 0"));
    }
    if size != psize {
        return fail(
            RT_PARAM_INVALID,
            format!("size {size} must be the physical allocation's size {psize}"),
        );
    }
    if !at.is_multiple_of(granularity) {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "virPtr {at:#x} is not a multiple of the physical allocation's granularity \
                 {granularity} (aclrtMemGetAllocationGranularity)"
            ),
        );
    }
    let end = at.checked_add(size).ok_or_else(|| Fail {
        code: RT_PARAM_INVALID,
        msg: "the range overflows".to_string(),
    })?;
    let (&rstart, r) = v
        .reservations
        .range_mut(..=at)
        .next_back()
        .filter(|(s, r)| end <= **s + r.pair.len)
        .ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: format!("{at:#x}+{size} is not inside an address reservation"),
        })?;
    let clash = r
        .maps
        .range(..end)
        .next_back()
        .is_some_and(|(s, (l, _))| s + l > at);
    if clash {
        return fail(
            RT_PARAM_INVALID,
            format!("{at:#x}+{size} overlaps a mapping in the reservation at {rstart:#x}"),
        );
    }
    let pair = r.pair.sub(at - rstart, size);
    // Host memory stays accessible to the host; device memory is guarded.
    let mode = if device.is_some() {
        space::mode()
    } else {
        Mode::Open
    };
    // SAFETY: the range lies inside this module's reservation and overlaps no mapping; the file
    // is at least `size` bytes and stays open while the allocation lives.
    let mapped = unsafe {
        space::map::map_file(pair, BorrowedFd::borrow_raw(fd), 0, mode, MapFlags::empty())
    };
    if let Err(e) = mapped {
        return fail(RT_MEMORY_ALLOCATION, format!("cannot map: {e}"));
    }
    if let Err(e) =
        memory::write().insert_external(at, size, device, MIB2 as u32, (pair.delta(), rstart))
    {
        // SAFETY: the mapping just made, not registered anywhere.
        let _ = unsafe { space::map::unreserve(pair) };
        return Err(e);
    }
    if let Some(d) = device {
        regions::add(at, size, size, regions::What::Mapping, d);
    }
    r.maps.insert(at, (size, h));
    v.physical.get_mut(&h).expect("checked").mapped += 1;
    Ok(())
}

/// `aclrtUnmapMem`.
pub(crate) fn unmap(at: usize) -> R {
    let mut v = VMM.lock();
    let Some((&rstart, r)) = v
        .reservations
        .range_mut(..=at)
        .next_back()
        .filter(|(_, r)| r.maps.contains_key(&at))
    else {
        return fail(
            RT_PARAM_INVALID,
            format!("{at:#x} is not the start of a mapping made by aclrtMapMem"),
        );
    };
    let (len, h) = r.maps.remove(&at).expect("contained");
    let pair = r.pair.sub(at - rstart, len);
    memory::write().remove_external(at);
    regions::remove(at);
    // SAFETY: the mapping's own ranges, no longer registered: inaccessible and unbacked again.
    let _ = unsafe { space::map::unreserve(pair) };
    let release = match v.physical.get_mut(&h) {
        Some(p) => {
            p.mapped -= 1;
            p.freed && p.mapped == 0
        }
        None => false,
    };
    if release {
        drop_physical(&mut v, h);
    }
    Ok(())
}

/// The mapping that covers exactly `[at, at+size)`, as (device, physical handle).
pub(crate) fn mapping(at: usize, size: usize) -> R<(Option<i32>, usize)> {
    let v = VMM.lock();
    v.reservations
        .range(..=at)
        .next_back()
        .and_then(|(_, r)| r.maps.get(&at))
        .filter(|(l, _)| *l == size)
        .map(|(_, h)| (v.physical.get(h).and_then(|p| p.device), *h))
        .ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: format!("{at:#x}+{size} is not a mapping made by aclrtMapMem"),
        })
}

/// The mapping that contains `at`, as its device.
pub(crate) fn mapping_at(at: usize) -> Option<Option<i32>> {
    let v = VMM.lock();
    let (_, r) = v.reservations.range(..=at).next_back()?;
    let (s, (l, h)) = r.maps.range(..=at).next_back()?;
    (at < s + l).then(|| v.physical.get(h).and_then(|p| p.device))
}

/// Lets the host access the mapping that covers exactly `[at, at+size)` (`aclrtMemSetAccess`
/// with a host location): its program side opens for good (until it is unmapped).
pub(crate) fn grant_host(at: usize, size: usize) -> R {
    mapping(at, size)?;
    regions::grant_host(at);
    Ok(())
}
