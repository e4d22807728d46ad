//! Devices: `aclrtSetDevice` references and each device's default context, the release of a
//! device (its contexts and streams closed, then what every concept kept for it, through the
//! hooks they registered), peer access between devices, device-wide synchronisation; the SoC
//! the emulator claims to be and the resource limits of devices and streams.

pub(crate) mod context;
pub(crate) mod limits;
pub(crate) mod soc;

use crate::base::config;
use crate::base::error::*;
use crate::base::hooks::{self, Phase, Release};
use crate::base::hub::registry;
use crate::base::leak::{self, LeakReport};
use crate::base::lock::{Mutex, Rank};
use crate::engine::stream::Stream;
use context::Context;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// One device of the process.
#[derive(Debug)]
struct Slot {
    epoch: u64,
    refs: u64,
    default_ctx: Option<Arc<Context>>,
    user_ctxs: HashSet<usize>,
}

impl Slot {
    fn new() -> Slot {
        static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);
        Slot {
            epoch: NEXT_EPOCH.fetch_add(1, Ordering::Relaxed),
            refs: 0,
            default_ctx: None,
            user_ctxs: HashSet::new(),
        }
    }
}

#[derive(Debug, Default)]
struct Devices {
    slots: HashMap<i32, Slot>,
    /// Peer access: (from, to), one-way.
    peers: HashSet<(i32, i32)>,
}

static DEVICES: LazyLock<Mutex<Devices>> = LazyLock::new(|| Mutex::ranked(Rank::Devices));

/// Number of emulated devices.
pub(crate) fn count() -> u32 {
    config::with(|c| c.devices)
}

/// Checks a device id.
pub(crate) fn check(id: i32) -> R {
    let n = count();
    if id < 0 || id as u32 >= n {
        return fail(
            RT_INVALID_DEVICEID,
            format!("device id {id} is outside [0, {n}) (ASCENDCL_EMU_DEVICES sets the count)"),
        );
    }
    Ok(())
}

/// Whether the device is open in this process (set by `aclrtSetDevice` or holding a context).
pub(crate) fn is_open(id: i32) -> bool {
    DEVICES
        .lock()
        .slots
        .get(&id)
        .is_some_and(|s| s.refs > 0 || s.default_ctx.is_some() || !s.user_ctxs.is_empty())
}

/// The current reference count of a device (0 when not set).
pub(crate) fn refs(dev: i32) -> u64 {
    DEVICES.lock().slots.get(&dev).map_or(0, |s| s.refs)
}

/// `aclrtSetDevice`: a reference to the device; its default context becomes current.
pub(crate) fn set(id: i32) -> R {
    check(id)?;
    crate::profiling::env_start();
    let mut d = DEVICES.lock();
    let slot = d.slots.entry(id).or_insert_with(Slot::new);
    slot.refs += 1;
    let (ctx, created) = match &slot.default_ctx {
        Some(c) => (Arc::clone(c), false),
        None => {
            let c = context::make(id, slot.epoch, true);
            slot.default_ctx = Some(Arc::clone(&c));
            (c, true)
        }
    };
    drop(d);
    let default_stream = ctx.default_stream.handle;
    context::set_current(Some(ctx));
    if created {
        hooks::stream_created(default_stream);
    }
    Ok(())
}

/// `aclrtResetDevice` / `aclrtResetDeviceForce`.
pub(crate) fn reset(id: i32, force: bool) -> R {
    check(id)?;
    let mut d = DEVICES.lock();
    let Some(slot) = d.slots.get_mut(&id) else {
        return fail(
            RT_CONTEXT_RELEASE_ERROR,
            format!("device {id} is not set (its reference count is 0)"),
        );
    };
    if slot.refs == 0 && !force {
        return fail(
            RT_CONTEXT_RELEASE_ERROR,
            format!("device {id} was already reset (its reference count is 0)"),
        );
    }
    if !force {
        slot.refs -= 1;
        if slot.refs > 0 {
            return Ok(());
        }
        if !slot.user_ctxs.is_empty() {
            // Only the default context goes; the device stays open for the user contexts.
            let ctx = slot.default_ctx.take();
            drop(d);
            if let Some(c) = ctx {
                context::retire(&[c], false);
            }
            return Ok(());
        }
    }
    // The decision to release and the removal of the device happen in one critical section.
    let slot = d.slots.remove(&id);
    d.peers.retain(|(from, _)| *from != id);
    drop(d);
    if let Some(slot) = slot {
        release(id, slot, force, true);
    }
    Ok(())
}

