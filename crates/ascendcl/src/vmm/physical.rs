//! [`PhysicalMemory`]: a physical allocation (`aclrtMallocPhysical` … `aclrtFreePhysical`),
//! made in this process or imported from another one.

use super::prop::{GranularityOption, PhysicalLocation, PhysicalMemProp};
use crate::copy::MemoryLocation;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::sharing::{Exported, ImportClaim};
use ascendcl_sys as sys;
use std::sync::OnceLock;

/// Physical memory of a device or of the host (`aclrtMallocPhysical`; freed with
/// `aclrtFreePhysical` on drop).
///
/// It has no address: [`VirtualRange::map`](crate::VirtualRange::map) maps it into a reserved
/// range, taking it by value, so that it cannot be freed while mapped; the
/// [`Mapping`](crate::Mapping) gives it back when unmapped ([`Mapping::unmap`](crate::Mapping::unmap))
/// or frees it after unmapping when dropped. Owned, `Send + Sync`; it keeps its device open.
///
/// | operation | C function |
/// |---|---|
/// | [`PhysicalMemory::new`] | `aclrtMallocPhysical` (size checked against `aclrtMemGetAllocationGranularity`) |
/// | [`PhysicalMemory::export`], [`PhysicalMemory::export_fabric`] | `aclrtMemExportToShareableHandle[V2]` |
/// | [`PhysicalMemory::allow`] | `aclrtMemSetPidToShareableHandle[V2]` |
/// | [`PhysicalMemory::import`], [`PhysicalMemory::import_fabric`] | `aclrtMemImportFromShareableHandle[V2]` |
/// | drop, [`PhysicalMemory::free`] | `aclrtFreePhysical` |
///
/// ```
/// use ascendcl::{PhysicalMemProp, PhysicalMemory};
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
/// assert_eq!(phys.size(), 2 << 20);
/// phys.free()?;
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug)]
pub struct PhysicalMemory {
    /// Boxed: the handle travels by value (into mappings, out of failed calls) and stays small.
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// NULL once freed explicitly.
    raw: sys::aclrtDrvMemHandle,
    size: usize,
    location: MemoryLocation,
    /// The shareable handle, once exported.
    exported: OnceLock<Exported>,
    /// For an import: this process's claim on the shareable handle (one live import each).
    claim: Option<ImportClaim>,
    device: Device,
}

// SAFETY: the handle is an opaque runtime value the runtime accepts from any thread (every call
// makes the device's context current first); the host never dereferences the memory.
unsafe impl Send for PhysicalMemory {}
// SAFETY: `&self` methods only pass the handle to the runtime (exports, whitelists), which
// synchronises them; the export record is a `OnceLock`.
unsafe impl Sync for PhysicalMemory {}

impl PhysicalMemory {
    /// Allocates `size` bytes of physical memory with `prop` on `device` (`aclrtMallocPhysical`).
    /// `size` must be a multiple of the minimum granularity
    /// ([`Device::allocation_granularity`]); another size is an [`Error::Argument`].
    pub fn new(device: &Device, size: usize, prop: PhysicalMemProp) -> Result<PhysicalMemory> {
        const API: &str = "aclrtMallocPhysical";
        let g = device.allocation_granularity(&prop, GranularityOption::Minimum)?;
        if size == 0 || g == 0 || !size.is_multiple_of(g) {
            return Err(Error::argument(
                API,
                format!("size {size} is not a positive multiple of the granularity {g}"),
            ));
        }
        device.ensure_current()?;
        let p = prop.to_raw(device.id());
        let mut raw: sys::aclrtDrvMemHandle = std::ptr::null_mut();
        // SAFETY: valid out-pointer and property; flags 0 is the only defined value.
        unsafe { raw::aclrtMallocPhysical(&mut raw, size, &p, 0) }?;
        let location = match prop.location {
            PhysicalLocation::Device => MemoryLocation::Device(device.id()),
            PhysicalLocation::Host | PhysicalLocation::HostNuma(_) => MemoryLocation::Pinned,
        };
        Ok(PhysicalMemory::from_raw(raw, size, location, None, device))
    }

    /// Wraps a handle this crate obtained (an allocation or an import).
    pub(crate) fn from_raw(
        raw: sys::aclrtDrvMemHandle,
        size: usize,
        location: MemoryLocation,
        claim: Option<ImportClaim>,
        device: &Device,
    ) -> PhysicalMemory {
        PhysicalMemory {
            inner: Box::new(Inner {
                raw,
                size,
                location,
                exported: OnceLock::new(),
                claim,
                device: device.clone(),
            }),
        }
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// Where the memory lives: [`MemoryLocation::Device`] for device memory (an import: the
    /// importing device), [`MemoryLocation::Pinned`] for host memory.
    pub fn location(&self) -> MemoryLocation {
        self.inner.location
    }

    /// Whether it was imported from another process.
    pub fn is_imported(&self) -> bool {
        self.inner.claim.is_some()
    }

    /// The device it was allocated (or imported) on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The raw `aclrtDrvMemHandle`, for FFI. It stays owned by `self`.
    pub fn as_raw(&self) -> sys::aclrtDrvMemHandle {
        self.inner.raw
    }

    /// What the memory was exported as, once exported.
    pub(crate) fn exported(&self) -> &OnceLock<Exported> {
        &self.inner.exported
    }

    /// Frees the memory now (`aclrtFreePhysical`); on failure it comes back with the error.
    pub fn free(mut self) -> ReleaseResult<(), Self> {
        match release(self.inner.raw, &self.inner.device) {
            Ok(()) => {
                self.inner.raw = std::ptr::null_mut();
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

/// `aclrtFreePhysical` with the device's context current.
fn release(raw: sys::aclrtDrvMemHandle, device: &Device) -> Result<()> {
    device.ensure_current()?;
    // SAFETY: the handle came from aclrtMallocPhysical or an import, is not mapped (a mapping
    // owns its physical memory) and is freed once (by `free` or `drop`).
    unsafe { raw::aclrtFreePhysical(raw) }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let (raw, device, claim) = (Raw(self.raw), self.device.clone(), self.claim.take());
        deferred::release(move || {
            let r = release(raw.get(), &device);
            // The claim goes after the handle: a new import of the same handle may follow.
            drop(claim);
            r
        });
    }
}
