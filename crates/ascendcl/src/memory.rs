//! Device memory, pinned host memory and registered host memory.
//!
//! * [`DeviceBuffer`] — device memory (`aclrtMalloc` with a [`MallocPolicy`] / `aclrtFree`).
//!   The host cannot dereference it; data moves through copies ([`crate::copy`]) and
//!   [`Stream::scope`](crate::Stream::scope). [`DeviceSlice`] / [`DeviceSliceMut`] are views
//!   of part of a buffer.
//! * [`HostBuffer`] — pinned host memory (`aclrtMallocHost` / `aclrtFreeHost`), which derefs to a
//!   slice and is what truly asynchronous copies need.
//! * [`HostRegistration`] — ordinary host memory registered with the runtime
//!   (`aclrtHostRegister` / `aclrtHostUnregister`) for as long as the registration borrows it.
//!
//! Element types implement the marker trait [`DeviceRepr`]: plain data for which every bit
//! pattern is valid, so bytes written by the device can be read as `T`.

use crate::copy::{self, CopyDest, CopySource, MemoryLocation, RawRegion};
use crate::device::{Device, raw_enum};
use crate::error::{Error, Result};
use crate::release::{ReleaseError, ReleaseResult};
use crate::result;
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Bound, Deref, DerefMut, RangeBounds};
use std::ptr::NonNull;

/// Plain data that may live in device memory and be copied bytewise between host and device.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, the type has no padding, and
/// it holds no pointers or references whose validity the device could break.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive integer or float: no padding, every bit pattern valid.
        unsafe impl DeviceRepr for $t {}
    )* };
}
device_repr!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);
// SAFETY: an array of DeviceRepr has no padding between elements and every bit pattern valid.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

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

fn byte_len<T>(api: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>())
        .ok_or_else(|| Error::argument(api, format!("{len} elements overflow usize bytes")))
}

/// Resolves a range against a length without panicking.
pub(crate) fn resolve_range(
    api: &'static str,
    range: impl RangeBounds<usize>,
    len: usize,
) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e - s)),
        _ => Err(Error::argument(
            api,
            format!("range out of bounds for length {len}"),
        )),
    }
}

/// Device memory holding `len` elements of `T` (`aclrtMalloc` / `aclrtFree`).
///
/// Borrows its [`Device`]: it cannot outlive the device, nor move to another thread.
///
/// | operation | C function |
/// |---|---|
/// | [`DeviceBuffer::zeroed`], [`DeviceBuffer::from_slice`], [`DeviceBuffer::uninit`] | `aclrtMalloc` (+ `aclrtMemset` / `aclrtMemcpy`) |
/// | drop, [`DeviceBuffer::free`] | `aclrtFree` |
/// | [`DeviceBuffer::copy_from_host`], [`DeviceBuffer::copy_to_host`], [`DeviceBuffer::copy_from_device`], [`DeviceBuffer::to_vec`] | `aclrtMemcpy` |
/// | [`DeviceBuffer::fill_bytes`] | `aclrtMemset` |
#[derive(Debug)]
pub struct DeviceBuffer<'d, T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    device: i32,
    _owner: PhantomData<(&'d Device<'d>, *mut T)>,
}

/// The runtime function a [`DeviceBuffer`] is allocated with. All three are freed with
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

    fn call(self, bytes: usize, policy: u32) -> Result<*mut std::ffi::c_void> {
        match self {
            DeviceAlloc::Malloc => result::memory::malloc(bytes, policy),
            DeviceAlloc::Align32 => result::memory::malloc_align32(bytes, policy),
            DeviceAlloc::Cached => result::memory::malloc_cached(bytes, policy),
        }
    }
}

