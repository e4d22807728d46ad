//! Usage hints of managed (unified) memory: what `aclrtMemManagedAdvise` set and
//! `aclrtMemManagedPrefetch[Batch]Async` asked for, kept per 2 MiB page of each managed
//! allocation, and the answers of `aclrtMemManagedGetAttr[s]`. Pages are never migrated (host
//! and device share one address space here): the hints are recorded and reported faithfully,
//! and change nothing else.

use crate::base::error::*;
use crate::memory::{self, Loc, Side};
use ascendcl_sys::*;
use std::ops::Range;

/// The page size of managed memory.
pub(crate) const PAGE: usize = 2 << 20;

/// NUMA node ids accepted in locations (the emulator has no NUMA topology: the ids are recorded).
const NUMA_NODES: i32 = 64;

/// The node `ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT` stands for: the emulator's one node.
const CURRENT_NUMA_NODE: i32 = 0;

/// "No single answer" in the id results of range attributes.
const MIXED: i32 = -2;
/// The id reported for the host.
const HOST_ID: i32 = -1;

/// A location of managed pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The host.
    Host,
    /// A device.
    Device(i32),
    /// A host NUMA node.
    Numa(i32),
}

impl Place {
    fn id(self) -> i32 {
        match self {
            Place::Host => HOST_ID,
            Place::Device(d) | Place::Numa(d) => d,
        }
    }

    fn type_code(self) -> u32 {
        match self {
            Place::Host => ACL_MEM_LOCATIONTYPE_HOST,
            Place::Device(_) => ACL_MEM_LOCATIONTYPE_DEVICE,
            Place::Numa(_) => ACL_MEM_LOCATIONTYPE_HOST_NUMA,
        }
    }
}

/// The locations a page is advised to be accessed by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Accessors {
    host: bool,
    devices: u64,
    numa: u64,
}

impl Accessors {
    fn set(&mut self, p: Place, on: bool) {
        let bit = |id: i32| 1u64 << (id as u32 % 64);
        match (p, on) {
            (Place::Host, v) => self.host = v,
            (Place::Device(d), true) => self.devices |= bit(d),
            (Place::Device(d), false) => self.devices &= !bit(d),
            (Place::Numa(n), true) => self.numa |= bit(n),
            (Place::Numa(n), false) => self.numa &= !bit(n),
        }
    }

    fn intersect(self, o: Accessors) -> Accessors {
        Accessors {
            host: self.host && o.host,
            devices: self.devices & o.devices,
            numa: self.numa & o.numa,
        }
    }

    /// The ids: the host (-1) first, then devices, then NUMA nodes, each ascending.
    fn ids(self) -> impl Iterator<Item = i32> {
        let bits = |m: u64| (0..64).filter(move |i| m & (1 << i) != 0);
        self.host
            .then_some(HOST_ID)
            .into_iter()
            .chain(bits(self.devices))
            .chain(bits(self.numa))
    }
}

/// What one page was told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Page {
    read_mostly: bool,
    preferred: Option<Place>,
    accessed_by: Accessors,
    last_prefetch: Option<Place>,
}

/// The hints of one managed allocation, one entry per 2 MiB page.
#[derive(Debug)]
pub(crate) struct Hints {
    pages: Vec<Page>,
}

impl Hints {
    /// No hints for an allocation whose mapping is `span` bytes.
    pub(crate) fn new(span: usize) -> Hints {
        Hints {
            pages: vec![Page::default(); span.div_ceil(PAGE)],
        }
    }
}

/// An `aclrtMemManagedAdviseType` with its location.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Advice {
    ReadMostly(bool),
    Preferred(Option<Place>),
    AccessedBy(Place, bool),
}

/// A managed range: its allocation and the pages it touches.
#[derive(Debug, Clone)]
pub(crate) struct Range2M {
    pub start: usize,
    span: usize,
    pages: Range<usize>,
    side: Side,
}

impl Range2M {
    /// The side a stream task over the range holds (checked to be live when the task runs).
    pub(crate) fn side(&self) -> Side {
        self.side
    }
}

/// Checks the device id of a `DEVICE` location (the runtime's first location check, 107000).
pub(crate) fn check_device_id(loc: &aclrtMemManagedLocation, what: &str) -> R {
    let n = crate::device::count() as i32;
    if loc.type_ == ACL_MEM_LOCATIONTYPE_DEVICE && !(0..n).contains(&loc.id) {
        return fail(
            RT_PARAM_INVALID,
            format!("{what}.id {} is not a device id (0..{n})", loc.id),
        );
    }
    Ok(())
}

/// The place a location names: 107000 for `INVALID`, an unknown type or a NUMA id out of range.
pub(crate) fn place(loc: &aclrtMemManagedLocation, what: &str) -> R<Place> {
    match loc.type_ {
        ACL_MEM_LOCATIONTYPE_DEVICE => Ok(Place::Device(loc.id)),
        ACL_MEM_LOCATIONTYPE_HOST => Ok(Place::Host),
        ACL_MEM_LOCATIONTYPE_HOST_NUMA if (0..NUMA_NODES).contains(&loc.id) => {
            Ok(Place::Numa(loc.id))
        }
        ACL_MEM_LOCATIONTYPE_HOST_NUMA => fail(
            RT_PARAM_INVALID,
            format!(
                "{what}.id {} is not a NUMA node id (0..{NUMA_NODES})",
                loc.id
            ),
        ),
        ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT => Ok(Place::Numa(CURRENT_NUMA_NODE)),
        ACL_MEM_LOCATIONTYPE_INVALID => fail(
            RT_PARAM_INVALID,
            format!("{what}.type is ACL_MEM_LOCATIONTYPE_INVALID"),
        ),
        t => fail(
            RT_PARAM_INVALID,
            format!("{what}.type {t} is not an aclrtMemManagedLocationType (0-4)"),
        ),
    }
}

