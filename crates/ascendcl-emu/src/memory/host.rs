//! Host memory registration (`aclrtHostRegister[V2]`): a registered range is an entry of the
//! allocation table that owns no mapping, or, inside pinned memory (`aclrtMallocHost`), a
//! registration recorded beside the pinned allocation (the runtime accepts it: the memory is
//! pinned already, and only a range registered twice is refused).

use super::pages::page_size;
use super::table::{Alloc, Backing, Kind, Table, kind_name};
use crate::base::error::*;

impl Table {
    /// Registers `[ptr, ptr+size)` as pinned host memory. A range that overlaps a registered
    /// range is 507910; one inside pinned memory is recorded beside it; one that overlaps
    /// device memory, a reservation or straddles pinned memory is 107000.
    pub(crate) fn register(&mut self, ptr: usize, size: usize) -> R {
        let end = ptr.checked_add(size).ok_or_else(|| Fail {
            code: INVALID_PARAM,
            msg: format!("ptr {ptr:#x} + size {size} overflows"),
        })?;
        if let Some((&s, &l)) = self
            .registered_pinned
            .range(..end)
            .next_back()
            .filter(|(s, l)| **s + **l > ptr)
        {
            return fail(
                HOST_MEMORY_ALREADY_REGISTERED,
                format!(
                    "range {ptr:#x}+{size} overlaps the range of {l} bytes at {s:#x} registered \
                     already"
                ),
            );
        }
        let overlap = self
            .live
            .range(..end)
            .next_back()
            .filter(|(_, a)| a.start + a.span > ptr);
        if let Some((_, a)) = overlap {
            if a.kind == Kind::Pinned && !a.external && ptr >= a.start && end <= a.start + a.span {
                self.registered_pinned.insert(ptr, size);
                return Ok(());
            }
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
        if let Some((s, l)) = self.reservation_within(ptr, end) {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "range {ptr:#x}+{size} lies in the virtual address range reserved at {s:#x} \
                     ({l} bytes), which is not host memory"
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
            backing: Backing::None,
            delta: 0,
            group: 0,
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
        if self.registered_pinned.remove(&ptr).is_some() {
            return Ok(());
        }
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

    /// Whether `addr` lies in a range registered with `aclrtHostRegister[V2]`.
    pub(crate) fn is_registered(&self, addr: usize) -> bool {
        if let Some((&s, &l)) = self.registered_pinned.range(..=addr).next_back()
            && addr < s + l
        {
            return true;
        }
        self.find(addr).is_some_and(|a| a.kind == Kind::Registered)
    }

    /// Forgets the registrations inside the pinned allocation `[start, start+span)`.
    pub(super) fn forget_registrations_in(&mut self, start: usize, span: usize) {
        let inside: Vec<usize> = self
            .registered_pinned
            .range(start..start + span)
            .map(|(s, _)| *s)
            .collect();
        for s in inside {
            self.registered_pinned.remove(&s);
        }
    }
}