impl<'d, T: DeviceRepr> DeviceBuffer<'d, T> {
    /// Allocates `len` elements without initialising them (`aclrtMalloc`).
    ///
    /// # Safety
    /// The contents are whatever the memory held before; since `T: DeviceRepr` every bit pattern
    /// is a valid `T`, but reading them may expose data of earlier allocations. The caller
    /// writes every element before reading it back.
    pub unsafe fn uninit(
        device: &'d Device<'_>,
        len: usize,
        policy: impl Into<MallocConfig>,
    ) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::uninit_with(device, len, policy, DeviceAlloc::Malloc) }
    }

    /// Allocates `len` elements without initialising them, with the chosen runtime function.
    ///
    /// # Safety
    /// As for [`DeviceBuffer::uninit`]: the caller writes every element before reading it back.
    pub unsafe fn uninit_with(
        device: &'d Device<'_>,
        len: usize,
        policy: impl Into<MallocConfig>,
        alloc: DeviceAlloc,
    ) -> Result<Self> {
        let api_name = alloc.api_name();
        let bytes = byte_len::<T>(api_name, len)?;
        if bytes == 0 {
            return Ok(DeviceBuffer {
                ptr: NonNull::dangling(),
                len,
                device: device.id(),
                _owner: PhantomData,
            });
        }
        device.ensure_current()?;
        let p = alloc.call(bytes, policy.into().into())?;
        let buf = DeviceBuffer {
            ptr: NonNull::new(p.cast::<T>())
                .ok_or_else(|| Error::argument(api_name, "the runtime returned a NULL pointer"))?,
            len,
            device: device.id(),
            _owner: PhantomData,
        };
        if !buf.ptr.as_ptr().is_aligned() {
            return Err(Error::argument(
                api_name,
                "the runtime returned memory not aligned for the element type",
            ));
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements (`aclrtMalloc` then `aclrtMemset`).
    ///
    /// ```
    /// use ascendcl::{DeviceBuffer, MallocPolicy};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let buf = DeviceBuffer::<f32>::zeroed(&dev, 1024, MallocPolicy::HugeFirst)?;
    /// assert_eq!(buf.to_vec()?, vec![0.0; 1024]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn zeroed(
        device: &'d Device<'_>,
        len: usize,
        policy: impl Into<MallocConfig>,
    ) -> Result<Self> {
        // SAFETY: every byte is written (memset) before the buffer is returned; on failure the
        // buffer is dropped (freed) without being read.
        let mut buf = unsafe { Self::uninit(device, len, policy) }?;
        buf.fill_bytes(0)?;
        Ok(buf)
    }

    /// Allocates `len` zeroed elements with the chosen runtime function, then `aclrtMemset`.
    ///
    /// ```
    /// use ascendcl::{DeviceAlloc, DeviceBuffer, MallocPolicy};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let buf = DeviceBuffer::<u16>::zeroed_with(&dev, 100, MallocPolicy::NormalOnly, DeviceAlloc::Align32)?;
    /// assert_eq!(buf.to_vec()?, vec![0; 100]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn zeroed_with(
        device: &'d Device<'_>,
        len: usize,
        policy: impl Into<MallocConfig>,
        alloc: DeviceAlloc,
    ) -> Result<Self> {
        // SAFETY: every byte is written (memset) before the buffer is returned; on failure the
        // buffer is dropped (freed) without being read.
        let mut buf = unsafe { Self::uninit_with(device, len, policy, alloc) }?;
        buf.fill_bytes(0)?;
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `src` (`aclrtMalloc` then `aclrtMemcpy`).
    pub fn from_slice(
        device: &'d Device<'_>,
        src: &[T],
        policy: impl Into<MallocConfig>,
    ) -> Result<Self> {
        // SAFETY: every element is written by the copy before the buffer is returned; on
        // failure the buffer is dropped (freed) without being read.
        let mut buf = unsafe { Self::uninit(device, src.len(), policy) }?;
        buf.copy_from_host(src)?;
        Ok(buf)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The id of the device the memory is on.
    pub fn device_id(&self) -> i32 {
        self.device
    }

    /// The device address, for FFI (kernel arguments). Never dereference it on the host.
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The device address, for FFI that writes the buffer (kernel arguments).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// A view of the whole buffer.
    pub fn as_view(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: self.ptr.as_ptr(),
            len: self.len,
            device: self.device,
            _borrow: PhantomData,
        }
    }

    /// A mutable view of the whole buffer.
    pub fn as_view_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: self.ptr.as_ptr(),
            len: self.len,
            device: self.device,
            _borrow: PhantomData,
        }
    }

    /// A view of the elements in `range`; an out-of-bounds range is an error, not a panic.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        self.as_view().into_slice(range)
    }

    /// A mutable view of the elements in `range`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        self.as_view_mut().into_slice_mut(range)
    }

    /// Copies `src` (host memory, pageable or pinned) into the buffer; lengths must be equal
    /// (`aclrtMemcpy`, host to device).
    #[inline]
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies the buffer into `dst` (host memory); lengths must be equal (`aclrtMemcpy`, device
    /// to host).
    #[inline]
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies another buffer of the same device into this one; lengths must be equal
    /// (`aclrtMemcpy`, device to device). Buffers of another device need
    /// [`PeerAccess::copy`](crate::PeerAccess::copy).
    #[inline]
    pub fn copy_from_device(&mut self, src: &DeviceBuffer<'_, T>) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies from any source (host slice, pinned buffer, device view of the same device).
    #[inline]
    pub fn copy_from<S: CopySource<Elem = T> + ?Sized>(&mut self, src: &S) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies to any destination.
    #[inline]
    pub fn copy_to<D: CopyDest<Elem = T> + ?Sized>(&self, dst: &mut D) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies the buffer into a new `Vec` (`aclrtMemcpy`, device to host).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }

    /// Sets every byte of the buffer to `value` (`aclrtMemset`).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        self.as_view_mut().fill_bytes(value)
    }

    /// Frees the memory now (`aclrtFree`). On failure the memory is still allocated and the
    /// buffer comes back with the error ([`ReleaseError`]): retry, or drop it.
    pub fn free(self) -> ReleaseResult<(), Self> {
        match self.release() {
            Ok(()) => {
                std::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }

    fn release(&self) -> Result<()> {
        if self.size_in_bytes() == 0 {
            return Ok(());
        }
        // SAFETY: the pointer came from aclrtMalloc and is freed once (by `free` or `drop`).
        unsafe { result::memory::free(self.ptr.as_ptr().cast()) }
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<'_, T> {
    fn drop(&mut self) {
        crate::drop_errors::report(self.release());
    }
}

/// A shared view of device memory (part or all of a [`DeviceBuffer`]).
#[derive(Debug)]
pub struct DeviceSlice<'a, T: DeviceRepr> {
    ptr: *const T,
    len: usize,
    device: i32,
    _borrow: PhantomData<&'a T>,
}

impl<T: DeviceRepr> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: DeviceRepr> Copy for DeviceSlice<'_, T> {}

impl<'a, T: DeviceRepr> DeviceSlice<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.device
    }
    /// The device address (never dereference on the host).
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }
    /// A narrower view; out of bounds is an error.
    pub fn into_slice(self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        let (start, len) = resolve_range("DeviceSlice::slice", range, self.len)?;
        Ok(DeviceSlice {
            ptr: self.ptr.wrapping_add(start),
            len,
            ..self
        })
    }
    /// Copies the view into `dst` (host memory); lengths must be equal.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        copy::copy(dst, self)
    }
    /// Copies the view into a new `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }
}

