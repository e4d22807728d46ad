//! The one way the emulator's own code reads and writes memory the allocation table validated:
//! the copy engine, built-in tasks, value writes and waits, model steps, kernel arguments read
//! from device memory, and the libraries layered on the runtime (through
//! [`crate::extension::MemoryRange`]). Device memory is reached at its alias (the program's
//! addresses are guarded, see [`super::space`]); host memory at its own address. A [`Side`]
//! (what [`super::Table::check`] returned for the range) says which: its `delta` is added to the
//! program's address.
//!
//! Device-side atomics and value waits touch 1-, 2-, 4- and 8-byte words concurrently with
//! these accesses, so a naturally aligned access of one such word is one atomic operation
//! (`Acquire` loads, `Release` stores); longer ranges are plain copies (`memmove`), whose
//! concurrent use with atomics on the same bytes is a race on hardware as well.

use super::Side;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

/// The address the emulator's code uses for the program's address `addr` of a range validated
/// as `side`.
#[inline]
pub(crate) fn ptr(addr: usize, side: Side) -> *mut u8 {
    addr.wrapping_add_signed(side.delta) as *mut u8
}

/// Copies `len` bytes from `src` to `dst` (they may overlap); one atomic load and store for a
/// naturally aligned word of 1, 2, 4 or 8 bytes.
///
/// # Safety
/// Both ranges must be valid for the access.
#[inline]
unsafe fn copy_raw(dst: *mut u8, src: *const u8, len: usize) {
    let aligned = (dst as usize | src as usize) & len.wrapping_sub(1) == 0;
    // SAFETY: (of every arm) the caller guarantees both ranges are valid; an aligned word is
    // accessed through an atomic of its size, which has the alignment checked above.
    unsafe {
        match len {
            1 => (*AtomicU8::from_ptr(dst)).store(
                (*AtomicU8::from_ptr(src as *mut u8)).load(Ordering::Acquire),
                Ordering::Release,
            ),
            2 if aligned => (*AtomicU16::from_ptr(dst.cast())).store(
                (*AtomicU16::from_ptr(src as *mut u16)).load(Ordering::Acquire),
                Ordering::Release,
            ),
            4 if aligned => (*AtomicU32::from_ptr(dst.cast())).store(
                (*AtomicU32::from_ptr(src as *mut u32)).load(Ordering::Acquire),
                Ordering::Release,
            ),
            8 if aligned => (*AtomicU64::from_ptr(dst.cast())).store(
                (*AtomicU64::from_ptr(src as *mut u64)).load(Ordering::Acquire),
                Ordering::Release,
            ),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// Copies `len` bytes from `src` (validated as `ss`) to `dst` (validated as `ds`); the ranges
/// may overlap.
///
/// # Safety
/// Both ranges must have been validated by the allocation table (and their allocations still
/// be live), or be pageable memory the caller vouches for.
#[inline]
pub(crate) unsafe fn copy(dst: usize, ds: Side, src: usize, ss: Side, len: usize) {
    // SAFETY: the caller's contract; `ptr` gives the emulator's view of each range.
    unsafe { copy_raw(ptr(dst, ds), ptr(src, ss), len) }
}

/// A pitched 2D copy: `height` rows of `width` bytes.
///
/// # Safety
/// As [`copy`], for `[dst, dst + dpitch*(height-1) + width)` and the matching source range.
pub(crate) unsafe fn copy_2d(
    (dst, ds, dpitch): (usize, Side, usize),
    (src, ss, spitch): (usize, Side, usize),
    width: usize,
    height: usize,
) {
    for row in 0..height {
        // SAFETY: every row lies inside the validated pitched ranges.
        unsafe { copy(dst + row * dpitch, ds, src + row * spitch, ss, width) };
    }
}

/// Reads `out.len()` bytes at `addr` (validated as `side`).
///
/// # Safety
/// As [`copy`].
#[inline]
pub(crate) unsafe fn read(addr: usize, side: Side, out: &mut [u8]) {
    // SAFETY: the caller's contract; `out` is ours.
    unsafe { copy_raw(out.as_mut_ptr(), ptr(addr, side), out.len()) }
}

/// Writes `data` at `addr` (validated as `side`).
///
/// # Safety
/// As [`copy`].
#[inline]
pub(crate) unsafe fn write(addr: usize, side: Side, data: &[u8]) {
    // SAFETY: the caller's contract; `data` is ours.
    unsafe { copy_raw(ptr(addr, side), data.as_ptr(), data.len()) }
}

/// The `N` bytes at `addr` (validated as `side`).
///
/// # Safety
/// As [`copy`].
#[inline]
pub(crate) unsafe fn read_array<const N: usize>(addr: usize, side: Side) -> [u8; N] {
    let mut b = [0u8; N];
    // SAFETY: the caller's contract.
    unsafe { read(addr, side, &mut b) };
    b
}

/// Fills `len` bytes at `dst` (validated as `side`) with `byte`.
///
/// # Safety
/// As [`copy`].
pub(crate) unsafe fn fill(dst: usize, side: Side, byte: u8, len: usize) {
    let p = ptr(dst, side);
    if len <= 8 && len.is_power_of_two() && (p as usize) & (len - 1) == 0 {
        let word = u64::from_ne_bytes([byte; 8]).to_ne_bytes();
        // SAFETY: the caller's contract; an aligned word is stored atomically by `copy_raw`.
        unsafe { copy_raw(p, word.as_ptr(), len) };
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_bytes(p, byte, len) };
    }
}

/// Fills `words` 32-bit words at `dst` (validated as `side`; need not be aligned) with `value`.
///
/// # Safety
/// As [`copy`], for `4 * words` bytes.
pub(crate) unsafe fn fill32(dst: usize, side: Side, value: u32, words: usize) {
    let v = value.to_ne_bytes();
    for i in 0..words {
        // SAFETY: inside the range the caller vouches for.
        unsafe { write(dst + 4 * i, side, &v) };
    }
}

/// The 64-bit word at `addr` (validated as `side`), which other streams and threads may be
/// writing: an atomic load when aligned.
///
/// # Safety
/// As [`copy`], for 8 bytes.
#[inline]
pub(crate) unsafe fn load_u64(addr: usize, side: Side) -> u64 {
    // SAFETY: the caller's contract.
    u64::from_ne_bytes(unsafe { read_array(addr, side) })
}

/// Writes the 64-bit word at `addr` (validated as `side`): an atomic store when aligned.
///
/// # Safety
/// As [`copy`], for 8 bytes.
#[inline]
pub(crate) unsafe fn store_u64(addr: usize, side: Side, v: u64) {
    // SAFETY: the caller's contract.
    unsafe { write(addr, side, &v.to_ne_bytes()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Loc;

    fn host() -> Side {
        Side {
            loc: Loc::Unreg,
            alloc: 0,
            delta: 0,
        }
    }

    #[test]
    fn copies_fills_and_words_reach_the_bytes() {
        let mut a = [0u64; 4];
        let mut b = [0u64; 4];
        let (pa, pb) = (a.as_mut_ptr() as usize, b.as_mut_ptr() as usize);
        // SAFETY: both arrays are ours and live for every access below.
        unsafe {
            store_u64(pa, host(), 0x0102_0304_0506_0708);
            assert_eq!(load_u64(pa, host()), 0x0102_0304_0506_0708);
            copy(pb, host(), pa, host(), 8);
            fill(pa + 8, host(), 0xab, 3);
            fill32(pa + 16, host(), 0xdead_beef, 2);
            // Overlapping copy: a memmove.
            copy(pa + 1, host(), pa, host(), 7);
        }
        assert_eq!(b[0], 0x0102_0304_0506_0708);
        assert_eq!(a[1].to_ne_bytes()[..3], [0xab; 3]);
        assert_eq!(
            a[2],
            u64::from(0xdead_beefu32) | (u64::from(0xdead_beefu32) << 32)
        );
        let first = 0x0102_0304_0506_0708u64.to_ne_bytes();
        assert_eq!(a[0].to_ne_bytes()[1..], first[..7]);
    }

    #[test]
    fn the_side_s_delta_moves_the_access() {
        let mut a = [0u8; 16];
        let base = a.as_mut_ptr() as usize;
        let side = Side {
            loc: Loc::Device(0),
            alloc: 0x1000,
            delta: base as isize - 0x1000,
        };
        // SAFETY: 0x1000 + delta is `a`, which is ours.
        unsafe { write(0x1004, side, &[9, 8, 7]) };
        assert_eq!(a[4..7], [9, 8, 7]);
    }
}