/// Tears down a device taken out of the table: its contexts and streams (each stream's work
/// runs: see [`Stream::close`]), then what every concept kept for it; reports what was still
/// alive. Access this device enabled went with it; access other devices enabled towards it stays
/// (it belongs to the device that enabled it).
fn release(id: i32, slot: Slot, force: bool, report: bool) -> LeakReport {
    let mut ctxs: Vec<Arc<Context>> = slot.default_ctx.into_iter().collect();
    for h in &slot.user_ctxs {
        if let Some(c) = registry::<Context>().get(*h) {
            ctxs.push(c);
        }
    }
    let r = Release {
        device: id,
        epoch: slot.epoch,
    };
    let mut out = LeakReport {
        device: Some(id),
        contexts: slot.user_ctxs.len(),
        ..LeakReport::default()
    };
    hooks::device_released(&r, Phase::BeforeStreams, &mut out);
    let streams = context::retire(&ctxs, force);
    out.streams = streams.iter().filter(|s| !s.is_default).count();
    hooks::device_released(&r, Phase::AfterStreams, &mut out);
    if report {
        leak::keep(
            out,
            if force {
                "aclrtResetDeviceForce"
            } else {
                "aclrtResetDevice"
            },
        );
    }
    out
}

/// Releases every device (`aclFinalize`), as by force; what was alive, summed.
pub(crate) fn release_all() -> LeakReport {
    let mut d = DEVICES.lock();
    let slots: Vec<(i32, Slot)> = d.slots.drain().collect();
    d.peers.clear();
    drop(d);
    let mut total = LeakReport::default();
    for (id, slot) in slots {
        let r = release(id, slot, true, false);
        total.allocations += r.allocations;
        total.allocation_bytes += r.allocation_bytes;
        total.streams += r.streams;
        total.events += r.events;
        total.contexts += r.contexts;
    }
    total
}

/// A user context of `device` opens the device (it holds it until destroyed).
pub(crate) fn add_user_context(device: i32) -> Arc<Context> {
    let mut d = DEVICES.lock();
    let slot = d.slots.entry(device).or_insert_with(Slot::new);
    let ctx = context::make(device, slot.epoch, false);
    slot.user_ctxs.insert(ctx.handle);
    ctx
}

/// A user context is gone: the device is released when nothing else holds it.
pub(crate) fn remove_user_context(ctx: &Context) {
    let mut d = DEVICES.lock();
    let release_it = match d.slots.get_mut(&ctx.device) {
        Some(slot) if slot.epoch == ctx.epoch => {
            slot.user_ctxs.remove(&ctx.handle);
            slot.refs == 0 && slot.user_ctxs.is_empty()
        }
        _ => false,
    };
    if !release_it {
        return;
    }
    let slot = d.slots.remove(&ctx.device);
    d.peers.retain(|(from, _)| *from != ctx.device);
    drop(d);
    if let Some(slot) = slot {
        release(ctx.device, slot, false, true);
    }
}

/// Every stream of a device.
pub(crate) fn streams(dev: i32) -> Vec<Arc<Stream>> {
    registry::<Stream>().collect(|s| s.device == dev)
}

/// How long a drain waits at most ([`crate::config::ENV_DRAIN_WAIT`], read once).
fn drain_wait() -> Duration {
    static WAIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *WAIT.get_or_init(|| {
        let v = std::env::var(crate::config::ENV_DRAIN_WAIT);
        match v.as_deref().map(str::trim).map(str::parse::<u64>) {
            Err(_) => Duration::from_secs(1),
            Ok(Ok(ms)) => Duration::from_millis(ms),
            Ok(Err(_)) => {
                eprintln!(
                    "ascendcl-emu: ignoring {}={:?}: not a count of milliseconds",
                    crate::config::ENV_DRAIN_WAIT,
                    v.unwrap_or_default()
                );
                Duration::from_secs(1)
            }
        }
    })
}

