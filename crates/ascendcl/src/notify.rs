//! Notifies (`aclrtCreateNotify`): one-shot signals between streams of a device. A record sets
//! the notify; a wait on another stream holds that stream until the notify is set, then resets
//! it, so each record releases one wait.
//!
//! Recording and waiting are scope operations ([`Scope::record_notify`],
//! [`Scope::wait_notify`]): the runtime reads the notify when the stream reaches the task, so the
//! notify is borrowed until the scope has waited for its stream and cannot be destroyed under a
//! queued task.

use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::Result;
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::scope::Scope;
use ascendcl_sys as sys;
use std::time::Duration;

/// A notify of one device (`aclrtCreateNotify`; destroyed with `aclrtDestroyNotify` on drop).
///
/// Owned, `Send + Sync`: scopes on several streams and threads borrow it at once, one recording
/// and others waiting. It keeps its device open.
///
/// | operation | C function |
/// |---|---|
/// | [`Notify::new`], [`Notify::device_only`] | `aclrtCreateNotify` |
/// | [`Notify::id`] | `aclrtGetNotifyId` |
/// | [`Notify::reset`] | `aclrtNotifyBatchReset` |
/// | [`Scope::record_notify`] | `aclrtRecordNotify` |
/// | [`Scope::wait_notify`] | `aclrtWaitAndResetNotify` |
/// | drop, [`Notify::destroy`] | `aclrtDestroyNotify` |
#[derive(Debug)]
pub struct Notify {
    /// NULL once destroyed explicitly.
    raw: sys::aclrtNotify,
    device: Device,
}

// SAFETY: a notify handle is a plain value the runtime accepts from any thread; every call makes
// the device's context current first. It is never mutated while shared.
unsafe impl Send for Notify {}
// SAFETY: as above; recording and waiting are synchronised by the runtime.
unsafe impl Sync for Notify {}

impl Notify {
    fn create(device: &Device, flags: u32) -> Result<Notify> {
        device.ensure_current()?;
        let mut raw: sys::aclrtNotify = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; a defined flag.
        unsafe { raw::aclrtCreateNotify(&mut raw, u64::from(flags)) }?;
        Ok(Notify {
            raw,
            device: device.clone(),
        })
    }

    /// Creates a notify on `device` (`ACL_NOTIFY_DEFAULT`).
    pub fn new(device: &Device) -> Result<Notify> {
        Notify::create(device, sys::ACL_NOTIFY_DEFAULT)
    }

    /// Creates a notify used by the device only (`ACL_NOTIFY_DEVICE_USE_ONLY`).
    pub fn device_only(device: &Device) -> Result<Notify> {
        Notify::create(device, sys::ACL_NOTIFY_DEVICE_USE_ONLY)
    }

    /// The raw handle, for FFI. It stays owned by `self`.
    pub fn as_raw(&self) -> sys::aclrtNotify {
        self.raw
    }

    /// The device the notify belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The notify's id (`aclrtGetNotifyId`).
    pub fn id(&self) -> Result<u32> {
        self.device.ensure_current()?;
        let mut id = 0u32;
        // SAFETY: the notify is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtGetNotifyId(self.raw, &mut id) }?;
        Ok(id)
    }

    /// Clears a record that no wait has consumed yet (`aclrtNotifyBatchReset` of this one).
    pub fn reset(&self) -> Result<()> {
        self.device.ensure_current()?;
        let mut one = [self.raw];
        // SAFETY: one live notify handle in a local array.
        unsafe { raw::aclrtNotifyBatchReset(one.as_mut_ptr(), 1) }
    }

    /// Destroys the notify now (`aclrtDestroyNotify`); on failure it comes back with the error.
    pub fn destroy(mut self) -> ReleaseResult<(), Self> {
        // SAFETY: the notify is live and owned by `self`; no scope borrows it (we own it).
        match unsafe { destroy_now(&mut self.raw, &self.device) } {
            Ok(()) => Ok(()),
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl Drop for Notify {
    fn drop(&mut self) {
        // SAFETY: the notify (if not destroyed already) was owned by the dropped value and no
        // scope borrows it.
        unsafe { destroy_on_drop(self.raw, &self.device) }
    }
}

/// `aclrtDestroyNotify` of `*raw` with `device`'s context current; `*raw` is NULL afterwards,
/// and unchanged on failure (the notify is still alive).
///
/// # Safety
/// `*raw` is a live notify handle the caller owns, which no scope borrows.
pub(crate) unsafe fn destroy_now(raw: &mut sys::aclrtNotify, device: &Device) -> Result<()> {
    device.ensure_current()?;
    // SAFETY: the caller's guarantee.
    unsafe { raw::aclrtDestroyNotify(*raw) }?;
    *raw = std::ptr::null_mut();
    Ok(())
}

/// Hands the destruction of a dropped notify's `raw` (nothing when NULL: destroyed already)
/// to the release thread.
///
/// # Safety
/// `raw` is NULL or a live notify handle owned by the dropped value, which no scope borrows.
pub(crate) unsafe fn destroy_on_drop(raw: sys::aclrtNotify, device: &Device) {
    if raw.is_null() {
        return;
    }
    let (raw, device) = (Raw(raw), device.clone());
    deferred::release(move || {
        device.ensure_current()?;
        // SAFETY: the caller's guarantee: the handle is no one else's.
        unsafe { raw::aclrtDestroyNotify(raw.get()) }
    });
}

/// Seconds for `aclrtWaitAndResetNotify`: `None` waits for ever (0); durations are rounded up
/// to whole seconds (at least one), below `u32::MAX` (which also means for ever).
pub(crate) fn timeout_secs(timeout: Option<Duration>) -> u32 {
    match timeout {
        None => 0,
        Some(d) => {
            let s = d.as_nanos().div_ceil(1_000_000_000).max(1);
            u32::try_from(s).unwrap_or(u32::MAX - 1).min(u32::MAX - 1)
        }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues setting `notify` when the stream reaches this point (`aclrtRecordNotify`).
    pub fn record_notify(&self, notify: &'scope Notify) -> Result<()> {
        self.stream().make_current()?;
        // SAFETY: both handles are live; the notify is borrowed until the scope has waited for
        // the stream.
        unsafe { raw::aclrtRecordNotify(notify.raw, self.as_raw()) }
    }

    /// Makes the stream wait, when it reaches this point, until `notify` is set, then resets it
    /// (`aclrtWaitAndResetNotify`). With a `timeout` (whole seconds, rounded up, at least one)
    /// the waiting task fails after it, and the scope reports the failure
    /// (`ACL_ERROR_RT_TASK_TIMEOUT`); `None` waits for ever.
    pub fn wait_notify(&self, notify: &'scope Notify, timeout: Option<Duration>) -> Result<()> {
        let seconds = timeout_secs(timeout);
        self.stream().make_current()?;
        // SAFETY: as for `record_notify`.
        unsafe { raw::aclrtWaitAndResetNotify(notify.raw, self.as_raw(), seconds) }
    }
}
