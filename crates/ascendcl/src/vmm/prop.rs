//! What physical memory is made of ([`PhysicalMemProp`]: where it lives and its page kind) and
//! the granularity its sizes come in ([`Device::allocation_granularity`]).

use crate::device::{Device, MemAttr};
use crate::error::Result;
use crate::raw;
use crate::raw_enum::raw_enum;
use ascendcl_sys as sys;

/// Where physical memory lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PhysicalLocation {
    /// Memory of the device it is allocated on (`ACL_MEM_LOCATION_TYPE_DEVICE` with that
    /// device's id).
    Device,
    /// Host memory (`ACL_MEM_LOCATION_TYPE_HOST`).
    Host,
    /// Host memory of one NUMA node (`ACL_MEM_LOCATION_TYPE_HOST_NUMA`).
    HostNuma(u32),
}

/// The properties of a physical allocation (`aclrtPhysicalMemProp`): its location and its
/// memory attribute (page size and kind). The handle type (`ACL_MEM_HANDLE_TYPE_NONE`) and the
/// allocation type (`ACL_MEM_ALLOCATION_TYPE_PINNED`) are the only ones the runtime accepts, so
/// they are not choices here.
///
/// The runtime accepts the huge, normal and 1 GiB attributes of HBM, the generic
/// (`MemAttr::Normal`, `Huge`, `Huge1g`) and peer-to-peer ones anywhere, and the DDR ones on the
/// host only; any other combination is refused by the runtime with
/// `ACL_ERROR_INVALID_PARAM` (100000).
///
/// ```
/// use ascendcl::{MemAttr, PhysicalLocation, PhysicalMemProp};
/// let p = PhysicalMemProp::device(MemAttr::HbmHuge);
/// assert_eq!(p.location, PhysicalLocation::Device);
/// assert_eq!(PhysicalMemProp::default(), p);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhysicalMemProp {
    /// Where the memory lives.
    pub location: PhysicalLocation,
    /// The page size and kind of memory (`aclrtMemAttr`).
    pub attr: MemAttr,
}

impl Default for PhysicalMemProp {
    /// Device memory with 2 MiB pages (`ACL_HBM_MEM_HUGE`).
    fn default() -> Self {
        PhysicalMemProp::device(MemAttr::HbmHuge)
    }
}

impl PhysicalMemProp {
    /// Memory of the device it is allocated on, with `attr`.
    pub const fn device(attr: MemAttr) -> Self {
        PhysicalMemProp {
            location: PhysicalLocation::Device,
            attr,
        }
    }

    /// Host memory, with `attr`.
    pub const fn host(attr: MemAttr) -> Self {
        PhysicalMemProp {
            location: PhysicalLocation::Host,
            attr,
        }
    }

    /// The C structure for an allocation on `device`.
    pub(crate) fn to_raw(self, device: i32) -> sys::aclrtPhysicalMemProp {
        let (type_, id) = match self.location {
            PhysicalLocation::Device => (sys::ACL_MEM_LOCATION_TYPE_DEVICE, device as u32),
            PhysicalLocation::Host => (sys::ACL_MEM_LOCATION_TYPE_HOST, 0),
            PhysicalLocation::HostNuma(node) => (sys::ACL_MEM_LOCATION_TYPE_HOST_NUMA, node),
        };
        sys::aclrtPhysicalMemProp {
            handleType: sys::ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: sys::ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: self.attr.into(),
            location: sys::aclrtMemLocation { id, type_ },
            reserve: 0,
        }
    }
}

raw_enum! {
    /// Which granularity [`Device::allocation_granularity`] reports
    /// (`aclrtMemGranularityOptions`).
    pub enum GranularityOption: sys::aclrtMemGranularityOptions {
        /// `ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM`: sizes must be multiples of it.
        Minimum = sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
        /// `ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED`: the size that performs best.
        Recommended = sys::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
    }
}

impl Device {
    /// The granularity of physical allocations with `prop` on this device, in bytes
    /// (`aclrtMemGetAllocationGranularity`): sizes of [`PhysicalMemory`](crate::PhysicalMemory)
    /// and of [`VirtualRange`](crate::VirtualRange)s are multiples of it.
    ///
    /// ```
    /// use ascendcl::{GranularityOption, PhysicalMemProp};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let device = rt.device(0)?;
    /// let g = device.allocation_granularity(&PhysicalMemProp::default(), GranularityOption::Minimum)?;
    /// assert!(g.is_power_of_two());
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn allocation_granularity(
        &self,
        prop: &PhysicalMemProp,
        option: GranularityOption,
    ) -> Result<usize> {
        self.ensure_current()?;
        let mut p = prop.to_raw(self.id());
        let mut g = 0usize;
        // SAFETY: a valid property and out-pointer, both local.
        unsafe { raw::aclrtMemGetAllocationGranularity(&mut p, option.into(), &mut g) }?;
        Ok(g)
    }
}
