//! [`ManagedBuffer`]: managed (unified) memory that host and device both address
//! (`aclrtMemAllocManaged` … `aclrtFree`), its device-side view [`ManagedView`], usage advice
//! ([`MemAdvice`], `aclrtMemManagedAdvise`), range attributes (`aclrtMemManagedGetAttr[s]`) and
//! the locations they name ([`ManagedLocation`]).
//!
//! # Host access
//!
//! The host reads and writes the memory through `Deref<Target = [T]>` / `DerefMut`, whenever no
//! device work uses it. Device work uses it only through a [`ManagedView`], which borrows the
//! buffer **exclusively** ([`ManagedBuffer::on_device`]) for as long as the view lives, and the
//! view must outlive every scope that uses it (a view made inside a [`Stream::scope`] closure
//! cannot be handed to that scope). So while a scope that uses the memory is open, the buffer
//! cannot be read or written on the host at all — not even read while the device only reads —
//! and once the scope has returned (its work done) the view can be dropped and host access
//! resumes. Pages migrate between host and device on first touch; the hints of
//! [`ManagedBuffer::advise`] and [`Scope::prefetch`](crate::Scope::prefetch) only tune that.
//!
//! [`Stream::scope`]: crate::Stream::scope

use super::repr::DeviceRepr;
use crate::copy::{MemoryLocation, RawRegion};
use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::scope::AsyncSource;
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The page size of managed memory: allocations are rounded up to it, and hints apply to whole
/// pages.
pub const MANAGED_PAGE: usize = 2 << 20;

/// A location of managed pages (`aclrtMemManagedLocation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManagedLocation {
    /// `ACL_MEM_LOCATIONTYPE_HOST`
    Host,
    /// `ACL_MEM_LOCATIONTYPE_DEVICE`: the device with this id.
    Device(i32),
    /// `ACL_MEM_LOCATIONTYPE_HOST_NUMA`: the host NUMA node with this id.
    HostNuma(i32),
    /// `ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT`: the NUMA node of the calling thread.
    HostNumaCurrent,
}

impl ManagedLocation {
    pub(crate) fn to_raw(self) -> sys::aclrtMemManagedLocation {
        let (type_, id) = match self {
            ManagedLocation::Host => (sys::ACL_MEM_LOCATIONTYPE_HOST, 0),
            ManagedLocation::Device(d) => (sys::ACL_MEM_LOCATIONTYPE_DEVICE, d),
            ManagedLocation::HostNuma(n) => (sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA, n),
            ManagedLocation::HostNumaCurrent => (sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT, 0),
        };
        sys::aclrtMemManagedLocation { type_, id }
    }

    /// The location a type and an id answer name (`None` for `ACL_MEM_LOCATIONTYPE_INVALID`).
    fn from_answer(type_: i32, id: i32) -> Result<Option<ManagedLocation>> {
        match type_ as u32 {
            sys::ACL_MEM_LOCATIONTYPE_INVALID => Ok(None),
            sys::ACL_MEM_LOCATIONTYPE_HOST => Ok(Some(ManagedLocation::Host)),
            sys::ACL_MEM_LOCATIONTYPE_DEVICE => Ok(Some(ManagedLocation::Device(id))),
            sys::ACL_MEM_LOCATIONTYPE_HOST_NUMA => Ok(Some(ManagedLocation::HostNuma(id))),
            t => Err(Error::UnknownValue {
                what: "aclrtMemManagedLocationType",
                value: u64::from(t),
            }),
        }
    }
}

/// A usage hint for managed memory (`aclrtMemManagedAdviseType` with its location).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemAdvice {
    /// `ACL_MEM_ADVISE_SET_READ_MOSTLY`: mostly read; readers may get copies.
    SetReadMostly,
    /// `ACL_MEM_ADVISE_UNSET_READ_MOSTLY`
    UnsetReadMostly,
    /// `ACL_MEM_ADVISE_SET_PREFERRED_LOCATION`: where the pages should live.
    SetPreferredLocation(ManagedLocation),
    /// `ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION`
    UnsetPreferredLocation,
    /// `ACL_MEM_ADVISE_SET_ACCESSED_BY`: this location accesses the pages (keep them mapped).
    SetAccessedBy(ManagedLocation),
    /// `ACL_MEM_ADVISE_UNSET_ACCESSED_BY`
    UnsetAccessedBy(ManagedLocation),
}

