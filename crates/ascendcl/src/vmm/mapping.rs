//! [`Mapping<T>`](Mapping): physical memory mapped into a reserved range (`aclrtMapMem` …
//! `aclrtUnmapMem`), typed memory for copies and scopes, and its access rights
//! (`aclrtMemSetAccess`, `aclrtMemGetAccess`).

use super::physical::PhysicalMemory;
use super::range::VirtualRange;
use crate::copy::{self, CopyDest, CopySource, MemoryLocation, RawRegion};
use crate::deferred::{self, Raw};
use crate::error::{Error, Result};
use crate::memory::{DeviceRepr, copy_endpoints, device_views};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// Physical memory mapped into part of a [`VirtualRange`], as `len` elements of `T`
/// ([`VirtualRange::map`]; unmapped with `aclrtUnmapMem` on drop, after which the physical
/// memory is freed).
///
/// Typed memory like a [`DeviceBuffer`](crate::DeviceBuffer): a [`CopySource`] and
/// [`CopyDest`] for the synchronous copies and, borrowed, for the operations of
/// [`Stream::scope`](crate::Stream::scope), with the same borrow rules (the scope keeps it
/// borrowed until the stream is idle, so it cannot be unmapped under queued work). It owns the
/// [`PhysicalMemory`] and a handle on its range: the physical memory cannot be freed, nor the
/// range released, while the mapping exists. `Send + Sync`; the host never dereferences it.
///
/// | operation | C function |
/// |---|---|
/// | [`VirtualRange::map`] | `aclrtMapMem` |
/// | copies, [`Mapping::copy_from_host`], [`Mapping::to_vec`], ... | `aclrtMemcpy` |
/// | [`Mapping::fill_bytes`] | `aclrtMemset` |
/// | [`Mapping::set_access`] | `aclrtMemSetAccess` |
/// | [`Mapping::access`] | `aclrtMemGetAccess` |
/// | drop, [`Mapping::unmap`] | `aclrtUnmapMem` |
#[derive(Debug)]
pub struct Mapping<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    /// Where the mapping starts in its range, in bytes.
    offset: usize,
    location: MemoryLocation,
    ctx: sys::aclrtContext,
    /// Taken out only by `unmap` and `drop`.
    parts: ManuallyDrop<Parts>,
}

/// What a mapping owns until it is unmapped.
#[derive(Debug)]
struct Parts {
    physical: PhysicalMemory,
    range: VirtualRange,
}

// SAFETY: the mapping owns its memory, which the host never dereferences; moving it moves that
// ownership (every call makes the device's context current first); `T: DeviceRepr` is `Send`,
// and so are the physical memory and the range.
unsafe impl<T: DeviceRepr> Send for Mapping<T> {}
// SAFETY: `&self` methods only read the memory through the runtime (copies out of it) or query
// it; `T: DeviceRepr` is `Sync`.
unsafe impl<T: DeviceRepr> Sync for Mapping<T> {}