/// An exclusive view of device memory (part or all of a [`DeviceBuffer`]).
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T: DeviceRepr> {
    ptr: *mut T,
    len: usize,
    device: i32,
    _borrow: PhantomData<&'a mut T>,
}

impl<'a, T: DeviceRepr> DeviceSliceMut<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.device
    }
    /// The device address (never dereference on the host).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
    /// A shared view of the same elements.
    pub fn as_view(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: self.ptr,
            len: self.len,
            device: self.device,
            _borrow: PhantomData,
        }
    }
    /// A narrower view; out of bounds is an error.
    pub fn into_slice_mut(self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'a, T>> {
        let (start, len) = resolve_range("DeviceSliceMut::slice", range, self.len)?;
        Ok(DeviceSliceMut {
            ptr: self.ptr.wrapping_add(start),
            len,
            ..self
        })
    }
    /// Copies `src` (host memory) into the view; lengths must be equal.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }
    /// Copies from any source of the same device or the host; lengths must be equal.
    pub fn copy_from<S: CopySource<Elem = T> + ?Sized>(&mut self, src: &S) -> Result<()> {
        copy::copy(self, src)
    }
    /// Sets every byte of the view to `value` (`aclrtMemset`).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        let bytes = self.len * size_of::<T>();
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the view is exclusive device memory of `bytes` bytes.
        unsafe { result::memory::memset(self.ptr.cast(), bytes, value, bytes) }
    }
}

