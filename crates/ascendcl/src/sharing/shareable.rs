//! Physical memory shared with other processes: [`PhysicalMemory::export`] makes a
//! [`ShareableHandle`] (or, across servers, a [`FabricHandle`]), [`PhysicalMemory::allow`]
//! whitelists importers, [`PhysicalMemory::import`] opens another process's export.

use super::{ClaimKey, Exported, ImportClaim, Importers, Pid, raw_pids};
use crate::copy::MemoryLocation;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::vmm::PhysicalMemory;
use ascendcl_sys as sys;
use std::fmt;

/// The handle another process imports exported physical memory by
/// (`aclrtMemExportToShareableHandle`): a 64-bit value, passed as text or as the number.
///
/// ```
/// let h: ascendcl::ShareableHandle = "12345".parse().expect("a number");
/// assert_eq!(h.as_raw(), 12345);
/// assert_eq!(h.to_string(), "12345");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShareableHandle(u64);

impl ShareableHandle {
    /// A handle received from the exporting process.
    pub const fn from_raw(raw: u64) -> ShareableHandle {
        ShareableHandle(raw)
    }

    /// The value.
    pub const fn as_raw(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ShareableHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for ShareableHandle {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        s.trim().parse().map(ShareableHandle)
    }
}

/// The handle of physical memory shared across servers (`aclrtMemFabricHandle`, 128 bytes;
/// `aclrtMemExportToShareableHandleV2` with `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FabricHandle([u8; 128]);

impl FabricHandle {
    /// A handle received from the exporting process.
    pub const fn from_bytes(bytes: [u8; 128]) -> FabricHandle {
        FabricHandle(bytes)
    }

    /// The bytes, to send to the importing process.
    pub const fn to_bytes(self) -> [u8; 128] {
        self.0
    }
}

impl fmt::Debug for FabricHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FabricHandle(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

impl PhysicalMemory {
    /// Exports the memory to other processes of this server (`aclrtMemExportToShareableHandle`):
    /// they import it with [`PhysicalMemory::import`] and the handle. With
    /// [`Importers::Whitelisted`] only the pids given to [`PhysicalMemory::allow`] may. One
    /// export per allocation (a second is refused by the runtime); memory imported from another
    /// process cannot be exported again.
    pub fn export(&self, importers: Importers) -> Result<ShareableHandle> {
        let flags = match importers {
            Importers::Whitelisted => 0,
            Importers::Anyone => u64::from(sys::ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
        };
        self.device().ensure_current()?;
        let mut h = 0u64;
        // SAFETY: a live handle owned by `self` and a valid out-pointer.
        unsafe {
            raw::aclrtMemExportToShareableHandle(
                self.as_raw(),
                sys::ACL_MEM_HANDLE_TYPE_NONE,
                flags,
                &mut h,
            )
        }?;
        let h = ShareableHandle(h);
        let _ = self.exported().set(Exported::Default(h));
        Ok(h)
    }

    /// Exports the memory to processes of other servers
    /// (`aclrtMemExportToShareableHandleV2`, `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`; A3 servers
    /// only, `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` elsewhere).
    pub fn export_fabric(&self, importers: Importers) -> Result<FabricHandle> {
        let flags = match importers {
            Importers::Whitelisted => 0,
            Importers::Anyone => u64::from(sys::ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
        };
        self.device().ensure_current()?;
        let mut h = sys::aclrtMemFabricHandle { data: [0; 128] };
        // SAFETY: a live handle owned by `self`; for the FABRIC type the output is an
        // aclrtMemFabricHandle, which `h` is.
        unsafe {
            raw::aclrtMemExportToShareableHandleV2(
                self.as_raw(),
                flags,
                sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                (&mut h as *mut sys::aclrtMemFabricHandle).cast(),
            )
        }?;
        let h = FabricHandle(h.data);
        let _ = self.exported().set(Exported::Fabric(Box::new(h)));
        Ok(h)
    }

    /// Whitelists processes for importing this exported memory
    /// (`aclrtMemSetPidToShareableHandle`, or its V2 for a fabric export); the pids come from
    /// each importer's [`Device::bare_tgid`]. Memory not exported yet is an [`Error::Argument`].
    pub fn allow(&self, pids: &[Pid]) -> Result<()> {
        let Some(exported) = self.exported().get() else {
            return Err(Error::argument(
                "aclrtMemSetPidToShareableHandle",
                "the physical memory has not been exported (PhysicalMemory::export)",
            ));
        };
        let mut p = raw_pids(pids);
        self.device().ensure_current()?;
        match exported {
            // SAFETY: `p` holds `len` pids, which the runtime only reads.
            Exported::Default(h) => unsafe {
                raw::aclrtMemSetPidToShareableHandle(h.0, p.as_mut_ptr(), p.len())
            },
            Exported::Fabric(h) => {
                let mut h = **h;
                // SAFETY: for the FABRIC type the handle is 128 bytes, which `h.0` is; `p` holds
                // `len` pids.
                unsafe {
                    raw::aclrtMemSetPidToShareableHandleV2(
                        h.0.as_mut_ptr().cast(),
                        sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                        p.as_mut_ptr(),
                        p.len(),
                    )
                }
            }
        }
    }

    /// Imports physical memory another process exported, for `device`
    /// (`aclrtMemImportFromShareableHandle`); `size` is the exported allocation's size, which
    /// the exporter tells (mapping it checks that). Peer access with the exporter's device is
    /// enabled by the runtime. Refused by the runtime: a process not on the export's whitelist,
    /// a handle of this process, memory the exporter freed. A handle this process already holds
    /// a live import of is an [`Error::Argument`].
    pub fn import(device: &Device, handle: ShareableHandle, size: usize) -> Result<PhysicalMemory> {
        const API: &str = "aclrtMemImportFromShareableHandle";
        let claim = ImportClaim::take(API, ClaimKey::Shareable(handle.0))?;
        device.ensure_current()?;
        let mut raw: sys::aclrtDrvMemHandle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the handle is a plain value the runtime looks up.
        unsafe { raw::aclrtMemImportFromShareableHandle(handle.0, device.id(), &mut raw) }?;
        Ok(PhysicalMemory::from_raw(
            raw,
            size,
            MemoryLocation::Device(device.id()),
            Some(claim),
            device,
        ))
    }

    /// Imports physical memory a process of another server exported
    /// (`aclrtMemImportFromShareableHandleV2`, `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`), for
    /// `device` (made current), as [`PhysicalMemory::import`].
    pub fn import_fabric(
        device: &Device,
        handle: &FabricHandle,
        size: usize,
    ) -> Result<PhysicalMemory> {
        const API: &str = "aclrtMemImportFromShareableHandleV2";
        let claim = ImportClaim::take(API, ClaimKey::Fabric(Box::new(handle.0)))?;
        device.ensure_current()?;
        let mut bytes = handle.0;
        let mut raw: sys::aclrtDrvMemHandle = std::ptr::null_mut();
        // SAFETY: for the FABRIC type the handle is 128 bytes, which `bytes` is; a valid
        // out-pointer; flags 0.
        unsafe {
            raw::aclrtMemImportFromShareableHandleV2(
                bytes.as_mut_ptr().cast(),
                sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                0,
                &mut raw,
            )
        }?;
        Ok(PhysicalMemory::from_raw(
            raw,
            size,
            MemoryLocation::Device(device.id()),
            Some(claim),
            device,
        ))
    }
}
