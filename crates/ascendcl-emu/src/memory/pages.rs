//! Page-level mappings: the page size, huge pages and their availability, anonymous mappings
//! aligned as asked, and freed ranges kept reserved.

use std::sync::LazyLock;

pub(super) const KIB4: usize = 4096;
pub(super) const MIB1: usize = 1 << 20;
pub(super) const MIB2: usize = 2 << 20;
pub(super) const GIB1: usize = 1 << 30;

/// The system page size.
pub(crate) fn page_size() -> u32 {
    static PS: LazyLock<u32> = LazyLock::new(|| {
        // SAFETY: sysconf has no preconditions.
        let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if v > 0 { v as u32 } else { KIB4 as u32 }
    });
    *PS
}

pub(super) fn thp_available() -> bool {
    static THP: LazyLock<bool> = LazyLock::new(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|s| !s.contains("[never]"))
            .unwrap_or(false)
    });
    *THP
}

pub(super) fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

/// Why a huge-page allocation failed. Linux has huge-page memory files; other systems (macOS)
/// have none, so there `HUGE_ONLY` allocations fail as on a Linux machine with no huge pages
/// reserved (the message says why), and `HUGE_FIRST` uses normal pages.
pub(super) mod huge {
    #[cfg(target_os = "linux")]
    pub(crate) const NONE_FREE: &str =
        "the machine has none free (see HugePages_Free in /proc/meminfo)";
    #[cfg(not(target_os = "linux"))]
    pub(crate) const NONE_FREE: &str =
        "this OS has none the emulator can use (it maps huge pages on Linux only)";
}

pub(super) fn map_anon(len: usize, extra_flags: libc::c_int) -> Option<usize> {
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

pub(super) fn unmap(base: usize, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY: [base, base+len) is a mapping this module created and no longer hands out.
    unsafe { libc::munmap(base as *mut libc::c_void, len) };
}

/// Whether the range stayed reserved (otherwise it was unmapped).
pub(super) fn replace_with_reserve(base: usize, len: usize) -> bool {
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

/// Maps `len` bytes aligned to `align` (a power of two ≥ the page size).
pub(super) fn map_aligned(len: usize, align: usize) -> Option<(usize, usize)> {
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