/// Pinned (page-locked) host memory holding `len` elements (`aclrtMallocHost` /
/// `aclrtFreeHost`). Derefs to `[T]`.
///
/// | operation | C function |
/// |---|---|
/// | [`HostBuffer::zeroed`], [`HostBuffer::from_slice`], [`HostBuffer::uninit`] | `aclrtMallocHost` |
/// | drop, [`HostBuffer::free`] | `aclrtFreeHost` |
#[derive(Debug)]
pub struct HostBuffer<'d, T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    _owner: PhantomData<(&'d Device<'d>, *mut T)>,
}

impl<'d, T: DeviceRepr> HostBuffer<'d, T> {
    /// Allocates pinned memory for `len` elements without initialising it.
    ///
    /// # Safety
    /// The contents are uninitialised host memory: the caller writes every element (for
    /// example through a copy from the device, or `as_mut_ptr`) before reading it through the
    /// slice returned by `Deref`.
    pub unsafe fn uninit(device: &'d Device<'_>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>("aclrtMallocHost", len)?;
        if bytes == 0 {
            return Ok(HostBuffer {
                ptr: NonNull::dangling(),
                len,
                _owner: PhantomData,
            });
        }
        device.ensure_current()?;
        let p = result::memory::malloc_host(bytes)?;
        let buf = HostBuffer {
            ptr: NonNull::new(p.cast::<T>()).ok_or_else(|| {
                Error::argument("aclrtMallocHost", "the runtime returned a NULL pointer")
            })?,
            len,
            _owner: PhantomData,
        };
        if !buf.ptr.as_ptr().is_aligned() {
            return Err(Error::argument(
                "aclrtMallocHost",
                "the runtime returned memory not aligned for the element type",
            ));
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements of pinned memory.
    pub fn zeroed(device: &'d Device<'_>, len: usize) -> Result<Self> {
        // SAFETY: every byte is written just below, before any read.
        let buf = unsafe { Self::uninit(device, len) }?;
        // SAFETY: the allocation holds `len` elements; all-zero bytes are a valid T.
        unsafe { buf.ptr.as_ptr().write_bytes(0, len) };
        Ok(buf)
    }

    /// Allocates pinned memory holding a copy of `src`.
    pub fn from_slice(device: &'d Device<'_>, src: &[T]) -> Result<Self> {
        // SAFETY: every element is written just below, before any read.
        let buf = unsafe { Self::uninit(device, src.len()) }?;
        // SAFETY: the allocation holds `src.len()` elements and does not overlap `src`.
        unsafe {
            buf.ptr
                .as_ptr()
                .copy_from_nonoverlapping(src.as_ptr(), src.len())
        };
        Ok(buf)
    }

    /// Frees the memory now (`aclrtFreeHost`). On failure the memory is still allocated and the
    /// buffer comes back with the error ([`ReleaseError`]): retry, or drop it.
    pub fn free(self) -> ReleaseResult<(), Self> {
        match self.release() {
            Ok(()) => {
                std::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }

    fn release(&self) -> Result<()> {
        if self.len * size_of::<T>() == 0 {
            return Ok(());
        }
        // SAFETY: the pointer came from aclrtMallocHost and is freed once.
        unsafe { result::memory::free_host(self.ptr.as_ptr().cast()) }
    }
}

impl<T: DeviceRepr> Deref for HostBuffer<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is aligned, non-null, and valid for `len` initialised elements owned by
        // `self` (see the constructors' contracts).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for HostBuffer<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> Drop for HostBuffer<'_, T> {
    fn drop(&mut self) {
        crate::drop_errors::report(self.release());
    }
}

bitflags::bitflags! {
    /// Flags for [`HostRegistration::with_flags`] (`aclrtHostRegisterV2`, `ACL_HOST_REG_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct HostRegisterFlags: u32 {
        /// `ACL_HOST_REG_MAPPED`: map the memory into the device's address space.
        const MAPPED = sys::ACL_HOST_REG_MAPPED;
        /// `ACL_HOST_REG_IOMEMORY`
        const IOMEMORY = sys::ACL_HOST_REG_IOMEMORY;
        /// `ACL_HOST_REG_READONLY`: the device only reads.
        const READONLY = sys::ACL_HOST_REG_READONLY;
        /// `ACL_HOST_REG_PINNED`: page-lock the memory.
        const PINNED = sys::ACL_HOST_REG_PINNED;
    }
}

raw_enum! {
    /// The registration type of `aclrtHostRegister` (`aclrtHostRegisterType`).
    pub enum HostRegisterType: sys::aclrtHostRegisterType {
        /// `ACL_HOST_REGISTER_MAPPED`
        Mapped = sys::ACL_HOST_REGISTER_MAPPED,
        /// `ACL_HOST_REGISTER_IOMEMORY`
        IoMemory = sys::ACL_HOST_REGISTER_IOMEMORY,
        /// `ACL_HOST_REGISTER_READONLY`
        ReadOnly = sys::ACL_HOST_REGISTER_READONLY,
    }
}

/// Ordinary host memory registered with the runtime for as long as this value lives
/// (`aclrtHostRegister[V2]` / `aclrtHostUnregister`). It borrows the memory exclusively and the
/// device, and derefs to the slice.
#[derive(Debug)]
pub struct HostRegistration<'a, T: DeviceRepr> {
    mem: &'a mut [T],
    device_ptr: *mut T,
    _device: PhantomData<&'a Device<'a>>,
}

impl<'a, T: DeviceRepr> HostRegistration<'a, T> {
    /// Registers `mem` (`aclrtHostRegister`); the device address is available as
    /// [`HostRegistration::device_ptr`]. The runtime prefers 4 KiB-aligned memory.
    pub fn new(device: &'a Device<'_>, mem: &'a mut [T], ty: HostRegisterType) -> Result<Self> {
        let bytes = Self::check(mem)?;
        device.ensure_current()?;
        // SAFETY: `mem` stays borrowed (alive, unmoved) until unregistered by `self`.
        let dev =
            unsafe { result::memory::host_register(mem.as_mut_ptr().cast(), bytes, ty.into()) }?;
        Ok(HostRegistration {
            mem,
            device_ptr: dev.cast(),
            _device: PhantomData,
        })
    }

