//! [`VirtualRange`]: reserved address space (`aclrtReserveMemAddress` …
//! `aclrtReleaseMemAddress`), and [`VirtualRange::map`], which maps physical memory into it.

use super::mapping::Mapping;
use super::physical::PhysicalMemory;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::DeviceRepr;
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

/// A range of device address space (`aclrtReserveMemAddress`; released with
/// `aclrtReleaseMemAddress` when its last handle goes).
///
/// Nothing is behind the addresses until [`VirtualRange::map`] maps physical memory into part
/// of the range. Cheap to clone, `Send + Sync`; every [`Mapping`] holds a handle on its range,
/// so the range is released only after its last mapping is unmapped. Mappings of one range never
/// overlap: `map` refuses an overlapping part before calling the runtime.
///
/// | operation | C function |
/// |---|---|
/// | [`VirtualRange::reserve`] | `aclrtReserveMemAddress` |
/// | [`VirtualRange::map`] | `aclrtMapMem` (then `aclrtMemGetAddressRange` to check the mapping's size) |
/// | drop of the last handle (and of the last mapping), [`VirtualRange::release`] | `aclrtReleaseMemAddress` |
///
/// ```
/// use ascendcl::{PhysicalMemProp, PhysicalMemory, VirtualRange};
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let range = VirtualRange::reserve(&device, 4 << 20)?;
/// let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
/// let mut mem = range.map::<u32>(2 << 20, phys)?; // the second half of the range
/// mem.copy_from_host(&vec![7; mem.len()])?;
/// assert_eq!(mem.to_vec()?[0], 7);
/// let phys = mem.unmap()?;                        // the physical memory comes back
/// phys.free()?;
/// range.release()?;
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct VirtualRange {
    inner: Arc<RangeInner>,
}

#[derive(Debug)]
struct RangeInner {
    /// The start; 0 once released explicitly.
    start: usize,
    size: usize,
    /// The parts mapped now, as (offset, length) in bytes.
    mapped: Mutex<Vec<(usize, usize)>>,
    device: Device,
}

