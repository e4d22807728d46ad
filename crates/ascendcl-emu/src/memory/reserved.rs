//! The address ranges reserved for virtual memory (`aclrtReserveMemAddress`), as the allocation
//! table sees them: where nothing is mapped, a copy, a memset or a registration is refused
//! (107000) instead of being taken for pageable host memory.

use std::collections::BTreeMap;

/// The reservations: start → length, with their envelope.
#[derive(Debug)]
pub(super) struct Reserved {
    map: BTreeMap<usize, usize>,
    /// Envelope of the reservations (`lo..hi`; empty when there are none).
    lo: usize,
    hi: usize,
}

impl Default for Reserved {
    fn default() -> Reserved {
        Reserved {
            map: BTreeMap::new(),
            lo: usize::MAX,
            hi: 0,
        }
    }
}

impl Reserved {
    fn update(&mut self) {
        self.lo = self.map.first_key_value().map_or(usize::MAX, |(&s, _)| s);
        self.hi = self.map.last_key_value().map_or(0, |(&s, &l)| s + l);
    }

    /// Records `[start, start+len)`.
    pub(super) fn add(&mut self, start: usize, len: usize) {
        self.map.insert(start, len);
        self.update();
    }

    /// Forgets the reservation that starts at `start`.
    pub(super) fn remove(&mut self, start: usize) {
        self.map.remove(&start);
        self.update();
    }

    /// The reservation holding `addr`: its start and length.
    pub(super) fn find(&self, addr: usize) -> Option<(usize, usize)> {
        let (&s, &l) = self.map.range(..=addr).next_back()?;
        (addr < s + l).then_some((s, l))
    }

    /// The reservation that `[addr, last]` starts in or runs into.
    #[inline]
    pub(super) fn first_in(&self, addr: usize, last: usize) -> Option<(usize, usize)> {
        if last < self.lo || addr >= self.hi {
            return None;
        }
        let (&s, &l) = self.map.range(..=last).next_back()?;
        (s > addr || addr < s + l).then_some((s, l))
    }
}
