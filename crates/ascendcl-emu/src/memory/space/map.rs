//! The mappings of the device address space: a range of program addresses and its alias,
//! reserved together, and memory files mapped into both at the same offset.
//!
//! The program side carries the guard's protection ([`super::Mode`]); the alias is always
//! readable and writable. Both sides map the same pages of the same file, so a write through
//! one is seen through the other at once.

use super::Mode;
use rustix::mm::{MapFlags, MprotectFlags, ProtFlags};
use std::ffi::c_void;
use std::io;
use std::os::fd::BorrowedFd;

/// A range of program addresses and the alias range the emulator's code uses for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    /// The first program address.
    pub at: usize,
    /// The first alias address.
    pub alias: usize,
    /// The length of both ranges, in bytes (a multiple of the page size).
    pub len: usize,
}

impl Pair {
    /// What to add to a program address of the pair to get its alias.
    pub(crate) fn delta(&self) -> isize {
        self.alias.wrapping_sub(self.at) as isize
    }

    /// The sub-range of `len` bytes at `offset` bytes into the pair.
    pub(crate) fn sub(&self, offset: usize, len: usize) -> Pair {
        debug_assert!(offset + len <= self.len);
        Pair {
            at: self.at + offset,
            alias: self.alias + offset,
            len,
        }
    }
}

/// Maps `len` bytes of inaccessible, unbacked address space (no hint: `hint` 0).
fn reserve_one(len: usize, hint: usize) -> io::Result<usize> {
    // SAFETY: a new private mapping without access where the kernel chooses (the hint is only a
    // hint); it touches no existing memory.
    let p = unsafe {
        rustix::mm::mmap_anonymous(
            hint as *mut c_void,
            len,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    }?;
    Ok(p as usize)
}

/// Unmaps `[at, at+len)`.
///
/// # Safety
/// The range must be a mapping of this module that nothing uses any more.
unsafe fn unmap(at: usize, len: usize) {
    if len > 0 {
        // SAFETY: the caller's contract; a failure leaves the range mapped, which is harmless.
        let _ = unsafe { rustix::mm::munmap(at as *mut c_void, len) };
    }
}

/// Reserves `len` bytes of program address space aligned to `align` (a power of two, at least
/// the page size), near `hint` when it is not 0, and an alias range of the same length. Both are
/// inaccessible until a file is mapped into them ([`map_file`]).
pub(crate) fn reserve(len: usize, align: usize, hint: usize) -> io::Result<Pair> {
    let too_big = || io::Error::new(io::ErrorKind::OutOfMemory, "the range overflows");
    let total = len.checked_add(align).ok_or_else(too_big)?;
    // The alias first: the kernel places later mappings below earlier ones, so the program
    // range does not end up right below its alias (it borders other memory, as device memory
    // borders host memory).
    let alias = reserve_one(len, 0)?;
    let raw = match reserve_one(total, hint) {
        Ok(r) => r,
        Err(e) => {
            // SAFETY: the alias just reserved, not handed out.
            unsafe { unmap(alias, len) };
            return Err(e);
        }
    };
    let at = raw.checked_add(align - 1).ok_or_else(too_big)? & !(align - 1);
    // SAFETY: the head and tail of the reservation just made, outside [at, at+len).
    unsafe {
        unmap(raw, at - raw);
        unmap(at + len, raw + total - (at + len));
    }
    Ok(Pair { at, alias, len })
}

/// The protection of the program side of a mapping in `mode`.
fn program_prot(mode: Mode) -> ProtFlags {
    match mode {
        Mode::Protect => ProtFlags::empty(),
        Mode::Open | Mode::Pkey(_) => ProtFlags::READ | ProtFlags::WRITE,
    }
}

/// Maps `p.len` bytes of `fd` from `offset` over both ranges of `p`, which lie in a reservation
/// of this module ([`reserve`]): the alias readable and writable, the program side as `mode`
/// says. `flags` adds mapping flags (huge pages).
///
/// # Safety
/// Both ranges must be this module's and not in use: whatever was mapped there is replaced.
pub(crate) unsafe fn map_file(
    p: Pair,
    fd: BorrowedFd<'_>,
    offset: u64,
    mode: Mode,
    flags: MapFlags,
) -> io::Result<()> {
    let rw = ProtFlags::READ | ProtFlags::WRITE;
    let shared = MapFlags::SHARED | MapFlags::FIXED | flags;
    // SAFETY: the caller owns both ranges; MAP_FIXED replaces only them.
    unsafe {
        rustix::mm::mmap(p.alias as *mut c_void, p.len, rw, shared, fd, offset)?;
        if let Err(e) = rustix::mm::mmap(
            p.at as *mut c_void,
            p.len,
            program_prot(mode),
            shared,
            fd,
            offset,
        ) {
            let _ = unreserve(p);
            return Err(e.into());
        }
    }
    if let Mode::Pkey(key) = mode {
        super::pkey::protect(p.at, p.len, key)?;
    }
    Ok(())
}

/// Puts inaccessible, unbacked address space back over both ranges of `p` (a mapping's pages go,
/// the reservation stays).
///
/// # Safety
/// Both ranges must be this module's and not in use.
pub(crate) unsafe fn unreserve(p: Pair) -> io::Result<()> {
    for at in [p.at, p.alias] {
        // SAFETY: the caller owns the range; MAP_FIXED replaces only it.
        unsafe {
            rustix::mm::mmap_anonymous(
                at as *mut c_void,
                p.len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
            )
        }?;
    }
    Ok(())
}

/// Unmaps both ranges of `p`.
///
/// # Safety
/// Both ranges must be this module's and nothing may use them any more.
pub(crate) unsafe fn release(p: Pair) {
    // SAFETY: the caller's contract.
    unsafe {
        unmap(p.at, p.len);
        unmap(p.alias, p.len);
    }
}

/// Opens (`open`) or closes the program side of `[at, at+len)` (a mapping of [`map_file`]) in
/// [`Mode::Protect`].
pub(crate) fn protect(at: usize, len: usize, open: bool) -> io::Result<()> {
    let prot = if open {
        MprotectFlags::READ | MprotectFlags::WRITE
    } else {
        MprotectFlags::empty()
    };
    // SAFETY: changing the protection of the program side of a file mapping changes no memory;
    // the emulator's own code reaches the pages through the alias.
    Ok(unsafe { rustix::mm::mprotect(at as *mut c_void, len, prot) }?)
}

/// Closes a page a kernel touched where nothing lives (opened by [`protect`]) and drops what it
/// wrote: inaccessible again; an anonymous page (a reservation) reads as zeros afterwards, a page
/// of a memory file (freed arena memory) keeps the bytes until the range is used again.
pub(crate) fn close_stray(page: usize) -> io::Result<()> {
    protect(page, 1, false)?;
    // Dropping the page's private copy changes no live memory: nothing lives there.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: as just said.
    unsafe {
        rustix::mm::madvise(page as *mut c_void, 1, rustix::mm::Advice::LinuxDontNeed)?;
    }
    Ok(())
}

/// The pages of a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pages {
    /// The system's page size.
    Normal,
    /// 2 MiB huge pages (Linux `MFD_HUGETLB`).
    Huge2M,
    /// 1 GiB huge pages.
    Huge1G,
}