impl VirtualRange {
    /// Reserves `size` bytes of address space on `device` (`aclrtReserveMemAddress`, where the
    /// runtime chooses; `size` should be a multiple of the allocation granularity).
    pub fn reserve(device: &Device, size: usize) -> Result<VirtualRange> {
        device.ensure_current()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; alignment 0 and no expected address (the runtime
        // chooses); flags 0.
        unsafe { raw::aclrtReserveMemAddress(&mut p, size, 0, std::ptr::null_mut(), 0) }?;
        if p.is_null() {
            return Err(Error::argument(
                "aclrtReserveMemAddress",
                "the runtime returned a NULL address",
            ));
        }
        Ok(VirtualRange {
            inner: Arc::new(RangeInner {
                start: p as usize,
                size,
                mapped: Mutex::new(Vec::new()),
                device: device.clone(),
            }),
        })
    }

    /// The start address, for FFI. Never dereference it on the host.
    pub fn as_ptr(&self) -> *mut c_void {
        self.inner.start as *mut c_void
    }

    /// The size in bytes, as reserved.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// The device the range was reserved on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The parts of the range mapped now, as (offset, length) in bytes, in mapping order.
    pub fn mapped_parts(&self) -> Vec<(usize, usize)> {
        self.mapped().clone()
    }

    fn mapped(&self) -> MutexGuard<'_, Vec<(usize, usize)>> {
        self.inner.mapped.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Maps the whole of `physical` at `offset` bytes into the range (`aclrtMapMem`), as
    /// elements of `T`: `physical.size() / size_of::<T>()` of them.
    ///
    /// The mapping owns `physical` until it is unmapped (so it cannot be freed while mapped) and
    /// a handle on this range. Refused before the runtime is called (an [`Error::Argument`]):
    /// a part that does not fit in the range or overlaps a mapped part, an address not aligned
    /// for `T`, a zero-sized `T`. After the call, `aclrtMemGetAddressRange` must report a
    /// mapping of at least `physical.size()` bytes at that address, or it is unmapped again and
    /// refused. On any failure `physical` comes back inside the [`ReleaseError`].
    pub fn map<T: DeviceRepr>(
        &self,
        offset: usize,
        physical: PhysicalMemory,
    ) -> ReleaseResult<Mapping<T>, PhysicalMemory> {
        const API: &str = "aclrtMapMem";
        let size = physical.size();
        let refuse =
            |why: String, physical| Err(ReleaseError::new(Error::argument(API, why), physical));
        if size_of::<T>() == 0 {
            return refuse("the element type has no size".into(), physical);
        }
        let end = match offset.checked_add(size) {
            Some(end) if end <= self.inner.size => end,
            _ => {
                return refuse(
                    format!(
                        "{size} bytes at offset {offset} do not fit in the range of {} bytes",
                        self.inner.size
                    ),
                    physical,
                );
            }
        };
        let at = self.inner.start + offset;
        if !at.is_multiple_of(align_of::<T>()) {
            return refuse(
                format!("address {at:#x} is not aligned for the element type"),
                physical,
            );
        }
        let mut mapped = self.mapped();
        if let Some((o, l)) = mapped.iter().find(|(o, l)| offset < o + l && *o < end) {
            return refuse(
                format!(
                    "offsets {offset}..{end} overlap the part mapped at {o}..{}",
                    o + l
                ),
                physical,
            );
        }
        if let Err(e) = map_checked(at, &physical) {
            return Err(ReleaseError::new(e, physical));
        }
        mapped.push((offset, size));
        drop(mapped);
        Ok(Mapping::new(at, offset, physical, self.clone()))
    }

    /// Forgets the mapped part at `offset` (the mapping was unmapped).
    pub(crate) fn unmapped(&self, offset: usize) {
        self.mapped().retain(|(o, _)| *o != offset);
    }

    /// Releases this handle. When it was the last one (no other handle and no mapping is left),
    /// the range is released now (`aclrtReleaseMemAddress`); on failure it comes back with the
    /// error. Otherwise this returns `Ok` and the last handle releases it.
    pub fn release(self) -> ReleaseResult<(), Self> {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(_shared) => return Ok(()),
        };
        match release(inner.start, &inner.device) {
            Ok(()) => {
                inner.start = 0;
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(
                e,
                VirtualRange {
                    inner: Arc::new(inner),
                },
            )),
        }
    }
}

/// `aclrtMapMem` of the whole of `physical` at `at`, checked with `aclrtMemGetAddressRange`.
fn map_checked(at: usize, physical: &PhysicalMemory) -> Result<()> {
    const API: &str = "aclrtMapMem";
    let size = physical.size();
    physical.device().ensure_current()?;
    // SAFETY: `at..at+size` lies in this live range and overlaps no mapped part (checked by the
    // caller under the lock); the handle is live and owned by `physical`; offset and flags 0.
    unsafe { raw::aclrtMapMem(at as *mut c_void, size, 0, physical.as_raw(), 0) }?;
    let (mut base, mut len) = (std::ptr::null_mut(), 0usize);
    // SAFETY: valid out-pointers; the address is only looked up.
    let checked = unsafe { raw::aclrtMemGetAddressRange(at as *mut c_void, &mut base, &mut len) }
        .and_then(|()| {
            if base as usize == at && len >= size {
                Ok(())
            } else {
                Err(Error::argument(
                    API,
                    format!(
                        "the runtime reports the mapping at {at:#x} as {len} bytes at {base:p}, \
                         not the {size} bytes mapped"
                    ),
                ))
            }
        });
    if let Err(e) = checked {
        // SAFETY: the mapping made above, not yet handed to anyone.
        let _ = unsafe { raw::aclrtUnmapMem(at as *mut c_void) };
        return Err(e);
    }
    Ok(())
}

/// `aclrtReleaseMemAddress` with the device's context current.
fn release(start: usize, device: &Device) -> Result<()> {
    device.ensure_current()?;
    // SAFETY: the range was reserved by this crate, has no mapping left (every mapping holds a
    // handle on it) and is released once.
    unsafe { raw::aclrtReleaseMemAddress(start as *mut c_void) }
}

impl Drop for RangeInner {
    fn drop(&mut self) {
        if self.start == 0 {
            return;
        }
        let (start, device) = (Raw(self.start as *mut c_void), self.device.clone());
        deferred::release(move || release(start.get() as usize, &device));
    }
}