/// `[ptr, ptr + size)` as pages of one managed allocation: 107000 when the range is not managed
/// memory or runs past the allocation's pages.
pub(crate) fn range(what: &str, ptr: usize, size: usize) -> R<Range2M> {
    let t = memory::read();
    let Some((start, span)) = t.managed_at(ptr) else {
        return fail(
            RT_PARAM_INVALID,
            format!("{what} {ptr:#x} is not in memory allocated by aclrtMemAllocManaged"),
        );
    };
    let off = ptr - start;
    if size > span - off {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{what} range {ptr:#x}+{size} runs past the managed allocation at {start:#x} \
                 ({span} bytes of 2 MiB pages)"
            ),
        );
    }
    let dev = match t.attributes(ptr) {
        Ok((Loc::Device(d), _)) => d,
        _ => 0,
    };
    Ok(Range2M {
        start,
        span,
        pages: off / PAGE..(off + size).div_ceil(PAGE),
        side: Side {
            loc: Loc::Device(dev),
            alloc: start,
            delta: 0,
        },
    })
}

/// Applies `advice` to every page of `r`.
pub(crate) fn advise(r: &Range2M, advice: Advice) {
    let mut t = memory::write();
    let h = t.hints_mut(r.start, r.span);
    for p in &mut h.pages[r.pages.clone()] {
        match advice {
            Advice::ReadMostly(v) => p.read_mostly = v,
            Advice::Preferred(v) => p.preferred = v,
            Advice::AccessedBy(place, on) => p.accessed_by.set(place, on),
        }
    }
}

/// Records `to` as the last prefetch location of every page of `r`.
pub(crate) fn prefetched(r: &Range2M, to: Place) {
    let mut t = memory::write();
    let h = t.hints_mut(r.start, r.span);
    for p in &mut h.pages[r.pages.clone()] {
        p.last_prefetch = Some(to);
    }
}

/// The one value `f` gives every page of `r`, if they agree.
fn common<T: PartialEq + Copy>(pages: &[Page], f: impl Fn(&Page) -> T) -> Option<T> {
    let first = f(pages.first()?);
    pages.iter().all(|p| f(p) == first).then_some(first)
}

/// The answer of `aclrtMemManagedGetAttr` for `attr` over `r`, as the bytes the caller's buffer
/// of `data_size` bytes receives: 107000 for an attribute outside 1..=8 or a size the attribute
/// does not take.
pub(crate) fn query(r: &Range2M, attr: u32, data_size: usize) -> R<Vec<u8>> {
    let t = memory::read();
    let default;
    let pages: &[Page] = match t.hints(r.start) {
        Some(h) => &h.pages[r.pages.clone()],
        None => {
            default = vec![Page::default(); r.pages.len()];
            &default
        }
    };
    let word = |v: i32| -> R<Vec<u8>> {
        if data_size != 4 {
            return fail(
                RT_PARAM_INVALID,
                format!("dataSize {data_size}: attribute {attr} answers 4 bytes"),
            );
        }
        Ok(v.to_ne_bytes().to_vec())
    };
    let id_of = |p: Option<Option<Place>>| match p {
        Some(Some(p)) => p.id(),
        _ => MIXED,
    };
    let id_only = |p: Option<Option<Place>>| match p {
        Some(Some(Place::Device(d) | Place::Numa(d))) => d,
        _ => MIXED,
    };
    let type_of = |p: Option<Option<Place>>| match p {
        Some(Some(p)) => p.type_code() as i32,
        _ => ACL_MEM_LOCATIONTYPE_INVALID as i32,
    };
    match attr {
        ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY => word(i32::from(pages.iter().all(|p| p.read_mostly))),
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION => word(id_of(common(pages, |p| p.preferred))),
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE => {
            word(type_of(common(pages, |p| p.preferred)))
        }
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID => {
            word(id_only(common(pages, |p| p.preferred)))
        }
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION => {
            word(id_of(common(pages, |p| p.last_prefetch)))
        }
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE => {
            word(type_of(common(pages, |p| p.last_prefetch)))
        }
        ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID => {
            word(id_only(common(pages, |p| p.last_prefetch)))
        }
        ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY => {
            if data_size == 0 || !data_size.is_multiple_of(4) {
                return fail(
                    RT_PARAM_INVALID,
                    format!(
                        "dataSize {data_size}: the accessed-by list takes a non-zero multiple of 4 \
                         bytes"
                    ),
                );
            }
            let all = pages
                .iter()
                .map(|p| p.accessed_by)
                .reduce(Accessors::intersect)
                .unwrap_or_default();
            let mut ids = all.ids();
            Ok((0..data_size / 4)
                .flat_map(|_| ids.next().unwrap_or(MIXED).to_ne_bytes())
                .collect())
        }
        _ => check_attribute(attr).map(|()| Vec::new()),
    }
}

/// 107000 for an `aclrtMemManagedRangeAttribute` outside 1..=8.
pub(crate) fn check_attribute(attr: u32) -> R {
    if !(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY..=ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID)
        .contains(&attr)
    {
        return fail(
            RT_PARAM_INVALID,
            format!("attribute {attr} is not an aclrtMemManagedRangeAttribute (1-8)"),
        );
    }
    Ok(())
}