impl<T: DeviceRepr> Mapping<T> {
    /// A mapping just made at `at` (`offset` into `range`); `T` is not zero-sized.
    pub(super) fn new(
        at: usize,
        offset: usize,
        physical: PhysicalMemory,
        range: VirtualRange,
    ) -> Mapping<T> {
        let len = physical.size() / size_of::<T>();
        let location = physical.location();
        let ctx = physical.device().raw_context();
        Mapping {
            // The range's start is never 0 (checked when reserved), so neither is `at`.
            ptr: NonNull::new(at as *mut T).unwrap_or(NonNull::dangling()),
            len,
            offset,
            location,
            ctx,
            parts: ManuallyDrop::new(Parts { physical, range }),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes of the elements (the physical memory's size rounded down to whole
    /// elements).
    pub fn size_in_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// Where the mapping starts in its range, in bytes.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Where the memory lives (the physical memory's location).
    pub fn location(&self) -> MemoryLocation {
        self.location
    }

    /// The range it is mapped into.
    pub fn range(&self) -> &VirtualRange {
        &self.parts.range
    }

    /// The physical memory behind it (to export it, for example).
    pub fn physical(&self) -> &PhysicalMemory {
        &self.parts.physical
    }

    /// The address, for FFI (kernel arguments). Never dereference it on the host.
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The address, for FFI that writes the memory (kernel arguments).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    #[inline]
    fn region(&self) -> RawRegion<T> {
        RawRegion::new(self.ptr.as_ptr(), self.len, self.location).with_context(self.ctx)
    }

    /// Copies `src` (host memory) into the mapping; lengths must be equal (`aclrtMemcpy`).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies the mapping into `dst` (host memory); lengths must be equal (`aclrtMemcpy`).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies from any source of the same element type and length.
    pub fn copy_from<S: CopySource<Elem = T> + ?Sized>(&mut self, src: &S) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies into any destination of the same element type and length.
    pub fn copy_to<D: CopyDest<Elem = T> + ?Sized>(&self, dst: &mut D) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies the mapping into a new `Vec` (`aclrtMemcpy`).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }

    /// Sets every byte to `value` (`aclrtMemset`).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        self.as_view_mut().fill_bytes(value)
    }

    /// Sets who may access the mapping and how (`aclrtMemSetAccess`, one descriptor per
    /// location). A mapping is readable and writable from the device it is mapped on from the
    /// start; runtimes support only [`AccessFlags::ReadWrite`] (others are
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`). Exclusive, so that no scope uses the mapping while its
    /// rights change.
    pub fn set_access(&mut self, access: &[MemAccess]) -> Result<()> {
        if access.is_empty() {
            return Err(Error::argument(
                "aclrtMemSetAccess",
                "at least one access descriptor is needed",
            ));
        }
        let mut desc: Vec<sys::aclrtMemAccessDesc> = access.iter().map(|a| a.to_raw()).collect();
        self.parts.physical.device().ensure_current()?;
        // SAFETY: the address and size are exactly this live mapping; the descriptors are a
        // local array of `len` entries.
        unsafe {
            raw::aclrtMemSetAccess(
                self.ptr.as_ptr().cast(),
                self.parts.physical.size(),
                desc.as_mut_ptr(),
                desc.len(),
            )
        }
    }

    /// The mapping's location and access rights (`aclrtMemGetAccess`).
    pub fn access(&self) -> Result<MemAccess> {
        self.parts.physical.device().ensure_current()?;
        let mut loc = sys::aclrtMemLocation { id: 0, type_: 0 };
        let mut flag = 0u64;
        // SAFETY: a live mapping's address and valid out-pointers.
        unsafe { raw::aclrtMemGetAccess(self.ptr.as_ptr().cast(), &mut loc, &mut flag) }?;
        let location = match loc.type_ {
            sys::ACL_MEM_LOCATION_TYPE_HOST => AccessLocation::Host,
            sys::ACL_MEM_LOCATION_TYPE_DEVICE => AccessLocation::Device(loc.id as i32),
            other => {
                return Err(Error::UnknownValue {
                    what: "aclrtMemLocationType",
                    value: u64::from(other),
                });
            }
        };
        let flags = u32::try_from(flag)
            .map_err(|_| Error::UnknownValue {
                what: "AccessFlags",
                value: flag,
            })
            .and_then(AccessFlags::try_from)?;
        Ok(MemAccess { location, flags })
    }

    /// Unmaps the memory now (`aclrtUnmapMem`) and gives the physical memory back, to map it
    /// again or free it; the handle on the range is dropped. On failure the mapping comes back
    /// with the error.
    pub fn unmap(mut self) -> ReleaseResult<PhysicalMemory, Self> {
        if let Err(e) = unmap(self.ptr.as_ptr().cast(), &self.parts) {
            return Err(ReleaseError::new(e, self));
        }
        let offset = self.offset;
        // SAFETY: the parts are taken once; `self` is forgotten right after, so its `Drop`
        // never sees them again (its other fields own nothing).
        let parts = unsafe { ManuallyDrop::take(&mut self.parts) };
        std::mem::forget(self);
        parts.range.unmapped(offset);
        Ok(parts.physical)
    }
}

/// `aclrtUnmapMem` of the mapping at `at`, with its device's context current.
fn unmap(at: *mut c_void, parts: &Parts) -> Result<()> {
    parts.physical.device().ensure_current()?;
    // SAFETY: `at` is the start of a live mapping made by this crate, unmapped once; nothing
    // borrows it (unmap and drop own the mapping).
    unsafe { raw::aclrtUnmapMem(at) }
}

impl<T: DeviceRepr> Drop for Mapping<T> {
    fn drop(&mut self) {
        // SAFETY: the parts are taken once, here; the mapping is not used afterwards.
        let parts = unsafe { ManuallyDrop::take(&mut self.parts) };
        let (at, offset) = (Raw(self.ptr.as_ptr().cast::<c_void>()), self.offset);
        deferred::release(move || {
            let r = unmap(at.get(), &parts);
            if r.is_ok() {
                parts.range.unmapped(offset);
            }
            // Still mapped after a failure: the part stays marked in the range; the runtime
            // defers freeing mapped physical memory until it is unmapped.
            drop(parts);
            r
        });
    }
}

// The mapping's own memory, valid for `len` elements while the mapping is borrowed (it cannot be
// unmapped meanwhile: unmapping consumes it), with the context of its device, alive while the
// physical memory holds the device.
copy_endpoints!(source: Mapping<T>; dest: Mapping<T>);
device_views!(Mapping, "mapping");

raw_enum! {
    /// Access rights of a mapping (`aclrtMemAccessFlags`).
    pub enum AccessFlags: sys::aclrtMemAccessFlags {
        /// `ACL_RT_MEM_ACCESS_FLAGS_NONE`: no access.
        None = sys::ACL_RT_MEM_ACCESS_FLAGS_NONE,
        /// `ACL_RT_MEM_ACCESS_FLAGS_READ`: read only.
        Read = sys::ACL_RT_MEM_ACCESS_FLAGS_READ,
        /// `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`: read and write.
        ReadWrite = sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
    }
}

/// Who an access right is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessLocation {
    /// The host (`ACL_MEM_LOCATION_TYPE_HOST`).
    Host,
    /// The device with this id (`ACL_MEM_LOCATION_TYPE_DEVICE`).
    Device(i32),
}

/// One access right of a mapping (`aclrtMemAccessDesc`): a location and what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemAccess {
    /// Who.
    pub location: AccessLocation,
    /// What.
    pub flags: AccessFlags,
}

impl MemAccess {
    /// Read and write access for device `id`.
    pub const fn read_write(id: i32) -> MemAccess {
        MemAccess {
            location: AccessLocation::Device(id),
            flags: AccessFlags::ReadWrite,
        }
    }

    fn to_raw(self) -> sys::aclrtMemAccessDesc {
        let location = match self.location {
            AccessLocation::Host => sys::aclrtMemLocation {
                id: 0,
                type_: sys::ACL_MEM_LOCATION_TYPE_HOST,
            },
            AccessLocation::Device(id) => sys::aclrtMemLocation {
                id: id as u32,
                type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
            },
        };
        sys::aclrtMemAccessDesc {
            flags: self.flags.into(),
            location,
            rsv: [0; 12],
        }
    }
}
