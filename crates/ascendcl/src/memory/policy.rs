//! How device memory is allocated: [`MallocPolicy`] (the `aclrtMemMallocPolicy` base values),
//! [`MallocFlags`] (its modifier bits), [`MallocConfig`] (the whole word), [`DeviceAlloc`] (the
//! allocation function) and [`MallocAttrs`] (the attributes of the `...WithCfg` functions).

use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
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

/// The runtime function a [`DeviceBuffer`](crate::DeviceBuffer) is allocated with. All of them
/// are freed with `aclrtFree`.
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
    /// `aclrtMallocWithCfg`: device memory labelled with the attributes, the size rounded up to
    /// 32 bytes without the extra 32.
    WithConfig(MallocAttrs),
    /// `aclrtMallocForTaskScheduler`: device memory the task scheduler can use, which some
    /// operators of graph mode need; labelled with the attributes.
    TaskScheduler(MallocAttrs),
}

impl DeviceAlloc {
    /// The C function's name.
    pub fn api_name(self) -> &'static str {
        match self {
            DeviceAlloc::Malloc => "aclrtMalloc",
            DeviceAlloc::Align32 => "aclrtMallocAlign32",
            DeviceAlloc::Cached => "aclrtMallocCached",
            DeviceAlloc::WithConfig(_) => "aclrtMallocWithCfg",
            DeviceAlloc::TaskScheduler(_) => "aclrtMallocForTaskScheduler",
        }
    }

    pub(crate) fn call(self, bytes: usize, policy: u32) -> Result<*mut std::ffi::c_void> {
        match self {
            // SAFETY: a valid out-pointer; the runtime validates the size and the policy.
            DeviceAlloc::Malloc => raw::out(|p| unsafe { raw::aclrtMalloc(p, bytes, policy) }),
            DeviceAlloc::Align32 => {
                // SAFETY: as above.
                raw::out(|p| unsafe { raw::aclrtMallocAlign32(p, bytes, policy) })
            }
            DeviceAlloc::Cached => {
                // SAFETY: as above.
                raw::out(|p| unsafe { raw::aclrtMallocCached(p, bytes, policy) })
            }
            DeviceAlloc::WithConfig(a) => a.with_config(|cfg| {
                // SAFETY: as above; NULL or a configuration that lives for the call.
                raw::out(|p| unsafe { raw::aclrtMallocWithCfg(p, bytes, policy, cfg) })
            }),
            DeviceAlloc::TaskScheduler(a) => a.with_config(|cfg| {
                // SAFETY: as above; NULL or a configuration that lives for the call.
                raw::out(|p| unsafe { raw::aclrtMallocForTaskScheduler(p, bytes, policy, cfg) })
            }),
        }
    }
}

/// The attributes of an allocation with a configuration (`aclrtMallocConfig`):
/// [`DeviceAlloc::WithConfig`], [`DeviceAlloc::TaskScheduler`], [`HostBuffer::zeroed_with`].
/// They label the memory for the runtime's maintenance
/// records and change nothing about its use. The device is always the buffer's (the device-id
/// attribute is never passed: the runtime accepts only the current device there).
///
/// ```
/// use ascendcl::{DeviceAlloc, DeviceBuffer, MallocAttrs, MallocPolicy};
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let alloc = DeviceAlloc::WithConfig(MallocAttrs::app());
/// let buf = DeviceBuffer::<f32>::zeroed_with(&device, 256, MallocPolicy::HugeFirst, alloc)?;
/// assert_eq!(buf.copy_to_vec()?, vec![0.0; 256]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
///
/// [`HostBuffer::zeroed_with`]: crate::HostBuffer::zeroed_with
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MallocAttrs {
    /// `ACL_RT_MEM_ATTR_MODULE_ID`: the module the memory is recorded against;
    /// [`MallocAttrs::APP_MODULE_ID`] marks memory an application allocated. `None` passes no
    /// attribute.
    pub module_id: Option<u16>,
}

impl MallocAttrs {
    /// The module id the documentation recommends for an application's own memory.
    pub const APP_MODULE_ID: u16 = 33;

    /// Attributes that record the memory as the application's ([`MallocAttrs::APP_MODULE_ID`]).
    pub const fn app() -> MallocAttrs {
        MallocAttrs {
            module_id: Some(MallocAttrs::APP_MODULE_ID),
        }
    }

    /// Calls `f` with the configuration of the `...WithCfg` functions: NULL when there are no
    /// attributes, else a struct pointing at them that lives for the call.
    pub(crate) fn with_config<R>(self, f: impl FnOnce(*mut sys::aclrtMallocConfig) -> R) -> R {
        let mut attrs = self.raw();
        let mut cfg = (!attrs.is_empty()).then_some(sys::aclrtMallocConfig {
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len(),
        });
        f(cfg.as_mut().map_or(std::ptr::null_mut(), |c| c as *mut _))
    }

    /// The C attribute list (empty: the configuration is passed as NULL).
    fn raw(self) -> Vec<sys::aclrtMallocAttribute> {
        self.module_id
            .map(|id| {
                let mut value = sys::aclrtMallocAttrValue { rsv: [0; 8] };
                value.moduleId = id;
                sys::aclrtMallocAttribute {
                    attr: sys::ACL_RT_MEM_ATTR_MODULE_ID,
                    value,
                }
            })
            .into_iter()
            .collect()
    }
}
