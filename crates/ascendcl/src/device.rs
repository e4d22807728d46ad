//! Devices: opening (`aclrtSetDevice`), reset, synchronisation and memory information.
//!
//! A [`Device`] is a reference-counted handle, `Send + Sync` and `'static`. The process holds at
//! most one open device per id: opening an id that is already open returns another handle on it.
//! Every stream, event, context and buffer holds a handle on its device, so the device is reset
//! (`aclrtResetDevice`) only when the last of them goes — a buffer can never outlive its device.

use crate::context::Context;
use crate::current;
use crate::deferred;
use crate::error::{Error, Result};
use crate::event::{Event, EventFlags};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use crate::runtime::Runtime;
use crate::stream::{Stream, StreamFlags};
use ascendcl_sys as sys;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// An open device (`aclrtSetDevice`; reset with `aclrtResetDevice` when its last handle goes).
///
/// Cheap to clone (a reference count), `Send + Sync`, `'static`: store it in a struct, return it,
/// move it into a thread. Every call makes the device's default context current on the calling
/// thread first, so a handle acts on its own device from any thread. Streams, events, contexts
/// and buffers created from it hold a handle too: the device stays open while any of them is
/// alive.
///
/// | operation | C function |
/// |---|---|
/// | [`Runtime::device`] | `aclrtSetDevice` (once per id while the device is open) |
/// | drop of the last handle, [`Device::reset`] | `aclrtResetDevice` |
/// | [`Device::reset_force`] | `aclrtResetDeviceForce` |
/// | [`Device::synchronize`] | `aclrtSynchronizeDevice` |
/// | [`Device::synchronize_timeout`] | `aclrtSynchronizeDeviceWithTimeout` |
/// | [`Device::make_current`] | `aclrtSetCurrentContext` |
/// | [`Device::mem_info`] | `aclrtGetMemInfo` |
/// | [`Device::can_access_peer`] | `aclrtDeviceCanAccessPeer` |
/// | [`Device::enable_peer_access`] | `aclrtDeviceEnablePeerAccess` |
/// | [`Device::alloc_zeros`], [`Device::alloc`], [`Device::clone_htod`] | `aclrtMalloc` (+ `aclrtMemset` / `aclrtMemcpy`) |
#[derive(Debug, Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

/// What the handles of one open device share: one `aclrtSetDevice` reference.
#[derive(Debug)]
pub(crate) struct DeviceInner {
    id: i32,
    /// The default context; NULL once the device was reset explicitly.
    ctx: sys::aclrtContext,
    rt: Runtime,
}

// SAFETY: the id and the default context are plain values the runtime accepts from any thread;
// every call made with them first makes the context current on the calling thread.
unsafe impl Send for DeviceInner {}
// SAFETY: as above; the fields are never mutated while shared.
unsafe impl Sync for DeviceInner {}

/// The open devices of the process, one entry per id (a weak reference: the handles own the
/// device). Only opening and resetting a device take the lock, never a copy or a launch.
static OPEN: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// One open device: its id, its default context (the address only, for [`owner_of`]) and the
/// weak reference. Entries are upgraded only when they match, so that no last handle is ever
/// dropped (which takes this lock) while the lock is held.
struct Entry {
    id: i32,
    ctx: usize,
    device: Weak<DeviceInner>,
}

fn open_devices() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock leaves a list that is still right: recover it.
    OPEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drops the entries of `id` whose device has no handle left (being reset, or reset).
fn forget_closed(open: &mut Vec<Entry>, id: i32) {
    open.retain(|e| e.id != id || e.device.strong_count() > 0);
}

fn entry(inner: &Arc<DeviceInner>) -> Entry {
    Entry {
        id: inner.id,
        ctx: inner.ctx as usize,
        device: Arc::downgrade(inner),
    }
}

/// A handle on the open device whose default context is `ctx`, if any.
pub(crate) fn owner_of(ctx: sys::aclrtContext) -> Option<Device> {
    open_devices()
        .iter()
        .filter(|e| e.ctx == ctx as usize)
        .find_map(|e| e.device.upgrade())
        .map(|inner| Device { inner })
}

impl Device {
    pub(crate) fn open(rt: &Runtime, id: i32) -> Result<Device> {
        if id < 0 {
            return Err(Error::argument(
                "aclrtSetDevice",
                format!("device id {id} is negative"),
            ));
        }
        let mut open = open_devices();
        let existing = open
            .iter()
            .filter(|e| e.id == id)
            .find_map(|e| e.device.upgrade());
        if let Some(inner) = existing {
            drop(open);
            let device = Device { inner };
            current::force_current(device.inner.ctx)?;
            return Ok(device);
        }
        let at = current::epoch();
        // SAFETY: a plain value, validated by the runtime; the current context is kept in step
        // below (`current`).
        unsafe { raw::aclrtSetDevice(id) }?;
        let ctx = match current::current_context() {
            Ok(c) => c,
            Err(e) => {
                current::invalidate();
                crate::drop_errors::report(reset(id));
                return Err(e);
            }
        };
        // aclrtSetDevice made the default context current on this thread.
        current::note_current_at(ctx, at);
        let inner = Arc::new(DeviceInner {
            id,
            ctx,
            rt: rt.clone(),
        });
        forget_closed(&mut open, id);
        open.push(entry(&inner));
        Ok(Device { inner })
    }

