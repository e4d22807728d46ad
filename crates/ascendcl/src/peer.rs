//! Peer access between two devices (`aclrtDeviceEnablePeerAccess` /
//! `aclrtDeviceDisablePeerAccess`, queried with `aclrtDevicePeerAccessStatus`) and the copies it
//! allows.
//!
//! [`PeerAccess`] is the proof that access is enabled both ways; it holds both devices, so
//! neither can be reset while it exists, and copies between buffers of different devices exist
//! only as [`PeerAccess::copy`].

use crate::copy::{self, CopyDest, CopySource};
use crate::current;
use crate::deferred;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;

impl Device {
    /// Enables access between this device and `peer`, both ways
    /// (`aclrtDeviceEnablePeerAccess` from each side). The returned token is the proof that
    /// [`PeerAccess::copy`] needs for copies between the two devices; dropping it disables the
    /// access again (`aclrtDeviceDisablePeerAccess`).
    pub fn enable_peer_access(&self, peer: &Device) -> Result<PeerAccess> {
        if self.id() == peer.id() {
            return Err(Error::argument(
                "aclrtDeviceEnablePeerAccess",
                "a device is not its own peer",
            ));
        }
        current::force_current(self.raw_context())?;
        // Flags must be 0.
        raw::aclrtDeviceEnablePeerAccess(peer.id(), 0)?;
        let back = current::force_current(peer.raw_context())
            .and_then(|()| raw::aclrtDeviceEnablePeerAccess(self.id(), 0));
        if let Err(e) = back {
            crate::drop_errors::report(
                current::force_current(self.raw_context())
                    .and_then(|()| disable_towards(peer.id())),
            );
            return Err(e);
        }
        let access = PeerAccess {
            a: self.clone(),
            b: peer.clone(),
        };
        live::add(self.id(), peer.id());
        // On failure `access` is dropped, which disables the access again (nothing leaks).
        current::force_current(self.raw_context())?;
        Ok(access)
    }

    /// Whether access from this device to `peer` is enabled now (`aclrtDevicePeerAccessStatus`):
    /// by a live [`PeerAccess`] of the two, or by raw calls. Enabling is one-way in the runtime,
    /// so `a.peer_access_enabled(&b)` and `b.peer_access_enabled(&a)` may differ outside a
    /// `PeerAccess`.
    pub fn peer_access_enabled(&self, peer: &Device) -> Result<bool> {
        let mut status = 0i32;
        // SAFETY: a valid out-pointer; the ids are plain values.
        unsafe { crate::raw::aclrtDevicePeerAccessStatus(self.id(), peer.id(), &mut status) }?;
        Ok(status != 0)
    }
}

/// Proof that peer access between two devices is enabled ([`Device::enable_peer_access`]).
///
/// Copies between buffers of different devices exist only as [`PeerAccess::copy`]: a buffer of
/// another device cannot be used in a copy without this token. It holds a handle on each
/// device; `Send + Sync`, `'static`.
#[derive(Debug)]
pub struct PeerAccess {
    a: Device,
    b: Device,
}

impl PeerAccess {
    /// The two device ids.
    pub fn devices(&self) -> (i32, i32) {
        (self.a.id(), self.b.id())
    }

    fn covers(&self, x: i32) -> bool {
        x == self.a.id() || x == self.b.id()
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
        live::remove(self.a.id(), self.b.id());
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so each handle is moved out once.
        let (a, b) = unsafe { (std::ptr::read(&me.a), std::ptr::read(&me.b)) };
        disable(&a, &b)
    }
}

/// `aclrtDeviceDisablePeerAccess` from the current device towards `peer`.
fn disable_towards(peer: i32) -> Result<()> {
    // SAFETY: a plain value; called when the access this crate enabled goes (the token, or
    // the undoing of a half-enabled pair).
    unsafe { raw::aclrtDeviceDisablePeerAccess(peer) }
}

fn disable(a: &Device, b: &Device) -> Result<()> {
    let first = current::force_current(a.raw_context()).and_then(|()| disable_towards(b.id()));
    let second = current::force_current(b.raw_context()).and_then(|()| disable_towards(a.id()));
    let back = current::force_current(a.raw_context());
    first.and(second).and(back)
}

impl Drop for PeerAccess {
    fn drop(&mut self) {
        live::remove(self.a.id(), self.b.id());
        let (a, b) = (self.a.clone(), self.b.clone());
        deferred::release(move || disable(&a, &b));
    }
}

/// Whether work on a stream of device `from` may use memory of device `memory`: the same
/// device, or a live [`PeerAccess`] of the two. Scopes check it for every buffer of every task
/// they enqueue.
pub(crate) fn reachable(from: i32, memory: i32) -> bool {
    from == memory || live::has(from, memory)
}

/// The pairs of devices a live [`PeerAccess`] holds (a pair once per token), taken off before
/// the access is disabled.
mod live {
    use std::sync::Mutex;

    static PAIRS: Mutex<Vec<(i32, i32)>> = Mutex::new(Vec::new());

    fn key(a: i32, b: i32) -> (i32, i32) {
        (a.min(b), a.max(b))
    }

    pub(super) fn add(a: i32, b: i32) {
        PAIRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(key(a, b));
    }

    pub(super) fn remove(a: i32, b: i32) {
        let mut v = PAIRS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = v.iter().position(|&p| p == key(a, b)) {
            v.swap_remove(i);
        }
    }

    pub(super) fn has(a: i32, b: i32) -> bool {
        PAIRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&key(a, b))
    }
}
