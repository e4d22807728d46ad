//! [`DeviceBuffer`]: device memory of one device (`aclrtMalloc` … `aclrtFree`), and the
//! allocation helpers on [`Device`].

use super::device_views;
use super::policy::{DeviceAlloc, MallocConfig, MallocPolicy};
use super::repr::DeviceRepr;
use crate::copy::{self, CopyDest, CopySource, MemoryLocation, RawRegion};
use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ptr::NonNull;

/// Device memory holding `len` elements of `T` (`aclrtMalloc` / `aclrtFree`).
///
/// Owns its memory and a handle on its [`Device`], which stays open while the buffer exists:
/// `'static`, `Send + Sync` (the host never dereferences the memory; `&self` methods only read
/// it through copies). Data moves through copies and [`Stream::scope`](crate::Stream::scope).
///
/// | operation | C function |
/// |---|---|
/// | [`Device::alloc_zeros`], [`Device::clone_htod`], [`Device::alloc`], [`DeviceBuffer::zeroed`], [`DeviceBuffer::from_slice`], [`DeviceBuffer::uninit`] | `aclrtMalloc` (+ `aclrtMemset` / `aclrtMemcpy`) |
/// | drop, [`DeviceBuffer::free`] | `aclrtFree` |
/// | [`DeviceBuffer::copy_from`], [`DeviceBuffer::copy_to`], [`DeviceBuffer::copy_to_vec`], [`DeviceBuffer::copy_from_host`], [`DeviceBuffer::copy_to_host`], [`DeviceBuffer::copy_from_device`] | `aclrtMemcpy` |
/// | [`DeviceBuffer::fill_bytes`] | `aclrtMemset` |
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    /// The device's id and default context, kept next to the address so that a copy reads
    /// them without following the device handle.
    id: i32,
    ctx: sys::aclrtContext,
    device: Device,
}