/// A new memory file of `len` bytes (sparse: pages are allocated when first touched), of
/// `pages`: a `memfd` on Linux; elsewhere a POSIX shared memory object unlinked at once (no huge
/// pages there: asking for them fails).
pub(crate) fn memory_file(
    name: &std::ffi::CStr,
    len: usize,
    pages: Pages,
) -> io::Result<std::os::fd::OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let fd = {
        use rustix::fs::MemfdFlags;
        let flags = match pages {
            Pages::Normal => MemfdFlags::empty(),
            Pages::Huge2M => MemfdFlags::HUGETLB | MemfdFlags::HUGE_2MB,
            Pages::Huge1G => MemfdFlags::HUGETLB | MemfdFlags::HUGE_1GB,
        };
        rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | flags)?
    };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let fd = {
        use rustix::shm;
        if pages != Pages::Normal {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "huge-page memory files exist on Linux only",
            ));
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let unique = format!(
            "/{}-{}-{}",
            name.to_string_lossy(),
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let fd = shm::open(
            unique.as_str(),
            shm::OFlags::CREATE | shm::OFlags::EXCL | shm::OFlags::RDWR,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )?;
        let _ = shm::unlink(unique.as_str());
        fd
    };
    rustix::fs::ftruncate(&fd, len as u64)?;
    Ok(fd)
}

/// Maps `len` bytes of the memory file `fd` readable, writable and shared, where the kernel
/// chooses (memory the emulator shares with other processes: the export table, notifies).
pub(crate) fn share(fd: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
    // SAFETY: a new shared mapping of a file the caller holds, at an address the kernel chooses;
    // it touches no existing memory.
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
    Ok(p as usize)
}

/// Releases the pages of `[offset, offset+len)` of the memory file `fd` (they read as zeros
/// afterwards).
pub(crate) fn discard(fd: BorrowedFd<'_>, offset: u64, len: usize) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::FallocateFlags;
        Ok(rustix::fs::fallocate(
            fd,
            FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
            offset,
            len as u64,
        )?)
    }
    // Elsewhere the pages stay until the file goes (the range is reused later).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, offset, len);
        Ok(())
    }
}
