//! [`HostRegistration`]: an ordinary `Vec` registered with the runtime (`aclrtHostRegister[V2]`
//! … `aclrtHostUnregister`) for as long as the registration owns it.

use super::repr::DeviceRepr;
use super::slice::{DeviceSlice, DeviceSliceMut};
use crate::copy::{MemoryLocation, RawRegion};
use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::ops::{Deref, DerefMut};

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

/// A `Vec<T>` registered with the runtime for as long as this value owns it
/// (`aclrtHostRegister[V2]` / `aclrtHostUnregister`). Derefs to the slice (never to the `Vec`, so
/// the memory cannot be reallocated while registered); [`HostRegistration::unregister`] gives the
/// `Vec` back.
///
/// Holds a handle on its [`Device`]; `'static`, and `Send + Sync` like the `Vec`.
#[derive(Debug)]
pub struct HostRegistration<T: DeviceRepr> {
    mem: Vec<T>,
    device_ptr: *mut T,
    ctx: sys::aclrtContext,
    device: Device,
}

// SAFETY: the registration owns its `Vec<T>` (`T: DeviceRepr` is `Send`); the device address is
// only handed out, never dereferenced; the runtime unregisters from any thread (with the
// device's context made current first).
unsafe impl<T: DeviceRepr> Send for HostRegistration<T> {}
// SAFETY: `&self` gives out `&[T]` and the device address only; `T: DeviceRepr` is `Sync`.
unsafe impl<T: DeviceRepr> Sync for HostRegistration<T> {}

impl<T: DeviceRepr> HostRegistration<T> {
    /// Registers `mem` (`aclrtHostRegister`); the device address is available as
    /// [`HostRegistration::device_ptr`]. The runtime prefers 4 KiB-aligned memory. On failure
    /// the vector is dropped.
    pub fn new(device: &Device, mut mem: Vec<T>, ty: HostRegisterType) -> Result<Self> {
        let bytes = check(&mem)?;
        device.ensure_current()?;
        // SAFETY: `mem` is owned by the registration (never reallocated) until unregistered.
        let dev = raw::out(|dev| unsafe {
            raw::aclrtHostRegister(mem.as_mut_ptr().cast(), bytes, ty.into(), dev)
        })?;
        Ok(HostRegistration {
            mem,
            device_ptr: dev.cast(),
            ctx: device.raw_context(),
            device: device.clone(),
        })
    }

    /// Registers `mem` with flags (`aclrtHostRegisterV2`); the device address, when mapped, comes
    /// from `aclrtHostGetDevicePointer`. On failure the vector is dropped.
    pub fn with_flags(device: &Device, mut mem: Vec<T>, flags: HostRegisterFlags) -> Result<Self> {
        let bytes = check(&mem)?;
        if flags.is_empty() {
            return Err(Error::argument(
                "aclrtHostRegisterV2",
                "the flags must not be empty",
            ));
        }
        device.ensure_current()?;
        let p: *mut c_void = mem.as_mut_ptr().cast();
        // SAFETY: `mem` is owned by the registration (never reallocated) until unregistered.
        unsafe { raw::aclrtHostRegisterV2(p, bytes, flags.bits()) }?;
        let device_ptr = if flags.contains(HostRegisterFlags::MAPPED) {
            // SAFETY: `p` was just registered.
            match raw::out(|d| unsafe { raw::aclrtHostGetDevicePointer(p, d, 0) }) {
                Ok(d) => d.cast(),
                Err(e) => {
                    // SAFETY: `p` was just registered, unregistered once here.
                    crate::drop_errors::report(unsafe { raw::aclrtHostUnregister(p) });
                    return Err(e);
                }
            }
        } else {
            std::ptr::null_mut()
        };
        Ok(HostRegistration {
            mem,
            device_ptr,
            ctx: device.raw_context(),
            device: device.clone(),
        })
    }

    /// The device-side address of the memory (NULL when not mapped).
    pub fn device_ptr(&self) -> *mut T {
        self.device_ptr
    }

    /// The memory as the device sees it: a view of device memory at the registration's device
    /// address, for kernels and copies of the stream's device to read (zero copy). Borrowed
    /// shared: the host may only read the vector meanwhile. An argument error when the memory
    /// is not mapped into the device's address space.
    pub fn device_view(&self) -> Result<DeviceSlice<'_, T>> {
        Ok(DeviceSlice::new(
            self.mapped_region("HostRegistration::device_view")?,
        ))
    }

    /// The memory as the device sees it, for device work that writes it (zero copy). Borrowed
    /// exclusively: the host cannot touch the vector while the view lives, so a scope that uses
    /// the view is done before the host reads the result.
    pub fn device_view_mut(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        Ok(DeviceSliceMut::new(
            self.mapped_region("HostRegistration::device_view_mut")?,
        ))
    }

    fn mapped_region(&self, api: &'static str) -> Result<RawRegion<T>> {
        if self.device_ptr.is_null() {
            return Err(Error::argument(
                api,
                "the memory is not mapped for the device (register it with \
                 HostRegisterFlags::MAPPED)",
            ));
        }
        Ok(RawRegion::new(
            self.device_ptr,
            self.mem.len(),
            MemoryLocation::Device(self.device.id()),
        )
        .with_context(self.ctx))
    }

    /// The device the memory is registered with.
    pub fn device(&self) -> &Device {
        &self.device
    }

    #[inline]
    pub(super) fn region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.mem.as_ptr().cast_mut(),
            self.mem.len(),
            MemoryLocation::Pinned,
        )
        .with_context(self.ctx)
    }

    /// Unregisters now (`aclrtHostUnregister`) and gives the vector back. On failure the memory
    /// is still registered and the registration comes back with the error ([`ReleaseError`]).
    pub fn unregister(self) -> ReleaseResult<Vec<T>, Self> {
        if let Err(e) = release(self.mem.as_ptr().cast_mut().cast(), self.ctx) {
            return Err(ReleaseError::new(e, self));
        }
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so the vector and the device handle are
        // moved out exactly once.
        let (mem, device) = unsafe { (std::ptr::read(&me.mem), std::ptr::read(&me.device)) };
        drop(device);
        Ok(mem)
    }
}

fn check<T>(mem: &[T]) -> Result<u64> {
    let bytes = size_of_val(mem);
    if bytes == 0 {
        return Err(Error::argument(
            "aclrtHostRegister",
            "cannot register an empty slice",
        ));
    }
    Ok(bytes as u64)
}

/// `aclrtHostUnregister` of `p`, with the device's context.
fn release(p: *mut c_void, ctx: sys::aclrtContext) -> Result<()> {
    current::ensure_current(ctx)?;
    // SAFETY: `p` is registered by the caller's registration, unregistered once.
    unsafe { raw::aclrtHostUnregister(p) }
}

impl<T: DeviceRepr> Deref for HostRegistration<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.mem
    }
}

impl<T: DeviceRepr> DerefMut for HostRegistration<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.mem
    }
}

impl<T: DeviceRepr> Drop for HostRegistration<T> {
    fn drop(&mut self) {
        // The vector itself is dropped with `self`, after the unregistration (below, or on the
        // release thread: then the memory moves there with it).
        let mem = std::mem::take(&mut self.mem);
        let (ctx, device) = (Raw(self.ctx), self.device.clone());
        deferred::release(move || {
            let r = release(mem.as_ptr().cast_mut().cast(), ctx.get());
            // Registered memory must not be freed while registered: keep it when the runtime
            // refused to unregister it.
            if r.is_err() {
                std::mem::forget(mem);
            } else {
                drop(mem);
            }
            drop(device);
            r
        });
    }
}