/// Before a synchronous memory call of the current device (a copy, a memset, a free, an IPC
/// close, an unmap): waits, bounded by [`crate::config::ENV_DRAIN_WAIT`] for all the streams
/// together, for the kernels and memory tasks already queued on the streams of `dev` that may
/// touch its memory ([`Stream::drain`]; never for a wait, nor for what is queued behind one).
pub(crate) fn drain(dev: i32) {
    let wait = drain_wait();
    if wait.is_zero() {
        return;
    }
    let deadline = Instant::now() + wait;
    for s in streams(dev) {
        s.drain(dev, deadline);
    }
}

/// [`drain`] of the current device, when the thread has a context.
pub(crate) fn drain_current() {
    if let Ok((dev, _)) = context::current_ids() {
        drain(dev);
    }
}

/// `aclrtSynchronizeDevice*`: waits for every stream of the current device.
pub(crate) fn synchronize(timeout: Option<Duration>) -> R {
    let (dev, _) = context::current_ids()?;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut first_err = None;
    for s in streams(dev) {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        match s.synchronize(left, RT_STREAM_SYNC_TIMEOUT) {
            Ok(()) => {}
            Err(f) if f.code == RT_STREAM_SYNC_TIMEOUT => return Err(f),
            Err(f) => {
                first_err.get_or_insert(f);
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// Whether device `from` enabled peer access to device `to` (one-way).
pub(crate) fn peer_enabled(from: i32, to: i32) -> bool {
    DEVICES.lock().peers.contains(&(from, to))
}

/// Enables peer access from `from` to `to` (an import that asks for it).
pub(crate) fn enable_peer_from(from: i32, to: i32) -> R {
    DEVICES.lock().peers.insert((from, to));
    Ok(())
}

/// `aclrtDeviceEnablePeerAccess` / `aclrtDeviceDisablePeerAccess` from the current device.
pub(crate) fn set_peer(peer: i32, enable: bool) -> R {
    let (dev, _) = context::current_ids()?;
    check(peer)?;
    if peer == dev {
        return fail(
            RT_PARAM_INVALID,
            format!("peerDeviceId {peer} is the current device"),
        );
    }
    let mut d = DEVICES.lock();
    if enable {
        d.peers.insert((dev, peer));
        Ok(())
    } else if d.peers.remove(&(dev, peer)) {
        Ok(())
    } else {
        fail(
            RT_PARAM_INVALID,
            format!("peer access from device {dev} to device {peer} was not enabled"),
        )
    }
}

/// Peer access for an import made on `dev` of memory (or a notify) of `peer`: `enable` turns
/// it on; otherwise it must have been enabled (107000).
pub(crate) fn import_peer(dev: i32, peer: i32, enable: bool) -> R {
    if dev == peer || peer < 0 || check(peer).is_err() {
        return Ok(());
    }
    if enable {
        return enable_peer_from(dev, peer);
    }
    if !peer_enabled(dev, peer) {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "the export lives on device {peer} and this process imports it on device {dev} \
                 without peer access (aclrtDeviceEnablePeerAccess, or the import's peer-access \
                 flag)"
            ),
        );
    }
    Ok(())
}

/// Live counts now, for one device or the whole process.
pub(crate) fn live_report(dev: Option<i32>) -> LeakReport {
    let on = |d: i32| dev.is_none_or(|x| x == d);
    let mut r = LeakReport {
        device: dev,
        streams: registry::<Stream>().count(|s| !s.is_default && on(s.device)),
        contexts: registry::<Context>().count(|c| !c.is_default && on(c.device)),
        ..LeakReport::default()
    };
    hooks::live(dev, &mut r);
    r
}