impl MemAdvice {
    fn to_raw(self) -> (sys::aclrtMemManagedAdviseType, sys::aclrtMemManagedLocation) {
        // Advice without a location passes the host (the runtime ignores it).
        let none = ManagedLocation::Host.to_raw();
        match self {
            MemAdvice::SetReadMostly => (sys::ACL_MEM_ADVISE_SET_READ_MOSTLY, none),
            MemAdvice::UnsetReadMostly => (sys::ACL_MEM_ADVISE_UNSET_READ_MOSTLY, none),
            MemAdvice::SetPreferredLocation(l) => {
                (sys::ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, l.to_raw())
            }
            MemAdvice::UnsetPreferredLocation => {
                (sys::ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, none)
            }
            MemAdvice::SetAccessedBy(l) => (sys::ACL_MEM_ADVISE_SET_ACCESSED_BY, l.to_raw()),
            MemAdvice::UnsetAccessedBy(l) => (sys::ACL_MEM_ADVISE_UNSET_ACCESSED_BY, l.to_raw()),
        }
    }
}

/// Managed memory holding `len` elements of `T` (`aclrtMemAllocManaged` / `aclrtFree`): one
/// address valid on the host and on the device, pages migrating to whichever touches them.
///
/// Derefs to `[T]` for host access; device work takes a [`ManagedView`] (see the module
/// documentation for why the two never overlap). Holds a handle on its [`Device`]; `'static`,
/// `Send + Sync` like a `Vec<T>`.
///
/// | operation | C function |
/// |---|---|
/// | [`ManagedBuffer::zeroed`], [`ManagedBuffer::from_slice`] | `aclrtMemAllocManaged` |
/// | drop, [`ManagedBuffer::free`] | `aclrtFree` |
/// | [`ManagedBuffer::advise`] | `aclrtMemManagedAdvise` |
/// | [`ManagedBuffer::read_mostly`], [`ManagedBuffer::accessed_by`] | `aclrtMemManagedGetAttr` |
/// | [`ManagedBuffer::preferred_location`], [`ManagedBuffer::last_prefetch_location`] | `aclrtMemManagedGetAttrs` |
/// | [`Scope::prefetch`](crate::Scope::prefetch), [`Scope::prefetch_batch`](crate::Scope::prefetch_batch) | `aclrtMemManagedPrefetch[Batch]Async` |
///
/// ```
/// use ascendcl::{ManagedBuffer, ManagedLocation, MemAdvice};
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let stream = device.create_stream()?;
/// let mut x = ManagedBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
/// x.advise(MemAdvice::SetPreferredLocation(ManagedLocation::Device(0)))?;
/// let mut out = vec![0f32; 3];
/// {
///     let on_device = x.on_device(); // no host access from here …
///     stream.scope(|s| {
///         s.prefetch(&on_device, ManagedLocation::Device(0))?;
///         s.copy(&mut out, &on_device)
///     })?;
/// } // … to here
/// x[0] = 10.0; // the host again
/// assert_eq!(out, [1.0, 2.0, 3.0]);
/// assert_eq!(x.preferred_location()?, Some(ManagedLocation::Device(0)));
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug)]
pub struct ManagedBuffer<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    id: i32,
    ctx: sys::aclrtContext,
    device: Device,
}

// SAFETY: the buffer owns its memory like a `Vec<T>` (`T: DeviceRepr` is `Send`); every call
// makes the device's context current first.
unsafe impl<T: DeviceRepr> Send for ManagedBuffer<T> {}
// SAFETY: `&self` gives out `&[T]` (`T: DeviceRepr` is `Sync`) and only reads through the
// runtime otherwise (attributes, advice, which change no contents).
unsafe impl<T: DeviceRepr> Sync for ManagedBuffer<T> {}