    /// The device id, as passed to `aclrtSetDevice`.
    pub fn id(&self) -> i32 {
        self.inner.id
    }

    /// The device's default context.
    pub fn raw_context(&self) -> sys::aclrtContext {
        self.inner.ctx
    }

    /// The runtime handle the device keeps (the runtime stays initialised while it is open).
    pub fn runtime(&self) -> &Runtime {
        &self.inner.rt
    }

    /// Makes this device's default context current on the calling thread
    /// (`aclrtSetCurrentContext`). Calls of this crate do this themselves; call it before raw
    /// FFI that relies on the current context.
    pub fn make_current(&self) -> Result<()> {
        current::force_current(self.inner.ctx)
    }

    #[inline]
    pub(crate) fn ensure_current(&self) -> Result<()> {
        current::ensure_current(self.inner.ctx)
    }

    /// Blocks until all work on the device is done (`aclrtSynchronizeDevice`).
    pub fn synchronize(&self) -> Result<()> {
        self.ensure_current()?;
        raw::aclrtSynchronizeDevice()
    }

    /// As [`Device::synchronize`], giving up after `timeout` (`None`: wait forever) with
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (`aclrtSynchronizeDeviceWithTimeout`; the duration is
    /// rounded up to whole milliseconds).
    pub fn synchronize_timeout(&self, timeout: Option<std::time::Duration>) -> Result<()> {
        self.ensure_current()?;
        raw::aclrtSynchronizeDeviceWithTimeout(crate::stream::timeout_ms(timeout))
    }

    /// Creates a stream (default flags, priority 0).
    pub fn create_stream(&self) -> Result<Stream> {
        self.create_stream_with(StreamFlags::empty(), 0)
    }

    /// Creates a stream with flags and a priority (0 highest … 7), via
    /// `aclrtCreateStreamWithConfig`.
    pub fn create_stream_with(&self, flags: StreamFlags, priority: u32) -> Result<Stream> {
        Stream::create(self.into(), flags, priority)
    }

    /// Creates an event (`aclrtCreateEvent`), usable for timing.
    pub fn create_event(&self) -> Result<Event> {
        Event::create(self, None)
    }

    /// Creates an event with flags (`aclrtCreateEventWithFlag`).
    pub fn create_event_with_flags(&self, flags: EventFlags) -> Result<Event> {
        Event::create(self, Some(flags))
    }

    /// Creates a new context on this device (`aclrtCreateContext`); it becomes current on the
    /// calling thread.
    pub fn create_context(&self) -> Result<Context> {
        Context::create(self)
    }

    /// `aclrtGetMemInfo`: free and total bytes of one kind of memory.
    pub fn mem_info(&self, attr: MemAttr) -> Result<MemInfo> {
        self.ensure_current()?;
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers to locals; the runtime validates attr.
        unsafe { raw::aclrtGetMemInfo(attr.into(), &mut free, &mut total) }?;
        Ok(MemInfo { free, total })
    }

    /// `aclrtDeviceCanAccessPeer`: whether this device can access `peer`'s memory.
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        // SAFETY: a valid out-pointer and plain values.
        let can =
            raw::out(|can| unsafe { raw::aclrtDeviceCanAccessPeer(can, self.id(), peer.id()) })?;
        Ok(can != 0)
    }

    /// Releases this handle. When it was the last one (no other `Device` handle, and no stream,
    /// event, context or buffer of the device is alive), the device is reset now
    /// (`aclrtResetDevice`); on failure it stays open and the handle comes back with the error
    /// ([`ReleaseError`]): retry, or drop it. Otherwise the device stays open for the other
    /// handles and this returns `Ok`.
    pub fn reset(self) -> ReleaseResult<(), Self> {
        self.release(false)
    }

    /// Resets the device at once (`aclrtResetDeviceForce`), also dropping the references that
    /// raw FFI took with `aclrtSetDevice`.
    ///
    /// A forced reset frees everything on the device, so it needs the only handle: while any
    /// other handle (a clone, or a stream, event, context or buffer of the device) is alive it is
    /// refused with [`Error::Shared`], and this handle comes back unchanged inside the
    /// [`ReleaseError`]. A runtime failure gives it back as well.
    pub fn reset_force(self) -> ReleaseResult<(), Self> {
        self.release(true)
    }