// SAFETY: the buffer owns device memory that the host never dereferences; moving it to another
// thread moves that ownership (every call makes the device's context current first), and
// `T: DeviceRepr` is `Send`.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: `&self` methods only read the memory through the runtime (copies out of it), and
// `T: DeviceRepr` is `Sync`.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl Device {
    /// Allocates `len` zeroed elements with the default policy ([`MallocPolicy::HugeFirst`])
    /// (`aclrtMalloc` then `aclrtMemset`).
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let device = rt.device(0)?;
    /// let buf = device.alloc_zeros::<f32>(1024)?;
    /// assert_eq!(buf.copy_to_vec()?, vec![0.0; 1024]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn alloc_zeros<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::zeroed(self, len, MallocPolicy::default())
    }

    /// Allocates `len` elements with the default policy without initialising them
    /// (`aclrtMalloc`).
    ///
    /// # Safety
    /// As for [`DeviceBuffer::uninit`]: the caller writes every element before reading it back.
    pub unsafe fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the caller's contract is this function's.
        unsafe { DeviceBuffer::uninit(self, len, MallocPolicy::default()) }
    }

    /// Allocates a buffer holding a copy of `src`, with the default policy (`aclrtMalloc` then
    /// `aclrtMemcpy`, host to device).
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let device = rt.device(0)?;
    /// let weights = device.clone_htod(&[0.5f32, 1.5, 2.5])?;
    /// assert_eq!(weights.copy_to_vec()?, [0.5, 1.5, 2.5]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn clone_htod<T: DeviceRepr>(&self, src: &[T]) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::from_slice(self, src, MallocPolicy::default())
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` elements without initialising them (`aclrtMalloc`).
    ///
    /// # Safety
    /// The contents are whatever the memory held before; since `T: DeviceRepr` every bit pattern
    /// is a valid `T`, but reading them may expose data of earlier allocations. The caller
    /// writes every element before reading it back.
    pub unsafe fn uninit(
        device: &Device,
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
        device: &Device,
        len: usize,
        policy: impl Into<MallocConfig>,
        alloc: DeviceAlloc,
    ) -> Result<Self> {
        let api_name = alloc.api_name();
        let bytes = super::byte_len::<T>(api_name, len)?;
        let buf = |ptr| DeviceBuffer {
            ptr,
            len,
            id: device.id(),
            ctx: device.raw_context(),
            device: device.clone(),
        };
        if bytes == 0 {
            return Ok(buf(NonNull::dangling()));
        }
        device.ensure_current()?;
        let p = alloc.call(bytes, policy.into().into())?;
        let buf = buf(NonNull::new(p.cast::<T>())
            .ok_or_else(|| Error::argument(api_name, "the runtime returned a NULL pointer"))?);
        if !buf.ptr.as_ptr().is_aligned() {
            return Err(Error::argument(
                api_name,
                "the runtime returned memory not aligned for the element type",
            ));
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements (`aclrtMalloc` then `aclrtMemset`).
    /// [`Device::alloc_zeros`] does the same with the default policy.
    ///
    /// ```
    /// use ascendcl::{DeviceBuffer, MallocPolicy};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let buf = DeviceBuffer::<f32>::zeroed(&dev, 1024, MallocPolicy::HugeFirst)?;
    /// assert_eq!(buf.copy_to_vec()?, vec![0.0; 1024]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn zeroed(device: &Device, len: usize, policy: impl Into<MallocConfig>) -> Result<Self> {
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
    /// assert_eq!(buf.copy_to_vec()?, vec![0; 100]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn zeroed_with(
        device: &Device,
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
    /// [`Device::clone_htod`] does the same with the default policy.
    pub fn from_slice(device: &Device, src: &[T], policy: impl Into<MallocConfig>) -> Result<Self> {
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
        self.id
    }

    /// The device the memory is on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device address, for FFI (kernel arguments). Never dereference it on the host.
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The device address, for FFI that writes the buffer (kernel arguments).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    #[inline]
    pub(super) fn region(&self) -> RawRegion<T> {
        RawRegion::new(self.ptr.as_ptr(), self.len, MemoryLocation::Device(self.id))
            .with_context(self.ctx)
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
    pub fn copy_from_device(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies from any source of the same element type and length: a host slice, array or
    /// `Vec`, a pinned buffer, a buffer or view of the same device.
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// # let device = rt.device(0)?;
    /// let mut buf = device.alloc_zeros::<u32>(3)?;
    /// buf.copy_from(&[1, 2, 3])?;
    /// let mut back = [0u32; 3];
    /// buf.copy_to(&mut back)?;
    /// assert_eq!(back, [1, 2, 3]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    #[inline]
    pub fn copy_from<S: CopySource<Elem = T> + ?Sized>(&mut self, src: &S) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies into any destination of the same element type and length.
    #[inline]
    pub fn copy_to<D: CopyDest<Elem = T> + ?Sized>(&self, dst: &mut D) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies the buffer into a new `Vec` (`aclrtMemcpy`, device to host).
    pub fn copy_to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }

    /// Same as [`DeviceBuffer::copy_to_vec`].
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
        match release(self.ptr.as_ptr(), self.size_in_bytes(), self.ctx) {
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

/// `aclrtFree` of `bytes` at `ptr` (nothing for an empty buffer), with the device's context.
fn release<T>(ptr: *mut T, bytes: usize, ctx: sys::aclrtContext) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    current::ensure_current(ctx)?;
    // SAFETY: the pointer came from an aclrtMalloc function and is freed once (by `free` or
    // `drop`).
    unsafe { raw::aclrtFree(ptr.cast()) }
}

device_views!(DeviceBuffer, "buffer");

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let bytes = self.size_in_bytes();
        let (ptr, ctx, device) = (Raw(self.ptr.as_ptr()), Raw(self.ctx), self.device.clone());
        deferred::release(move || {
            let r = release(ptr.get(), bytes, ctx.get());
            drop(device);
            r
        });
    }
}
