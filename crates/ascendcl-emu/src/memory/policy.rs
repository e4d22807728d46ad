//! The malloc functions (`aclrtMalloc*`, `aclrtMallocHost`, `aclrtMemAllocManaged`): sizes as
//! the runtime pads them, the malloc policies with real page effects, capacity and budgets.

use super::pages::{
    GIB1, MIB1, MIB2, align_up, huge, map_aligned, map_anon, page_size, thp_available, unmap,
};
use super::space;
use super::space::map::Pages;
use super::table::{Alloc, Backing, Kind, read, write};
use crate::base::config::{self, HugePages};
use crate::base::error::*;
use rustix::mm::MapFlags;
use std::os::fd::AsFd;

/// The size variant of a malloc function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizing {
    /// `aclrtMalloc`, `aclrtMallocCached`: ALIGN_UP(size, 32) + 32 (A2/A3).
    Padded,
    /// `aclrtMallocAlign32`: ALIGN_UP(size, 32).
    Align32,
}

/// Where a policy placed a device allocation.
struct Placed {
    start: usize,
    /// Bytes of address space it owns.
    len: usize,
    page: u32,
    backing: Backing,
    delta: isize,
}

impl Placed {
    /// Gives the pages back (the allocation failed after it was placed).
    fn undo(self) {
        match self.backing {
            Backing::Arena { len } => {
                if let Some(a) = space::arena::get() {
                    a.release(self.start, len);
                }
            }
            // SAFETY: the allocation's own pair, never handed out.
            Backing::File { pair, .. } => unsafe { space::map::release(pair) },
            Backing::None | Backing::Anon { .. } => {}
        }
    }
}

/// Places `len` bytes (a multiple of the page size) of device memory aligned to `align`: in the
/// arena, or in a memory file of its own when the arena is full (or missing). `huge` asks for a
/// huge-page file of that page size instead.
fn place(len: usize, align: usize, huge: Option<Pages>) -> std::io::Result<Placed> {
    if huge.is_none()
        && let Some(a) = space::arena::get()
        && let Some(start) = a.alloc(len, align)
    {
        // The range's pages were released when it was freed: it reads as zeros.
        return Ok(Placed {
            start,
            len,
            page: 0,
            backing: Backing::Arena { len },
            delta: a.delta(),
        });
    }
    let pages = huge.unwrap_or(Pages::Normal);
    let fd = space::map::memory_file(c"ascendcl-emu-device", len, pages)?;
    let pair = space::map::reserve(len, align, 0)?;
    // A huge-page file reserves its pages when mapped, so a machine without free huge pages
    // fails here.
    if let Err(e) =
        // SAFETY: the pair was just reserved for this allocation.
        unsafe {
            space::map::map_file(pair, fd.as_fd(), 0, space::mode(), MapFlags::empty())
        }
    {
        // SAFETY: as above.
        unsafe { space::map::release(pair) };
        return Err(e);
    }
    Ok(Placed {
        start: pair.at,
        len,
        page: 0,
        delta: pair.delta(),
        backing: Backing::File { pair, fd },
    })
}

fn place_for_policy(api: &str, requested: usize, size: usize, policy: u32) -> R<Placed> {
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
    let huge_only = |page: usize, name: &str, pages: Pages| -> R<Placed> {
        if huge == HugePages::Off {
            return Err(oom(format!(
                "{name} needs huge pages and ASCENDCL_EMU_HUGEPAGES=off"
            )));
        }
        let len = align_up(size, page).ok_or_else(too_big)?;
        let mut p = place(len, page, Some(pages)).map_err(|_| {
            oom(format!(
                "{api} with a {name} policy needs {} huge pages and {}",
                if page == GIB1 { "1 GiB" } else { "2 MiB" },
                huge::NONE_FREE
            ))
        })?;
        p.page = page as u32;
        Ok(p)
    };
    match base_policy {
        1 | 4 => huge_only(MIB2, "HUGE_ONLY", Pages::Huge2M),
        6 | 7 => huge_only(GIB1, "HUGE1G_ONLY", Pages::Huge1G),
        0 | 3 if size > MIB1 && huge == HugePages::Auto && thp_available() => {
            // Whole 2 MiB pages, as the runtime uses them above 1 MiB.
            let len = align_up(size, MIB2).ok_or_else(too_big)?;
            let mut p = place(len, MIB2, None).map_err(|e| oom(format!("{e}")))?;
            p.page = MIB2 as u32;
            Ok(p)
        }
        _ => {
            let len = align_up(size, page_size() as usize).ok_or_else(too_big)?;
            let mut p = place(len, page_size() as usize, None).map_err(|e| oom(format!("{e}")))?;
            p.page = page_size();
            Ok(p)
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
    let m = place_for_policy(api, size, hw_size, policy)?;
    let mut t = write();
    let used = t.used(dev);
    if used.saturating_add(hw_size as u64) > capacity {
        drop(t);
        m.undo();
        return out_of_memory(dev, size, hw_size, sizing, used, capacity);
    }
    let start = m.start;
    space::regions::add(start, m.len, size, space::regions::What::Allocation, dev);
    t.insert(Alloc {
        start,
        size,
        span: m.len,
        kind: Kind::Device(dev),
        page_size: m.page,
        epoch,
        backing: m.backing,
        delta: m.delta,
        group: 0,
        charge: hw_size as u64,
        hw_size,
        external: false,
        shared_fd: None,
        managed: false,
    });
    Ok(start)
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
        backing: Backing::Anon { base, len },
        delta: 0,
        group: 0,
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
        backing: Backing::Anon { base, len },
        delta: 0,
        group: 0,
        charge: 0,
        hw_size: size,
        external: false,
        shared_fd: None,
        managed: true,
    });
    Ok(base)
}
