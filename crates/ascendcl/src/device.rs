//! Devices: selection (`aclrtSetDevice`), reset, memory information and peer access.
//!
//! A [`Device`] is opened on one thread and stays there (`!Send`, `!Sync`): the runtime's current
//! device and context are per thread. Every stream, event and buffer borrows the device it lives
//! on, so none can outlive the `aclrtResetDevice` that would destroy it.

use crate::context::{self, Context};
use crate::copy::{self, CopyDest, CopySource};
use crate::error::{Error, Result};
use crate::event::{Event, EventFlags};
use crate::release::{ReleaseError, ReleaseResult};
use crate::result;
use crate::runtime::Runtime;
use crate::stream::{Stream, StreamFlags};
use ascendcl_sys as sys;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

/// A device opened on the calling thread (`aclrtSetDevice`; dropped: `aclrtResetDevice`).
///
/// | operation | C function |
/// |---|---|
/// | [`Runtime::device`] | `aclrtSetDevice` |
/// | drop, [`Device::reset`] / [`Device::reset_force`] | `aclrtResetDevice` / `aclrtResetDeviceForce` |
/// | [`Device::synchronize`] | `aclrtSynchronizeDevice` |
/// | [`Device::make_current`] | `aclrtSetCurrentContext` |
/// | [`Device::mem_info`] | `aclrtGetMemInfo` |
/// | [`Device::can_access_peer`] | `aclrtDeviceCanAccessPeer` |
/// | [`Device::enable_peer_access`] | `aclrtDeviceEnablePeerAccess` |
#[derive(Debug)]
pub struct Device<'rt> {
    id: i32,
    ctx: sys::aclrtContext,
    _rt: PhantomData<&'rt Runtime>,
}

impl<'rt> Device<'rt> {
    pub(crate) fn open(_rt: &'rt Runtime, id: i32) -> Result<Device<'rt>> {
        if id < 0 {
            return Err(Error::argument(
                "aclrtSetDevice",
                format!("device id {id} is negative"),
            ));
        }
        let mut open = open_handles();
        result::device::set(id)?;
        let ctx = match result::context::current() {
            Ok(c) => c,
            Err(e) => {
                crate::drop_errors::report(result::device::reset(id));
                return Err(e);
            }
        };
        note_handle(&mut open, id);
        drop(open);
        context::note_current(ctx);
        context::device_opened(ctx);
        Ok(Device {
            id,
            ctx,
            _rt: PhantomData,
        })
    }

    /// The device id, as passed to `aclrtSetDevice`.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The device's default context.
    pub fn raw_context(&self) -> sys::aclrtContext {
        self.ctx
    }

    /// Makes this device's default context current on the calling thread
    /// (`aclrtSetCurrentContext`). Resource-creating calls do this themselves; call it before raw
    /// FFI that relies on the current context.
    pub fn make_current(&self) -> Result<()> {
        context::force_current(self.ctx)
    }

    pub(crate) fn ensure_current(&self) -> Result<()> {
        context::ensure_current(self.ctx)
    }

    /// Blocks until all work on the device is done (`aclrtSynchronizeDevice`).
    pub fn synchronize(&self) -> Result<()> {
        self.ensure_current()?;
        result::device::synchronize()
    }

    /// Creates a stream (default flags, priority 0).
    pub fn create_stream(&self) -> Result<Stream<'_>> {
        self.create_stream_with(StreamFlags::empty(), 0)
    }