    fn release(self, force: bool) -> ReleaseResult<(), Self> {
        let api = if force {
            "aclrtResetDeviceForce"
        } else {
            "aclrtResetDevice"
        };
        let mut open = open_devices();
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(inner) => {
                drop(open);
                let device = Device { inner };
                if force {
                    let others = Arc::strong_count(&device.inner).saturating_sub(1);
                    return Err(ReleaseError::new(
                        Error::Shared {
                            api,
                            what: "device",
                            others,
                        },
                        device,
                    ));
                }
                // Other handles keep the device open; the last of them resets it.
                drop(device);
                return Ok(());
            }
        };
        forget_closed(&mut open, inner.id);
        current::invalidate();
        let r = if force {
            // SAFETY: a plain value; this is the device's only handle.
            unsafe { raw::aclrtResetDeviceForce(inner.id) }
        } else {
            reset(inner.id)
        };
        match r {
            Ok(()) => {
                inner.ctx = std::ptr::null_mut();
                drop(open);
                drop(inner);
                Ok(())
            }
            Err(e) => {
                let inner = Arc::new(inner);
                open.push(entry(&inner));
                Err(ReleaseError::new(e, Device { inner }))
            }
        }
    }
}

/// `aclrtResetDevice`, when the device's last handle goes (or its opening fails half-way).
fn reset(id: i32) -> Result<()> {
    // SAFETY: a plain value; no safe handle of the device is left.
    unsafe { raw::aclrtResetDevice(id) }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        if self.ctx.is_null() {
            return;
        }
        let (id, rt) = (self.id, self.rt.clone());
        deferred::release(move || {
            let mut open = open_devices();
            forget_closed(&mut open, id);
            current::invalidate();
            let r = reset(id);
            drop(open);
            drop(rt);
            r
        });
    }
}

/// Free and total bytes of one kind of device memory ([`Device::mem_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    /// Free bytes.
    pub free: usize,
    /// Total bytes.
    pub total: usize,
}

raw_enum! {
    /// A kind of memory for [`Device::mem_info`] (`aclrtMemAttr`).
    pub enum MemAttr: sys::aclrtMemAttr {
        /// `ACL_DDR_MEM`
        Ddr = sys::ACL_DDR_MEM,
        /// `ACL_HBM_MEM`
        Hbm = sys::ACL_HBM_MEM,
        /// `ACL_DDR_MEM_HUGE`
        DdrHuge = sys::ACL_DDR_MEM_HUGE,
        /// `ACL_DDR_MEM_NORMAL`
        DdrNormal = sys::ACL_DDR_MEM_NORMAL,
        /// `ACL_HBM_MEM_HUGE`
        HbmHuge = sys::ACL_HBM_MEM_HUGE,
        /// `ACL_HBM_MEM_NORMAL`
        HbmNormal = sys::ACL_HBM_MEM_NORMAL,
        /// `ACL_DDR_MEM_P2P_HUGE`
        DdrP2pHuge = sys::ACL_DDR_MEM_P2P_HUGE,
        /// `ACL_DDR_MEM_P2P_NORMAL`
        DdrP2pNormal = sys::ACL_DDR_MEM_P2P_NORMAL,
        /// `ACL_HBM_MEM_P2P_HUGE`
        HbmP2pHuge = sys::ACL_HBM_MEM_P2P_HUGE,
        /// `ACL_HBM_MEM_P2P_NORMAL`
        HbmP2pNormal = sys::ACL_HBM_MEM_P2P_NORMAL,
        /// `ACL_HBM_MEM_HUGE1G`
        HbmHuge1g = sys::ACL_HBM_MEM_HUGE1G,
        /// `ACL_HBM_MEM_P2P_HUGE1G`
        HbmP2pHuge1g = sys::ACL_HBM_MEM_P2P_HUGE1G,
        /// `ACL_MEM_NORMAL`: 4 KiB pages, any memory type.
        Normal = sys::ACL_MEM_NORMAL,
        /// `ACL_MEM_HUGE`: 2 MiB pages.
        Huge = sys::ACL_MEM_HUGE,
        /// `ACL_MEM_HUGE1G`: 1 GiB pages.
        Huge1g = sys::ACL_MEM_HUGE1G,
        /// `ACL_MEM_P2P_NORMAL`
        P2pNormal = sys::ACL_MEM_P2P_NORMAL,
        /// `ACL_MEM_P2P_HUGE`
        P2pHuge = sys::ACL_MEM_P2P_HUGE,
        /// `ACL_MEM_P2P_HUGE1G`
        P2pHuge1g = sys::ACL_MEM_P2P_HUGE1G,
    }
}
