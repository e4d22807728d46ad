//! The arena of device memory: one sparse memory file mapped twice, once at the program's
//! addresses and once at the alias, reserved once for the process. An allocation takes a range
//! of it (no system call: the mappings exist already); a free releases the range's pages (one
//! `fallocate`) and the range returns to the arena when the record of freed ranges lets it go.

use super::map::{self, Pair};
use super::{Mode, regions};
use crate::base::lock::{Mutex, Rank};
use rustix::mm::MapFlags;
use std::collections::BTreeMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

/// Where the arena is placed when the address space allows it (the program's device addresses
/// then read like an NPU's, in the upper terabytes).
const HINT: usize = 0x1200_0000_0000;
/// Arena sizes tried, largest first (address space only: pages are allocated when touched).
const SIZES: [usize; 6] = [4 << 40, 1 << 40, 256 << 30, 64 << 30, 16 << 30, 4 << 30];
/// The alignment of the arena's start: offsets aligned to up to this are addresses aligned so.
const ALIGN: usize = 1 << 30;

/// The free ranges of the arena.
#[derive(Debug, Default)]
struct Extents {
    /// Free ranges below `top`: offset → length.
    free: BTreeMap<usize, usize>,
    /// Everything from `top` up is free.
    top: usize,
}

/// The arena.
#[derive(Debug)]
pub(crate) struct Arena {
    fd: OwnedFd,
    pair: Pair,
    extents: Mutex<Extents>,
}

/// The arena of the process, made on first use; `None` when no size could be mapped.
pub(crate) fn get() -> Option<&'static Arena> {
    static ARENA: OnceLock<Option<Arena>> = OnceLock::new();
    ARENA.get_or_init(|| Arena::new(super::mode())).as_ref()
}

impl Arena {
    fn new(mode: Mode) -> Option<Arena> {
        for len in SIZES {
            let Ok(fd) = map::memory_file(c"ascendcl-emu-device", len, map::Pages::Normal) else {
                return None;
            };
            let Ok(pair) = map::reserve(len, ALIGN, HINT) else {
                continue;
            };
            // SAFETY: both ranges were just reserved for the arena.
            if unsafe { map::map_file(pair, fd.as_fd(), 0, mode, MapFlags::empty()) }.is_err() {
                // SAFETY: the reservation just made, not handed out.
                unsafe { map::release(pair) };
                continue;
            }
            regions::add_space(pair.at, pair.len, "device memory");
            return Some(Arena {
                fd,
                pair,
                extents: Mutex::new(Rank::Arena, Extents::default()),
            });
        }
        None
    }

    /// What to add to a program address of the arena to get its alias.
    pub(crate) fn delta(&self) -> isize {
        self.pair.delta()
    }

    /// The arena's memory file.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The offset of `at` in the memory file.
    pub(crate) fn offset(&self, at: usize) -> u64 {
        (at - self.pair.at) as u64
    }

    /// The program range `[at, at+len)` of the arena with its alias.
    pub(crate) fn pair(&self, at: usize, len: usize) -> Pair {
        self.pair.sub(at - self.pair.at, len)
    }

    /// Takes `len` bytes (a multiple of the page size) aligned to `align` (a power of two, at
    /// most 1 GiB): the lowest free range that fits. Returns the program address.
    pub(crate) fn alloc(&self, len: usize, align: usize) -> Option<usize> {
        debug_assert!(align.is_power_of_two() && align <= ALIGN);
        let mut x = self.extents.lock();
        let up = |o: usize| (o + align - 1) & !(align - 1);
        let fit = x
            .free
            .iter()
            .find(|(o, l)| up(**o) + len <= **o + **l)
            .map(|(o, l)| (*o, *l));
        let off = match fit {
            Some((o, l)) => {
                x.free.remove(&o);
                let start = up(o);
                if start > o {
                    x.free.insert(o, start - o);
                }
                if start + len < o + l {
                    x.free.insert(start + len, o + l - (start + len));
                }
                start
            }
            None => {
                let start = up(x.top);
                if start.checked_add(len)? > self.pair.len {
                    return None;
                }
                if start > x.top {
                    let top = x.top;
                    x.free.insert(top, start - top);
                }
                x.top = start + len;
                start
            }
        };
        Some(self.pair.at + off)
    }

    /// Releases the pages of `[at, at+len)` (they read as zeros afterwards); the range stays
    /// taken.
    pub(crate) fn discard(&self, at: usize, len: usize) {
        let _ = map::discard(self.fd(), self.offset(at), len);
    }

    /// Returns `[at, at+len)` to the free ranges (merged with its neighbours).
    pub(crate) fn release(&self, at: usize, len: usize) {
        let mut x = self.extents.lock();
        let mut off = at - self.pair.at;
        let mut len = len;
        if let Some((&o, &l)) = x.free.range(..off).next_back()
            && o + l == off
        {
            x.free.remove(&o);
            off = o;
            len += l;
        }
        if let Some(l) = x.free.remove(&(off + len)) {
            len += l;
        }
        if off + len == x.top {
            x.top = off;
        } else {
            x.free.insert(off, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_taken_lowest_first_and_merged_when_released() {
        let a = get().expect("an arena");
        // Work in a region of the arena no other test uses: take a large block and carve it.
        let base = a.alloc(64 << 20, 2 << 20).unwrap();
        assert_eq!(base % (2 << 20), 0);
        a.release(base, 64 << 20);
        let p1 = a.alloc(4096, 4096).unwrap();
        let p2 = a.alloc(8192, 4096).unwrap();
        assert!(p2 >= p1 + 4096);
        let big = a.alloc(3 << 20, 2 << 20).unwrap();
        assert_eq!(big % (2 << 20), 0);
        let inside = |p: usize| p >= a.pair.at && p - a.pair.at < a.pair.len;
        assert!(inside(p1) && inside(big + (3 << 20) - 1));
        a.release(p1, 4096);
        // The freed page is reused first.
        let p3 = a.alloc(4096, 4096).unwrap();
        assert_eq!(p3, p1);
        for (p, l) in [(p3, 4096), (p2, 8192), (big, 3 << 20)] {
            a.release(p, l);
        }
    }

    #[test]
    fn the_alias_and_the_program_side_are_the_same_bytes() {
        let a = get().expect("an arena");
        let p = a.alloc(4096, 4096).unwrap();
        let alias = (p as isize + a.delta()) as *mut u64;
        // SAFETY: the alias of a page of the arena this test took.
        unsafe { alias.write_volatile(0x1234_5678) };
        // The program side maps the same page of the same file.
        let (file, offset) = super::super::tests::backing(p).expect("mapped");
        let (afile, aoffset) = super::super::tests::backing(alias as usize).expect("mapped");
        assert_eq!((file, offset), (afile, aoffset));
        a.discard(p, 4096);
        // SAFETY: as above; discarded pages read as zeros.
        assert_eq!(unsafe { alias.read_volatile() }, 0);
        a.release(p, 4096);
    }
}