impl<T: DeviceRepr> ManagedBuffer<T> {
    /// Allocates `len` zeroed elements (`aclrtMemAllocManaged`, zeroed from the host). An empty
    /// buffer is an argument error (the runtime has no empty managed allocation).
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        const API: &str = "aclrtMemAllocManaged";
        let bytes = super::byte_len::<T>(API, len)?;
        if bytes == 0 {
            return Err(Error::argument(
                API,
                "cannot allocate an empty managed buffer",
            ));
        }
        device.ensure_current()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the flag is the only one the runtime accepts.
        unsafe { raw::aclrtMemAllocManaged(&mut p, bytes as u64, sys::ACL_RT_MEM_ATTACH_GLOBAL) }?;
        let buf = ManagedBuffer {
            ptr: NonNull::new(p.cast::<T>())
                .ok_or_else(|| Error::argument(API, "the runtime returned a NULL pointer"))?,
            len,
            id: device.id(),
            ctx: device.raw_context(),
            device: device.clone(),
        };
        if !buf.ptr.as_ptr().is_aligned() {
            return Err(Error::argument(
                API,
                "the runtime returned memory not aligned for the element type",
            ));
        }
        // SAFETY: `bytes` bytes of host-accessible memory owned by `buf`, used by nothing else.
        unsafe { std::ptr::write_bytes(buf.ptr.as_ptr().cast::<u8>(), 0, bytes) };
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `src` (written from the host).
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed(device, src.len())?;
        buf.copy_from_slice(src);
        Ok(buf)
    }

    /// The device the memory belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The id of that device.
    pub fn device_id(&self) -> i32 {
        self.id
    }

    /// The size of the allocation's pages: the bytes of the elements rounded up to
    /// [`MANAGED_PAGE`], the range hints and prefetches cover.
    pub fn mapped_bytes(&self) -> usize {
        (self.len * size_of::<T>()).next_multiple_of(MANAGED_PAGE)
    }

    /// The address (valid on host and device), for FFI.
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The view device work uses ([`ManagedView`]); the buffer is borrowed exclusively while it
    /// lives, so the host cannot touch the memory meanwhile.
    pub fn on_device(&mut self) -> ManagedView<'_, T> {
        ManagedView {
            region: RawRegion::new(self.ptr.as_ptr(), self.len, MemoryLocation::Device(self.id))
                .with_context(self.ctx),
            mapped: self.mapped_bytes(),
            _borrow: PhantomData,
        }
    }

    /// Gives the runtime a usage hint for the whole buffer (`aclrtMemManagedAdvise`).
    pub fn advise(&self, advice: MemAdvice) -> Result<()> {
        let (a, loc) = advice.to_raw();
        current::ensure_current(self.ctx)?;
        // SAFETY: the buffer's own managed range, whose pages all belong to it.
        unsafe {
            raw::aclrtMemManagedAdvise(self.ptr.as_ptr().cast(), self.mapped_bytes() as u64, a, loc)
        }
    }

    /// One integer attribute of the buffer's pages.
    fn attr_i32(&self, attr: sys::aclrtMemManagedRangeAttribute) -> Result<i32> {
        let mut v = 0i32;
        // SAFETY: the buffer's range; `v` holds the 4 bytes the attribute answers.
        unsafe {
            raw::aclrtMemManagedGetAttr(
                attr,
                self.ptr.as_ptr().cast(),
                self.mapped_bytes(),
                (&raw mut v).cast(),
                4,
            )
        }?;
        Ok(v)
    }

    /// A location attribute (its type and id attributes, queried together).
    fn location(
        &self,
        type_attr: sys::aclrtMemManagedRangeAttribute,
        id_attr: sys::aclrtMemManagedRangeAttribute,
    ) -> Result<Option<ManagedLocation>> {
        let (mut t, mut id) = (0i32, 0i32);
        let mut attrs = [type_attr, id_attr];
        let mut data: [*mut c_void; 2] = [(&raw mut t).cast(), (&raw mut id).cast()];
        let mut sizes = [4usize, 4];
        // SAFETY: the buffer's range; two attributes with an output of 4 bytes each.
        unsafe {
            raw::aclrtMemManagedGetAttrs(
                attrs.as_mut_ptr(),
                2,
                self.ptr.as_ptr().cast(),
                self.mapped_bytes(),
                data.as_mut_ptr(),
                sizes.as_mut_ptr(),
            )
        }?;
        ManagedLocation::from_answer(t, id)
    }

    /// Whether every page is advised read-mostly (`ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY`).
    pub fn read_mostly(&self) -> Result<bool> {
        Ok(self.attr_i32(sys::ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY)? == 1)
    }

    /// The preferred location all pages share, `None` when none is set or the pages disagree
    /// (`ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE` and `_ID`).
    pub fn preferred_location(&self) -> Result<Option<ManagedLocation>> {
        self.location(
            sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
            sys::ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
        )
    }

    /// Where all pages were last asked to be prefetched, `None` when never or not alike
    /// (`ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE` and `_ID`). The answer says what
    /// was requested, not whether the prefetch has finished.
    pub fn last_prefetch_location(&self) -> Result<Option<ManagedLocation>> {
        self.location(
            sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
            sys::ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
        )
    }

    /// The ids advised to access every page (`ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY`): device and
    /// NUMA node ids, `-1` for the host, as the runtime lists them (at most 64).
    pub fn accessed_by(&self) -> Result<Vec<i32>> {
        const MAX: usize = 64;
        let mut ids = [0i32; MAX];
        // SAFETY: the buffer's range; `ids` holds `MAX * 4` bytes.
        unsafe {
            raw::aclrtMemManagedGetAttr(
                sys::ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                self.ptr.as_ptr().cast(),
                self.mapped_bytes(),
                ids.as_mut_ptr().cast(),
                MAX * 4,
            )
        }?;
        // The runtime pads the list with -2.
        Ok(ids.iter().copied().take_while(|&i| i != -2).collect())
    }

    /// Frees the memory now (`aclrtFree`). On failure the memory is still allocated and the
    /// buffer comes back with the error ([`ReleaseError`]).
    pub fn free(self) -> ReleaseResult<(), Self> {
        match release(self.ptr.as_ptr(), self.ctx) {
            Ok(()) => {
                let me = std::mem::ManuallyDrop::new(self);
                // SAFETY: `me` is never used or dropped again, so the device handle is moved out
                // (and dropped) exactly once.
                drop(unsafe { std::ptr::read(&me.device) });
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

/// `aclrtFree` of managed memory, with the device's context.
fn release<T>(ptr: *mut T, ctx: sys::aclrtContext) -> Result<()> {
    current::ensure_current(ctx)?;
    // SAFETY: the pointer came from aclrtMemAllocManaged and is freed once (by `free` or drop).
    unsafe { raw::aclrtFree(ptr.cast()) }
}

impl<T: DeviceRepr> Deref for ManagedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements of host-accessible memory owned by the buffer; no
        // device work writes it while `&self` exists (device work needs `on_device(&mut self)`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for ManagedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> Drop for ManagedBuffer<T> {
    fn drop(&mut self) {
        let (ptr, ctx, device) = (Raw(self.ptr.as_ptr()), Raw(self.ctx), self.device.clone());
        deferred::release(move || {
            let r = release(ptr.get(), ctx.get());
            drop(device);
            r
        });
    }
}

/// The device side of a [`ManagedBuffer`], borrowed exclusively from it
/// ([`ManagedBuffer::on_device`]): a copy endpoint and kernel argument of its device, and the
/// range [`Scope::prefetch`](crate::Scope::prefetch) moves. While it lives the host cannot access
/// the buffer.
#[derive(Debug)]
pub struct ManagedView<'a, T: DeviceRepr> {
    region: RawRegion<T>,
    mapped: usize,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY: the view borrows the buffer exclusively, like `&mut [T]`.
unsafe impl<T: DeviceRepr> Send for ManagedView<'_, T> {}
// SAFETY: `&ManagedView` only describes the memory.
unsafe impl<T: DeviceRepr> Sync for ManagedView<'_, T> {}

impl<T: DeviceRepr> ManagedView<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }

    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }

    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.region.location().device().unwrap_or(-1)
    }

    /// The address, for FFI that enqueues work on the memory.
    pub fn as_ptr(&self) -> *const T {
        self.region.ptr()
    }

    /// The bytes of the allocation's pages ([`ManagedBuffer::mapped_bytes`]).
    pub fn mapped_bytes(&self) -> usize {
        self.mapped
    }

    pub(super) fn region(&self) -> RawRegion<T> {
        self.region
    }
}

