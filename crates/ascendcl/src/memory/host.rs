//! [`HostBuffer`]: pinned (page-locked) host memory (`aclrtMallocHost` … `aclrtFreeHost`).

use super::policy::MallocAttrs;
use super::repr::DeviceRepr;
use crate::copy::{MemoryLocation, RawRegion};
use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Pinned (page-locked) host memory holding `len` elements (`aclrtMallocHost` /
/// `aclrtFreeHost`). Derefs to `[T]`.
///
/// Owns its memory and a handle on the [`Device`] it was allocated through; `'static`, and
/// `Send + Sync` like a `Vec<T>`.
///
/// | operation | C function |
/// |---|---|
/// | [`HostBuffer::zeroed`], [`HostBuffer::from_slice`], [`HostBuffer::uninit`] | `aclrtMallocHost` |
/// | [`HostBuffer::zeroed_with`], [`HostBuffer::uninit_with`] ([`MallocAttrs`]) | `aclrtMallocHostWithCfg` |
/// | drop, [`HostBuffer::free`] | `aclrtFreeHost` |
#[derive(Debug)]
pub struct HostBuffer<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    ctx: sys::aclrtContext,
    device: Device,
}

// SAFETY: the buffer owns its elements like a `Vec<T>`, and `T: DeviceRepr` is `Send`; the
// runtime frees pinned memory from any thread (with the device's context made current first).
unsafe impl<T: DeviceRepr> Send for HostBuffer<T> {}
// SAFETY: `&self` gives out `&[T]` only, and `T: DeviceRepr` is `Sync`.
unsafe impl<T: DeviceRepr> Sync for HostBuffer<T> {}

impl<T: DeviceRepr> HostBuffer<T> {
    /// Allocates pinned memory for `len` elements without initialising it.
    ///
    /// # Safety
    /// The contents are uninitialised host memory: the caller writes every element (for
    /// example through a copy from the device, or `as_mut_ptr`) before reading it through the
    /// slice returned by `Deref`.
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::alloc(device, len, None) }
    }

    /// Allocates pinned memory for `len` elements labelled with `attrs`
    /// (`aclrtMallocHostWithCfg`), without initialising it.
    ///
    /// # Safety
    /// As for [`HostBuffer::uninit`]: the caller writes every element before reading it.
    pub unsafe fn uninit_with(device: &Device, len: usize, attrs: MallocAttrs) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::alloc(device, len, Some(attrs)) }
    }

    /// Allocates `len` zeroed elements of pinned memory labelled with `attrs`
    /// (`aclrtMallocHostWithCfg`); freed with `aclrtFreeHost` like every `HostBuffer`.
    ///
    /// ```
    /// use ascendcl::{HostBuffer, MallocAttrs};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let device = rt.device(0)?;
    /// let host = HostBuffer::<u8>::zeroed_with(&device, 4096, MallocAttrs::app())?;
    /// assert!(host.iter().all(|&b| b == 0));
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn zeroed_with(device: &Device, len: usize, attrs: MallocAttrs) -> Result<Self> {
        // SAFETY: every byte is written just below, before any read.
        let buf = unsafe { Self::uninit_with(device, len, attrs) }?;
        // SAFETY: the allocation holds `len` elements; all-zero bytes are a valid T.
        unsafe { buf.ptr.as_ptr().write_bytes(0, len) };
        Ok(buf)
    }

    /// `aclrtMallocHost`, or `aclrtMallocHostWithCfg` with attributes.
    ///
    /// # Safety
    /// As for [`HostBuffer::uninit`].
    unsafe fn alloc(device: &Device, len: usize, attrs: Option<MallocAttrs>) -> Result<Self> {
        let api = match attrs {
            None => "aclrtMallocHost",
            Some(_) => "aclrtMallocHostWithCfg",
        };
        let bytes = super::byte_len::<T>(api, len)?;
        let buf = |ptr| HostBuffer {
            ptr,
            len,
            ctx: device.raw_context(),
            device: device.clone(),
        };
        if bytes == 0 {
            return Ok(buf(NonNull::dangling()));
        }
        device.ensure_current()?;
        let p = match attrs {
            // SAFETY: a valid out-pointer.
            None => raw::out(|p| unsafe { raw::aclrtMallocHost(p, bytes) })?,
            // `usize` always fits the runtime's `uint64_t` size.
            Some(a) => a.with_config(|cfg| {
                // SAFETY: a valid out-pointer; NULL or a configuration that lives for the call.
                raw::out(|p| unsafe { raw::aclrtMallocHostWithCfg(p, bytes as u64, cfg) })
            })?,
        };
        let buf = buf(NonNull::new(p.cast::<T>())
            .ok_or_else(|| Error::argument(api, "the runtime returned a NULL pointer"))?);
        if !buf.ptr.as_ptr().is_aligned() {
            return Err(Error::argument(
                api,
                "the runtime returned memory not aligned for the element type",
            ));
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements of pinned memory.
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: every byte is written just below, before any read.
        let buf = unsafe { Self::uninit(device, len) }?;
        // SAFETY: the allocation holds `len` elements; all-zero bytes are a valid T.
        unsafe { buf.ptr.as_ptr().write_bytes(0, len) };
        Ok(buf)
    }

    /// Allocates pinned memory holding a copy of `src`.
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
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

    /// The device the memory was allocated through.
    pub fn device(&self) -> &Device {
        &self.device
    }

    #[inline]
    pub(super) fn region(&self) -> RawRegion<T> {
        RawRegion::new(self.ptr.as_ptr(), self.len, MemoryLocation::Pinned).with_context(self.ctx)
    }

    /// Frees the memory now (`aclrtFreeHost`). On failure the memory is still allocated and the
    /// buffer comes back with the error ([`ReleaseError`]): retry, or drop it.
    pub fn free(self) -> ReleaseResult<(), Self> {
        match release(self.ptr.as_ptr(), self.len * size_of::<T>(), self.ctx) {
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

/// `aclrtFreeHost` of `ptr` (nothing for an empty buffer), with the device's context.
fn release<T>(ptr: *mut T, bytes: usize, ctx: sys::aclrtContext) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    current::ensure_current(ctx)?;
    // SAFETY: the pointer came from aclrtMallocHost and is freed once.
    unsafe { raw::aclrtFreeHost(ptr.cast()) }
}

impl<T: DeviceRepr> Deref for HostBuffer<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is aligned, non-null, and valid for `len` initialised elements owned by
        // `self` (see the constructors' contracts).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for HostBuffer<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> Drop for HostBuffer<T> {
    fn drop(&mut self) {
        let bytes = self.len * size_of::<T>();
        let (ptr, ctx, device) = (Raw(self.ptr.as_ptr()), Raw(self.ctx), self.device.clone());
        deferred::release(move || {
            let r = release(ptr.get(), bytes, ctx.get());
            drop(device);
            r
        });
    }
}