    /// Creates a stream with flags and a priority (0 highest … 7), via
    /// `aclrtCreateStreamWithConfig`.
    pub fn create_stream_with(&self, flags: StreamFlags, priority: u32) -> Result<Stream<'_>> {
        Stream::create(self.ctx, self.id, flags, priority)
    }

    /// Creates an event (`aclrtCreateEvent`), usable for timing.
    pub fn create_event(&self) -> Result<Event<'_>> {
        Event::create(self, None)
    }

    /// Creates an event with flags (`aclrtCreateEventWithFlag`).
    pub fn create_event_with_flags(&self, flags: EventFlags) -> Result<Event<'_>> {
        Event::create(self, Some(flags))
    }

    /// Creates a new context on this device (`aclrtCreateContext`); it becomes current.
    pub fn create_context(&self) -> Result<Context<'_>> {
        Context::create(self)
    }

    /// `aclrtGetMemInfo`: free and total bytes of one kind of memory.
    pub fn mem_info(&self, attr: MemAttr) -> Result<MemInfo> {
        self.ensure_current()?;
        let (free, total) = result::device::mem_info(attr.into())?;
        Ok(MemInfo { free, total })
    }

    /// `aclrtDeviceCanAccessPeer`: whether this device can access `peer`'s memory.
    pub fn can_access_peer(&self, peer: &Device<'_>) -> Result<bool> {
        result::device::can_access_peer(self.id, peer.id)
    }

    /// Enables access between this device and `peer`, both ways
    /// (`aclrtDeviceEnablePeerAccess` from each side). The returned token is the proof that
    /// [`PeerAccess::copy`] needs for copies between the two devices; dropping it disables the
    /// access again (`aclrtDeviceDisablePeerAccess`).
    pub fn enable_peer_access<'a, 'b>(
        &'a self,
        peer: &'b Device<'_>,
    ) -> Result<PeerAccess<'a, 'b>> {
        if self.id == peer.id {
            return Err(Error::argument(
                "aclrtDeviceEnablePeerAccess",
                "a device is not its own peer",
            ));
        }
        context::force_current(self.ctx)?;
        result::device::enable_peer_access(peer.id)?;
        let back = context::force_current(peer.ctx)
            .and_then(|()| result::device::enable_peer_access(self.id));
        if let Err(e) = back {
            crate::drop_errors::report(
                context::force_current(self.ctx)
                    .and_then(|()| result::device::disable_peer_access(peer.id)),
            );
            return Err(e);
        }
        let access = PeerAccess {
            a: self.id,
            b: peer.id,
            a_ctx: self.ctx,
            b_ctx: peer.ctx,
            _devices: PhantomData,
        };
        // On failure `access` is dropped, which disables the access again (nothing leaks).
        context::force_current(self.ctx)?;
        Ok(access)
    }

    /// Resets the device now (`aclrtResetDevice`). Every handle on the device has been dropped
    /// (the borrow checker proves it). On failure the device stays set and the handle comes back
    /// with the error ([`ReleaseError`]): retry, or drop it.
    pub fn reset(self) -> ReleaseResult<(), Self> {
        let mut open = open_handles();
        if let Err(e) = result::device::reset(self.id) {
            return Err(ReleaseError::new(e, self));
        }
        forget_handle(&mut open, self.id);
        drop(open);
        let ctx = self.ctx;
        std::mem::forget(self);
        context::device_closed(ctx, false);
        Ok(())
    }

    /// Resets the device at once whatever its reference count (`aclrtResetDeviceForce`),
    /// releasing it for every thread of the process that shares its default context.
    ///
    /// The borrow checker proves that no stream, event or buffer of *this* handle is alive, but
    /// a forced reset would also free what other [`Device`] handles on the same id hold (opened
    /// on this thread or on others: their buffers would dangle). So it is refused with
    /// [`Error::Argument`] while any other handle on the id is open in the process, and the
    /// handle comes back unchanged inside the [`ReleaseError`] (dropping it resets the device
    /// normally, `aclrtResetDevice`). A runtime failure gives the handle back as well. Use it at
    /// the end of a program, or when no other handle uses the device.
    pub fn reset_force(self) -> ReleaseResult<(), Self> {
        let id = self.id;
        let mut open = open_handles();
        let me = std::thread::current().id();
        let (mut here, mut elsewhere) = (0, 0);
        for &(_, thread, n) in open.iter().filter(|(d, _, _)| *d == id) {
            if thread == me {
                here += n;
            } else {
                elsewhere += n;
            }
        }
        // This handle is one of those counted on this thread.
        here = here.saturating_sub(1);
        if here + elsewhere > 0 {
            drop(open);
            let e = Error::argument(
                "aclrtResetDeviceForce",
                format!(
                    "refused because {}, whose memory a forced reset would free; the handle \
                     is given back unchanged (dropping it resets the device normally)",
                    describe_others(id, here, elsewhere)
                ),
            );
            return Err(ReleaseError::new(e, self));
        }
        if let Err(e) = result::device::reset_force(id) {
            return Err(ReleaseError::new(e, self));
        }
        open.retain(|&(d, _, _)| d != id);
        drop(open);
        let ctx = self.ctx;
        std::mem::forget(self);
        context::device_closed(ctx, true);
        Ok(())
    }
}

/// "2 other Device handles on device 1 are open (1 on this thread, 1 on another thread)".
fn describe_others(id: i32, here: usize, elsewhere: usize) -> String {
    let n = here + elsewhere;
    let (handles, are) = if n == 1 {
        ("handle", "is")
    } else {
        ("handles", "are")
    };
    let threads = |k: usize| {
        if k == 1 {
            "another thread"
        } else {
            "other threads"
        }
    };
    let place = match (here, elsewhere) {
        (_, 0) => "on this thread".to_string(),
        (0, k) => format!("on {}", threads(k)),
        (h, k) => format!("({h} on this thread, {k} on {})", threads(k)),
    };
    format!("{n} other Device {handles} on device {id} {are} open {place}")
}

impl Drop for Device<'_> {
    fn drop(&mut self) {
        crate::drop_errors::report(release(self.id));
        context::device_closed(self.ctx, false);
    }
}

