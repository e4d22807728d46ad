//! The record of freed ranges: each stays reserved for a while after its free, so that a stale
//! pointer is reported as freed (use after free, double free) instead of being taken for host
//! memory, and in-flight work that still touches it lands in harmless memory.

use super::pages::unmap;
use std::collections::{BTreeMap, VecDeque};

/// How a freed range goes back when it is let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Release {
    /// Unmapped (a reserved mapping of its own).
    Unmap,
    /// Returned to the device arena.
    Arena,
    /// Unmapped, and forgotten as device address space (a closed IPC import, a released
    /// virtual memory reservation): until then a kernel's touch of it fails the launch
    /// instead of crashing the process.
    Space,
}

/// Freed ranges kept reserved before the oldest is returned to the system.
const MAX_ENTRIES: usize = 4096;
/// Bytes of freed ranges kept reserved before the oldest is returned to the system.
const MAX_BYTES: usize = 64 << 30;

/// One freed range.
#[derive(Debug)]
struct Tomb {
    /// Bytes of address space reserved.
    len: usize,
    /// The size the freed allocation had, for messages.
    size: usize,
    release: Release,
}

/// The freed ranges, oldest first in `fifo`.
#[derive(Debug)]
pub(super) struct Freed {
    tombs: BTreeMap<usize, Tomb>,
    /// Envelope of the freed ranges (`lo..hi`, empty when there are none): a range outside it
    /// needs no lookup in `tombs`.
    lo: usize,
    hi: usize,
    fifo: VecDeque<usize>,
    bytes: usize,
}

impl Default for Freed {
    fn default() -> Freed {
        Freed {
            tombs: BTreeMap::new(),
            lo: usize::MAX,
            hi: 0,
            fifo: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl Freed {
    /// Records `[base, base+len)`, which the caller keeps reserved, as the freed allocation of
    /// `size` bytes; returns the oldest ranges to the system beyond the bounds.
    pub(super) fn bury(&mut self, base: usize, len: usize, size: usize, release: Release) {
        self.tombs.insert(base, Tomb { len, size, release });
        self.fifo.push_back(base);
        self.bytes += len;
        while self.fifo.len() > MAX_ENTRIES || self.bytes > MAX_BYTES {
            let Some(old) = self.fifo.pop_front() else {
                break;
            };
            if let Some(t) = self.tombs.remove(&old) {
                self.bytes -= t.len;
                match t.release {
                    Release::Unmap => unmap(old, t.len),
                    Release::Space => {
                        super::space::regions::remove_space(old);
                        unmap(old, t.len);
                    }
                    Release::Arena => {
                        if let Some(a) = super::space::arena::get() {
                            a.release(old, t.len);
                        }
                    }
                }
            }
        }
        // The ranges never overlap: each is a reserved mapping of this module.
        self.lo = self.tombs.first_key_value().map_or(usize::MAX, |(&s, _)| s);
        self.hi = self.tombs.last_key_value().map_or(0, |(&s, t)| s + t.len);
    }

    /// The freed range holding `addr`: its start and the freed allocation's size.
    pub(super) fn find(&self, addr: usize) -> Option<(usize, usize)> {
        let (&s, t) = self.tombs.range(..=addr).next_back()?;
        (addr < s + t.len).then_some((s, t.size))
    }

    /// The freed range that `[addr, last]` starts in or runs into: its start, the freed
    /// allocation's size, and whether `addr` lies inside it.
    #[inline]
    pub(super) fn first_in(&self, addr: usize, last: usize) -> Option<(usize, usize, bool)> {
        if last < self.lo || addr >= self.hi {
            return None;
        }
        let (&s, t) = self.tombs.range(..=last).next_back()?;
        if s <= addr {
            (addr < s + t.len).then_some((s, t.size, true))
        } else {
            Some((s, t.size, false))
        }
    }
}