/// The pages of managed memory a region lies in: its start rounded down and its end rounded up
/// to [`MANAGED_PAGE`] (managed allocations are whole, aligned pages, so these are the region's
/// own allocation's pages).
fn pages<T>(r: &RawRegion<T>) -> (*const c_void, usize) {
    let start = r.ptr() as usize;
    let first = start - start % MANAGED_PAGE;
    let end = start.saturating_add(r.bytes()).max(start + 1);
    let last = end.div_ceil(MANAGED_PAGE).saturating_mul(MANAGED_PAGE);
    (
        r.ptr()
            .cast::<u8>()
            .wrapping_sub(start - first)
            .cast_const()
            .cast(),
        last - first,
    )
}

impl<'scope> crate::scope::Scope<'scope, '_> {
    /// Enqueues prefetching managed memory to `to` (`aclrtMemManagedPrefetchAsync`): a
    /// [`ManagedView`] (borrowed) or a region claimed from one, rounded out to whole
    /// [`MANAGED_PAGE`]s. The runtime refuses memory that is not managed. The memory stays
    /// borrowed until the scope ends.
    pub fn prefetch<S: AsyncSource<'scope>>(&self, mem: S, to: ManagedLocation) -> Result<()> {
        let r = mem.region();
        let (ptr, bytes) = pages(&r);
        self.enqueue_as("aclrtMemManagedPrefetchAsync", &[r.write()], |st| {
            // SAFETY: the pages of memory borrowed for 'scope (a prefetch moves pages, never
            // their contents); the scope waits for the stream before 'scope ends.
            unsafe { raw::aclrtMemManagedPrefetchAsync(ptr, bytes, to.to_raw(), 0, st.as_raw()) }
        })
    }

    /// Enqueues prefetching several managed regions, each to its location, as one batch
    /// (`aclrtMemManagedPrefetchBatchAsync`; consecutive entries with one location share it),
    /// each rounded out to whole pages as by [`Scope::prefetch`](crate::Scope::prefetch). An
    /// empty batch is a no-op.
    pub fn prefetch_batch<S: AsyncSource<'scope>>(
        &self,
        batch: impl IntoIterator<Item = (S, ManagedLocation)>,
    ) -> Result<()> {
        let (mut ptrs, mut sizes, mut locs, mut idx) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut last: Option<ManagedLocation> = None;
        let mut accesses = Vec::new();
        for (i, (mem, to)) in batch.into_iter().enumerate() {
            let r = mem.region();
            accesses.push(r.write());
            let (p, n) = pages(&r);
            ptrs.push(p);
            sizes.push(n);
            if last != Some(to) {
                locs.push(to.to_raw());
                idx.push(i);
                last = Some(to);
            }
        }
        if ptrs.is_empty() {
            return Ok(());
        }
        self.enqueue_as("aclrtMemManagedPrefetchBatchAsync", &accesses, |st| {
            // SAFETY: every range is the pages of memory borrowed for 'scope; the arrays have
            // the lengths passed; the scope waits for the stream before 'scope ends.
            unsafe {
                raw::aclrtMemManagedPrefetchBatchAsync(
                    ptrs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    ptrs.len(),
                    locs.as_mut_ptr(),
                    idx.as_mut_ptr(),
                    locs.len(),
                    0,
                    st.as_raw(),
                )
            }
        })
    }
}