    /// Registers `mem` with flags (`aclrtHostRegisterV2`); the device address, when mapped, comes
    /// from `aclrtHostGetDevicePointer`.
    pub fn with_flags(
        device: &'a Device<'_>,
        mem: &'a mut [T],
        flags: HostRegisterFlags,
    ) -> Result<Self> {
        let bytes = Self::check(mem)?;
        if flags.is_empty() {
            return Err(Error::argument(
                "aclrtHostRegisterV2",
                "the flags must not be empty",
            ));
        }
        device.ensure_current()?;
        let p: *mut c_void = mem.as_mut_ptr().cast();
        // SAFETY: `mem` stays borrowed (alive, unmoved) until unregistered by `self`.
        unsafe { result::memory::host_register_v2(p, bytes, flags.bits()) }?;
        let device_ptr = if flags.contains(HostRegisterFlags::MAPPED) {
            // SAFETY: `p` was just registered.
            match unsafe { result::memory::host_device_pointer(p) } {
                Ok(d) => d.cast(),
                Err(e) => {
                    // SAFETY: `p` was just registered, unregistered once here.
                    crate::drop_errors::report(unsafe { result::memory::host_unregister(p) });
                    return Err(e);
                }
            }
        } else {
            std::ptr::null_mut()
        };
        Ok(HostRegistration {
            mem,
            device_ptr,
            _device: PhantomData,
        })
    }

