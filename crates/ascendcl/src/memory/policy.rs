//! How device memory is allocated: [`MallocPolicy`] (the `aclrtMemMallocPolicy` base values),
//! [`MallocFlags`] (its modifier bits), [`MallocConfig`] (the whole word) and [`DeviceAlloc`] (the
//! allocation function).

use crate::error::{Error, Result};
use crate::raw_enum::raw_enum;
use crate::result;
use ascendcl_sys as sys;

raw_enum! {
    /// How `aclrtMalloc` backs an allocation (`aclrtMemMallocPolicy`, base values).
    pub enum MallocPolicy: sys::aclrtMemMallocPolicy {
        /// `ACL_MEM_MALLOC_HUGE_FIRST`: ≤ 1 MiB normal pages, larger 2 MiB huge pages when free.
        HugeFirst = sys::ACL_MEM_MALLOC_HUGE_FIRST,
        /// `ACL_MEM_MALLOC_HUGE_ONLY`: 2 MiB huge pages only.
        HugeOnly = sys::ACL_MEM_MALLOC_HUGE_ONLY,
        /// `ACL_MEM_MALLOC_NORMAL_ONLY`: 4 KiB pages only.
        NormalOnly = sys::ACL_MEM_MALLOC_NORMAL_ONLY,
        /// `ACL_MEM_MALLOC_HUGE_FIRST_P2P`: as `HugeFirst`, usable by peer devices.
        HugeFirstP2p = sys::ACL_MEM_MALLOC_HUGE_FIRST_P2P,
        /// `ACL_MEM_MALLOC_HUGE_ONLY_P2P`: as `HugeOnly`, usable by peer devices.
        HugeOnlyP2p = sys::ACL_MEM_MALLOC_HUGE_ONLY_P2P,
        /// `ACL_MEM_MALLOC_NORMAL_ONLY_P2P`: as `NormalOnly`, usable by peer devices.
        NormalOnlyP2p = sys::ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
        /// `ACL_MEM_MALLOC_HUGE1G_ONLY`: 1 GiB pages only.
        Huge1gOnly = sys::ACL_MEM_MALLOC_HUGE1G_ONLY,
        /// `ACL_MEM_MALLOC_HUGE1G_ONLY_P2P`: 1 GiB pages only, usable by peer devices.
        Huge1gOnlyP2p = sys::ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    }
}

impl Default for MallocPolicy {
    /// `HugeFirst`, the runtime's recommendation for general buffers.
    fn default() -> Self {
        MallocPolicy::HugeFirst
    }
}

bitflags::bitflags! {
    /// Modifiers OR-ed onto a [`MallocPolicy`] in the same `aclrtMemMallocPolicy` word.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MallocFlags: u32 {
        /// `ACL_MEM_TYPE_LOW_BAND_WIDTH` (a hint).
        const LOW_BAND_WIDTH = sys::ACL_MEM_TYPE_LOW_BAND_WIDTH;
        /// `ACL_MEM_TYPE_HIGH_BAND_WIDTH` (a hint).
        const HIGH_BAND_WIDTH = sys::ACL_MEM_TYPE_HIGH_BAND_WIDTH;
        /// `ACL_MEM_ACCESS_USER_SPACE_READONLY`: read-only from user space.
        const USER_SPACE_READONLY = sys::ACL_MEM_ACCESS_USER_SPACE_READONLY;
    }
}

/// A policy with its modifiers: the full `aclrtMemMallocPolicy` word passed to `aclrtMalloc`.
///
/// `From<MallocPolicy>` gives no modifiers, so constructors accept a bare policy. Converts
/// losslessly to and from the raw word; an unknown base or bit is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MallocConfig {
    /// The base policy.
    pub policy: MallocPolicy,
    /// Bandwidth hints and the read-only modifier.
    pub flags: MallocFlags,
}

impl MallocPolicy {
    /// This policy with modifiers.
    pub fn with(self, flags: MallocFlags) -> MallocConfig {
        MallocConfig {
            policy: self,
            flags,
        }
    }
}

impl From<MallocPolicy> for MallocConfig {
    fn from(policy: MallocPolicy) -> Self {
        policy.with(MallocFlags::empty())
    }
}

impl From<MallocConfig> for u32 {
    fn from(c: MallocConfig) -> u32 {
        u32::from(c.policy) | c.flags.bits()
    }
}

impl TryFrom<u32> for MallocConfig {
    type Error = Error;
    fn try_from(raw: u32) -> Result<Self> {
        let flags = MallocFlags::from_bits(raw & MallocFlags::all().bits());
        let base = raw & !MallocFlags::all().bits();
        match (MallocPolicy::try_from(base), flags) {
            (Ok(policy), Some(flags)) => Ok(policy.with(flags)),
            _ => Err(Error::UnknownValue {
                what: "MallocConfig",
                value: u64::from(raw),
            }),
        }
    }
}

/// The runtime function a [`DeviceBuffer`](crate::DeviceBuffer) is allocated with. All three are freed with
/// `aclrtFree`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum DeviceAlloc {
    /// `aclrtMalloc`: on Atlas A2/A3 the runtime pads the size to `ALIGN_UP(size, 32) + 32`.
    #[default]
    Malloc,
    /// `aclrtMallocAlign32`: the size rounded up to 32 bytes, without the extra 32.
    Align32,
    /// `aclrtMallocCached`: cacheable device memory.
    Cached,
}

impl DeviceAlloc {
    /// The C function's name.
    pub fn api_name(self) -> &'static str {
        match self {
            DeviceAlloc::Malloc => "aclrtMalloc",
            DeviceAlloc::Align32 => "aclrtMallocAlign32",
            DeviceAlloc::Cached => "aclrtMallocCached",
        }
    }

    pub(crate) fn call(self, bytes: usize, policy: u32) -> Result<*mut std::ffi::c_void> {
        match self {
            DeviceAlloc::Malloc => result::memory::malloc(bytes, policy),
            DeviceAlloc::Align32 => result::memory::malloc_align32(bytes, policy),
            DeviceAlloc::Cached => result::memory::malloc_cached(bytes, policy),
        }
    }
}