/// How many [`Device`] handles are open per device id and per thread (a `Device` is not `Send`:
/// it is opened and released on one thread), as `(device, thread, count)`. Only opening and
/// releasing a device touch it (never a copy or a launch); it holds one entry per thread and
/// device in use.
type OpenHandles = Vec<(i32, ThreadId, usize)>;

static OPEN_HANDLES: Mutex<OpenHandles> = Mutex::new(Vec::new());

fn open_handles() -> MutexGuard<'static, OpenHandles> {
    // A panic while holding the lock leaves a count that is still right: recover it.
    OPEN_HANDLES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Adds one handle on `id` of the calling thread to the count.
fn note_handle(open: &mut OpenHandles, id: i32) {
    let me = std::thread::current().id();
    match open.iter_mut().find(|(d, t, _)| *d == id && *t == me) {
        Some((_, _, n)) => *n += 1,
        None => open.push((id, me, 1)),
    }
}

/// Drops one handle on `id` of the calling thread from the count.
fn forget_handle(open: &mut OpenHandles, id: i32) {
    let me = std::thread::current().id();
    if let Some(i) = open.iter().position(|(d, t, _)| *d == id && *t == me) {
        open[i].2 -= 1;
        if open[i].2 == 0 {
            open.swap_remove(i);
        }
    }
}

/// Resets `id` once (`aclrtResetDevice`) under the lock and drops the handle from the count,
/// whatever the outcome (the handle is gone).
fn release(id: i32) -> Result<()> {
    let mut open = open_handles();
    let r = result::device::reset(id);
    forget_handle(&mut open, id);
    r
}

/// Free and total bytes of one kind of device memory ([`Device::mem_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    /// Free bytes.
    pub free: usize,
    /// Total bytes.
    pub total: usize,
}

macro_rules! raw_enum {
    (
        $(#[$m:meta])* $vis:vis enum $name:ident : $raw:ty {
            $( $(#[$vm:meta])* $v:ident = $c:path ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        $vis enum $name { $( $(#[$vm])* $v ),* }

        impl $name {
            /// Every variant, in the order of their raw values.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
        }

        impl From<$name> for $raw {
            fn from(v: $name) -> $raw {
                match v { $( $name::$v => $c as $raw ),* }
            }
        }

        impl TryFrom<$raw> for $name {
            type Error = crate::Error;
            fn try_from(raw: $raw) -> crate::Result<$name> {
                $( if raw == $c as $raw { return Ok($name::$v); } )*
                Err(crate::Error::UnknownValue { what: stringify!($name), value: raw as u64 })
            }
        }
    };
}
pub(crate) use raw_enum;

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

/// Proof that peer access between two devices is enabled ([`Device::enable_peer_access`]).
///
/// Copies between buffers of different devices exist only as [`PeerAccess::copy`]: a buffer of
/// another device cannot be used in a copy without this token. Not `Send`.
#[derive(Debug)]
pub struct PeerAccess<'a, 'b> {
    a: i32,
    b: i32,
    a_ctx: sys::aclrtContext,
    b_ctx: sys::aclrtContext,
    _devices: PhantomData<(&'a Device<'a>, &'b Device<'b>)>,
}

impl PeerAccess<'_, '_> {
    /// The two device ids.
    pub fn devices(&self) -> (i32, i32) {
        (self.a, self.b)
    }

    fn covers(&self, x: i32) -> bool {
        x == self.a || x == self.b
    }

    /// Synchronous copy between buffers on the two devices (either direction, or within one of
    /// them), lengths checked first (`aclrtMemcpy`, device to device).
    pub fn copy<D, S>(&self, dst: &mut D, src: &S) -> Result<()>
    where
        D: CopyDest + ?Sized,
        S: CopySource<Elem = D::Elem> + ?Sized,
    {
        let (d, s) = (dst.dest_region(), src.source_region());
        match (d.location().device(), s.location().device()) {
            (Some(x), Some(y)) if self.covers(x) && self.covers(y) => {}
            _ => {
                return Err(Error::argument(
                    "aclrtMemcpy",
                    "PeerAccess::copy copies between buffers of the two peer devices only",
                ));
            }
        }
        copy::copy_regions(d, s, None, true)
    }

    /// Disables the access again (`aclrtDeviceDisablePeerAccess` from each side), reporting
    /// failure.
    pub fn disable(self) -> Result<()> {
        let r = self.release();
        std::mem::forget(self);
        r
    }

    fn release(&self) -> Result<()> {
        let first = context::force_current(self.a_ctx)
            .and_then(|()| result::device::disable_peer_access(self.b));
        let second = context::force_current(self.b_ctx)
            .and_then(|()| result::device::disable_peer_access(self.a));
        let back = context::force_current(self.a_ctx);
        first.and(second).and(back)
    }
}

impl Drop for PeerAccess<'_, '_> {
    fn drop(&mut self) {
        crate::drop_errors::report(self.release());
    }
}