    fn check(mem: &[T]) -> Result<u64> {
        let bytes = size_of_val(mem);
        if bytes == 0 {
            return Err(Error::argument(
                "aclrtHostRegister",
                "cannot register an empty slice",
            ));
        }
        Ok(bytes as u64)
    }

    /// The device-side address of the memory (NULL when not mapped).
    pub fn device_ptr(&self) -> *mut T {
        self.device_ptr
    }

    /// Unregisters now (`aclrtHostUnregister`) and gives the slice back. On failure the memory
    /// is still registered and the registration comes back with the error ([`ReleaseError`]).
    pub fn unregister(self) -> ReleaseResult<&'a mut [T], Self> {
        let p: *mut c_void = self.mem.as_ptr().cast_mut().cast();
        // SAFETY: `p` is registered by this value; on success it is never unregistered again
        // (the value is not dropped below).
        if let Err(e) = unsafe { result::memory::host_unregister(p) } {
            return Err(ReleaseError::new(e, self));
        }
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the borrow is moved out exactly once.
        Ok(unsafe { std::ptr::read(&me.mem) })
    }
}

impl<T: DeviceRepr> Deref for HostRegistration<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.mem
    }
}

impl<T: DeviceRepr> DerefMut for HostRegistration<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.mem
    }
}

impl<T: DeviceRepr> Drop for HostRegistration<'_, T> {
    fn drop(&mut self) {
        let p: *mut c_void = self.mem.as_mut_ptr().cast();
        // SAFETY: `p` is registered by this value, unregistered once.
        crate::drop_errors::report(unsafe { result::memory::host_unregister(p) });
    }
}

// --- copy endpoints -------------------------------------------------------------------------

// SAFETY (all impls below): the region describes memory owned or borrowed by `self`, valid for
// the stated length and location for as long as the borrow of `self` that produced it.

// SAFETY: see above; `len` initialised elements in device memory owned by the buffer.
unsafe impl<T: DeviceRepr> CopySource for DeviceBuffer<'_, T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.ptr.as_ptr(),
            self.len,
            MemoryLocation::Device(self.device),
        )
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopyDest for DeviceBuffer<'_, T> {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        RawRegion::new(
            self.ptr.as_ptr(),
            self.len,
            MemoryLocation::Device(self.device),
        )
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopySource for DeviceSlice<'_, T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.ptr.cast_mut(),
            self.len,
            MemoryLocation::Device(self.device),
        )
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopySource for DeviceSliceMut<'_, T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(self.ptr, self.len, MemoryLocation::Device(self.device))
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopyDest for DeviceSliceMut<'_, T> {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        RawRegion::new(self.ptr, self.len, MemoryLocation::Device(self.device))
    }
}
// SAFETY: see above; pinned host memory owned by the buffer.
unsafe impl<T: DeviceRepr> CopySource for HostBuffer<'_, T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(self.ptr.as_ptr(), self.len, MemoryLocation::Pinned)
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopyDest for HostBuffer<'_, T> {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        RawRegion::new(self.ptr.as_ptr(), self.len, MemoryLocation::Pinned)
    }
}
// SAFETY: see above; registered host memory borrowed by the registration.
unsafe impl<T: DeviceRepr> CopySource for HostRegistration<'_, T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.mem.as_ptr().cast_mut(),
            self.mem.len(),
            MemoryLocation::Pinned,
        )
    }
}
// SAFETY: see above.
unsafe impl<T: DeviceRepr> CopyDest for HostRegistration<'_, T> {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        RawRegion::new(
            self.mem.as_mut_ptr(),
            self.mem.len(),
            MemoryLocation::Pinned,
        )
    }
}
