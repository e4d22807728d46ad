//! The runtime: initialisation, devices with reference counts, contexts (current per thread),
//! and the registries of stream and event handles.

use crate::callback;
use crate::config;
use crate::error::*;
use crate::event::Event;
use crate::leak::{self, LeakReport};
use crate::memory;
use crate::stream::{CtxFailure, Stream};
use crate::stream_state;
use crate::sync::lock;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Duration;

/// Streams per device beyond which creation fails with 207008 (hardware has a similar limit).
const MAX_STREAMS_PER_DEVICE: usize = 2048;
/// Events per device beyond which creation fails with 207007.
const MAX_EVENTS_PER_DEVICE: usize = 65536;

/// A context.
#[derive(Debug)]
pub(crate) struct Context {
    pub handle: usize,
    pub device: i32,
    /// The incarnation of the device (a released and re-opened device gets a new one).
    pub epoch: u64,
    pub is_default: bool,
    alive: AtomicBool,
    pub default_stream: Arc<Stream>,
    /// The failure state shared by the context's streams (STOP mode).
    failure: Arc<CtxFailure>,
}

impl Context {
    pub(crate) fn alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }
}

#[derive(Debug)]
struct DeviceSlot {
    epoch: u64,
    refs: u64,
    default_ctx: Option<Arc<Context>>,
    user_ctxs: HashSet<usize>,
}

#[derive(Debug, Default)]
pub(crate) struct Runtime {
    initialized: bool,
    init_refs: u64,
    devices: HashMap<i32, DeviceSlot>,
    contexts: HashMap<usize, Arc<Context>>,
    streams: HashMap<usize, Arc<Stream>>,
    events: HashMap<usize, Arc<Event>>,
    peers: HashSet<(i32, i32)>,
}

static RT: LazyLock<Mutex<Runtime>> = LazyLock::new(|| Mutex::new(Runtime::default()));
static NEXT: AtomicUsize = AtomicUsize::new(1);
static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

impl DeviceSlot {
    fn new() -> DeviceSlot {
        DeviceSlot {
            epoch: NEXT_EPOCH.fetch_add(1, Ordering::Relaxed),
            refs: 0,
            default_ctx: None,
            user_ctxs: HashSet::new(),
        }
    }
}

fn rt() -> MutexGuard<'static, Runtime> {
    lock(&RT)
}

/// A fresh handle value, never reused (so a destroyed handle is always recognised).
pub(crate) fn new_handle() -> usize {
    0x0ac1_0000_0000 + NEXT.fetch_add(1, Ordering::Relaxed) * 0x40
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

fn no_context<T>() -> R<T> {
    fail(
        RT_CONTEXT_NULL,
        "the calling thread has no current context (call aclrtSetDevice or aclrtCreateContext \
         first)",
    )
}

/// The calling thread's current context.
pub(crate) fn current() -> R<Arc<Context>> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(ctx) if ctx.alive() => Ok(Arc::clone(ctx)),
        _ => no_context(),
    })
}

/// Fails with the stored error when the calling thread's current context failed in STOP mode
/// (queries the runtime refuses afterwards); no current context passes.
pub(crate) fn check_current_failure() -> R {
    match current().ok().and_then(|c| c.failure.stored()) {
        None => Ok(()),
        Some(f) => Err(Fail {
            code: f.code,
            msg: format!(
                "the current context is in STOP failure mode and a task failed ({})",
                f.msg
            ),
        }),
    }
}

/// The device and context handle of the calling thread's current context, without cloning.
#[inline]
pub(crate) fn current_ids() -> R<(i32, usize)> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(ctx) if ctx.alive() => Ok((ctx.device, ctx.handle)),
        _ => no_context(),
    })
}

fn set_current(ctx: Option<Arc<Context>>) {
    CURRENT.with(|c| *c.borrow_mut() = ctx);
}

/// The device and its incarnation of the calling thread's current context (for allocations).
pub(crate) fn current_device_epoch() -> R<(i32, u64)> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(ctx) if ctx.alive() => Ok((ctx.device, ctx.epoch)),
        _ => no_context(),
    })
}

/// Number of emulated devices.
pub(crate) fn device_count() -> u32 {
    config::with(|c| c.devices)
}

/// Whether the device is open in this process (set by `aclrtSetDevice` or holding a context).
pub(crate) fn device_is_open(id: i32) -> bool {
    rt().devices
        .get(&id)
        .is_some_and(|s| s.refs > 0 || s.default_ctx.is_some() || !s.user_ctxs.is_empty())
}

/// Checks a device id.
pub(crate) fn check_device(id: i32) -> R {
    let n = device_count();
    if id < 0 || id as u32 >= n {
        return fail(
            RT_INVALID_DEVICEID,
            format!("device id {id} is outside [0, {n}) (ASCENDCL_EMU_DEVICES sets the count)"),
        );
    }
    Ok(())
}

fn make_context(rt: &mut Runtime, device: i32, is_default: bool) -> Arc<Context> {
    let epoch = rt.devices.get(&device).map_or(0, |s| s.epoch);
    let handle = new_handle();
    let failure = Arc::new(CtxFailure::default());
    let stream = Stream::new(
        new_handle(),
        handle,
        device,
        true,
        0,
        0,
        Arc::clone(&failure),
    );
    rt.streams.insert(stream.handle, Arc::clone(&stream));
    let ctx = Arc::new(Context {
        handle,
        device,
        epoch,
        is_default,
        alive: AtomicBool::new(true),
        default_stream: stream,
        failure,
    });
    rt.contexts.insert(handle, Arc::clone(&ctx));
    ctx
}

/// `aclInit`.
pub(crate) fn init(config_path: Option<&str>) -> R {
    // aclInit and aclFinalize run one at a time, their callbacks included (which run without
    // the runtime's lock, so that they may call the runtime; not aclInit or aclFinalize).
    let _serial = lock(&LIFECYCLE);
    let mut rt = rt();
    if rt.initialized {
        rt.init_refs += 1;
        return fail(
            REPEAT_INITIALIZE,
            "aclInit was already called (the repeat is counted for aclFinalizeReference)",
        );
    }
    drop(rt);
    let mut config = String::new();
    let file = config_path.filter(|p| !p.is_empty());
    if let Some(p) = file {
        config = std::fs::read_to_string(p).map_err(|e| Fail {
            code: INVALID_FILE,
            msg: format!("cannot read the configuration file {p:?}: {e}"),
        })?;
        if !config.trim().is_empty() && !crate::json::is_valid(&config) {
            return fail(
                PARSE_FILE,
                format!("the configuration file {p:?} is not valid JSON"),
            );
        }
    }
    crate::init_callbacks::on_init(&config, file.is_some())?;
    let mut rt = self::rt();
    rt.initialized = true;
    rt.init_refs = 1;
    Ok(())
}

/// Serialises `aclInit` and `aclFinalize` (with their callbacks).
static LIFECYCLE: Mutex<()> = Mutex::new(());

/// `aclFinalize` (`reference` false) or `aclFinalizeReference`; returns the remaining count.
pub(crate) fn finalize(reference: bool) -> R<u64> {
    let _serial = lock(&LIFECYCLE);
    let mut rt = rt();
    if !rt.initialized {
        return fail(
            REPEAT_FINALIZE,
            "the runtime is not initialised (aclFinalize was already called, or aclInit never was)",
        );
    }
    if reference && rt.init_refs > 1 {
        rt.init_refs -= 1;
        return Ok(rt.init_refs);
    }
    drop(rt);
    // A failing finalize callback fails the call and the runtime stays initialised.
    crate::init_callbacks::on_finalize()?;
    let mut rt = self::rt();
    rt.initialized = false;
    rt.init_refs = 0;
    let devices: Vec<i32> = rt.devices.keys().copied().collect();
    drop(rt);
    let mut total = LeakReport::default();
    for d in devices {
        let r = release_device(self::rt(), d, true, false);
        total.allocations += r.allocations;
        total.allocation_bytes += r.allocation_bytes;
        total.streams += r.streams;
        total.events += r.events;
        total.contexts += r.contexts;
    }
    let (pinned, registered) = memory::write().release_host();
    total.host_allocations = pinned;
    total.host_registrations = registered;
    // Events of devices that were never opened through a device slot.
    let mut rt = self::rt();
    total.events += rt.events.len();
    rt.events.clear();
    rt.peers.clear();
    drop(rt);
    callback::clear();
    crate::limits::clear();
    crate::kernel::clear();
    leak::keep(total, "aclFinalize");
    Ok(0)
}

/// `aclrtSetDevice`.
pub(crate) fn set_device(id: i32) -> R {
    check_device(id)?;
    let mut guard = rt();
    let rt = &mut *guard;
    let slot = rt.devices.entry(id).or_insert_with(DeviceSlot::new);
    slot.refs += 1;
    let (ctx, created) = match &slot.default_ctx {
        Some(c) => (Arc::clone(c), false),
        None => {
            let c = make_context(rt, id, true);
            rt.devices.get_mut(&id).expect("slot").default_ctx = Some(Arc::clone(&c));
            (c, true)
        }
    };
    let default_stream = ctx.default_stream.handle;
    set_current(Some(ctx));
    drop(guard);
    if created {
        stream_state::created(default_stream);
    }
    Ok(())
}

/// `aclrtResetDevice` / `aclrtResetDeviceForce`.
pub(crate) fn reset_device(id: i32, force: bool) -> R {
    check_device(id)?;
    let mut rt = rt();
    let Some(slot) = rt.devices.get_mut(&id) else {
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
            drop(rt);
            if let Some(c) = ctx {
                destroy_context_now(&c, false);
            }
            return Ok(());
        }
    }
    release_device(rt, id, force, true);
    Ok(())
}

/// Tears down every context, stream and event of a device and frees its memory; reports what
/// was still alive. Takes the runtime lock from the caller, so that the decision to release and
/// the removal of the device happen in one critical section.
fn release_device(
    mut rt: MutexGuard<'static, Runtime>,
    id: i32,
    force: bool,
    report: bool,
) -> LeakReport {
    let Some(slot) = rt.devices.remove(&id) else {
        return LeakReport {
            device: Some(id),
            ..LeakReport::default()
        };
    };
    let mut ctxs: Vec<Arc<Context>> = slot.default_ctx.into_iter().collect();
    for h in &slot.user_ctxs {
        if let Some(c) = rt.contexts.get(h) {
            ctxs.push(Arc::clone(c));
        }
    }
    let ctx_ids: HashSet<usize> = ctxs.iter().map(|c| c.handle).collect();
    for c in &ctxs {
        c.alive.store(false, Ordering::Release);
        rt.contexts.remove(&c.handle);
    }
    let streams: Vec<Arc<Stream>> = rt
        .streams
        .values()
        .filter(|s| ctx_ids.contains(&s.ctx))
        .cloned()
        .collect();
    for s in &streams {
        rt.streams.remove(&s.handle);
    }
    let events: Vec<usize> = rt
        .events
        .values()
        .filter(|e| e.device == id)
        .map(|e| e.handle)
        .collect();
    for e in &events {
        rt.events.remove(e);
    }
    // Access this device enabled goes with it; access other devices enabled towards it stays:
    // it belongs to the device that enabled it.
    rt.peers.retain(|(from, _)| *from != id);
    drop(rt);
    crate::notify::release_device(id);
    crate::kernel_run::forget_device(id);
    for s in &streams {
        stream_state::destroying(s.handle);
        callback::stream_gone(s.handle);
        crate::limits::reset_stream(s.handle);
        crate::allocator::forget(s.handle);
        s.close(force);
    }
    // Only this incarnation's memory: the device may already have been set again.
    let (allocations, bytes) = memory::write().release_device(id, slot.epoch);
    let r = LeakReport {
        device: Some(id),
        allocations,
        allocation_bytes: bytes,
        streams: streams.iter().filter(|s| !s.is_default).count(),
        events: events.len(),
        contexts: slot.user_ctxs.len(),
        ..LeakReport::default()
    };
    if report {
        leak::keep(
            r,
            if force {
                "aclrtResetDeviceForce"
            } else {
                "aclrtResetDevice"
            },
        );
    }
    r
}

/// Destroys one context and its streams (waiting for their work unless `force`).
fn destroy_context_now(ctx: &Arc<Context>, force: bool) {
    let mut rt = rt();
    ctx.alive.store(false, Ordering::Release);
    rt.contexts.remove(&ctx.handle);
    let streams: Vec<Arc<Stream>> = rt
        .streams
        .values()
        .filter(|s| s.ctx == ctx.handle)
        .cloned()
        .collect();
    for s in &streams {
        rt.streams.remove(&s.handle);
    }
    drop(rt);
    for s in &streams {
        stream_state::destroying(s.handle);
        callback::stream_gone(s.handle);
        crate::limits::reset_stream(s.handle);
        crate::allocator::forget(s.handle);
        s.close(force);
    }
}

/// `aclrtGetDevice`.
pub(crate) fn get_device() -> R<i32> {
    current_ids().map(|(d, _)| d)
}

/// `aclrtCreateContext`: the new context becomes current.
pub(crate) fn create_context(device: i32) -> R<usize> {
    check_device(device)?;
    let mut rt = rt();
    rt.devices.entry(device).or_insert_with(DeviceSlot::new);
    let ctx = make_context(&mut rt, device, false);
    rt.devices
        .get_mut(&device)
        .expect("slot")
        .user_ctxs
        .insert(ctx.handle);
    let h = ctx.handle;
    let default_stream = ctx.default_stream.handle;
    set_current(Some(ctx));
    drop(rt);
    stream_state::created(default_stream);
    Ok(h)
}

/// `aclrtDestroyContext`.
pub(crate) fn destroy_context(h: usize) -> R {
    let rt = rt();
    let Some(ctx) = rt.contexts.get(&h).cloned() else {
        return fail(
            RT_INVALID_HANDLE,
            format!("context {h:#x} is not a live context"),
        );
    };
    if ctx.is_default {
        return fail(
            RT_PARAM_INVALID,
            format!("context {h:#x} is a device's default context; aclrtResetDevice releases it"),
        );
    }
    drop(rt);
    destroy_context_now(&ctx, false);
    let mut rt = self::rt();
    let release = match rt.devices.get_mut(&ctx.device) {
        Some(slot) if slot.epoch == ctx.epoch => {
            slot.user_ctxs.remove(&h);
            slot.refs == 0 && slot.user_ctxs.is_empty()
        }
        _ => false,
    };
    if release {
        release_device(rt, ctx.device, false, true);
    } else {
        drop(rt);
    }
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_some_and(|x| x.handle == h) {
            *c = None;
        }
    });
    Ok(())
}

/// `aclrtSetCurrentContext`.
pub(crate) fn set_current_context(h: usize) -> R {
    let ctx = rt().contexts.get(&h).cloned();
    match ctx {
        Some(c) => {
            set_current(Some(c));
            Ok(())
        }
        None => fail(
            RT_INVALID_HANDLE,
            format!("context {h:#x} is not a live context"),
        ),
    }
}

/// `aclrtGetCurrentContext`.
pub(crate) fn current_context() -> R<usize> {
    current_ids().map(|(_, h)| h)
}

/// Resolves a stream handle; NULL is the current context's default stream.
pub(crate) fn stream(h: usize) -> R<Arc<Stream>> {
    if h == 0 {
        return current().map(|c| Arc::clone(&c.default_stream));
    }
    match rt().streams.get(&h) {
        Some(s) => Ok(Arc::clone(s)),
        None => fail(
            RT_INVALID_HANDLE,
            format!("stream {h:#x} is not a live stream (destroyed, or not a stream handle)"),
        ),
    }
}

/// Checks that `s` belongs to the calling thread's current context.
pub(crate) fn check_stream_context(s: &Stream) -> R {
    let (_, ctx) = current_ids()?;
    if s.ctx != ctx {
        return fail(
            RT_STREAM_CONTEXT,
            format!(
                "stream {:#x} belongs to context {:#x}, not to the current context {ctx:#x}",
                s.handle, s.ctx
            ),
        );
    }
    Ok(())
}

/// `aclrtCreateStream*`.
pub(crate) fn create_stream(priority: u32, flags: u32) -> R<usize> {
    let ctx = current()?;
    let mut rt = rt();
    let n = rt
        .streams
        .values()
        .filter(|s| s.device == ctx.device)
        .count();
    if n >= MAX_STREAMS_PER_DEVICE {
        return fail(
            RT_NO_STREAM_RESOURCE,
            format!("device {} already has {n} streams", ctx.device),
        );
    }
    let s = Stream::new(
        new_handle(),
        ctx.handle,
        ctx.device,
        false,
        priority,
        flags,
        Arc::clone(&ctx.failure),
    );
    let h = s.handle;
    rt.streams.insert(h, s);
    drop(rt);
    stream_state::created(h);
    Ok(h)
}

/// `aclrtDestroyStream*`.
pub(crate) fn destroy_stream(h: usize, force: bool) -> R {
    let rt = rt();
    let Some(s) = rt.streams.get(&h).cloned() else {
        return fail(
            RT_INVALID_HANDLE,
            format!("stream {h:#x} is not a live stream"),
        );
    };
    if s.is_default {
        return fail(
            RT_PARAM_INVALID,
            format!("stream {h:#x} is a default stream; it lives as long as its context"),
        );
    }
    s.not_capturing()?;
    if let Some(m) = s.bound_model() {
        return fail(
            RT_STREAM_MODEL,
            format!(
                "stream {h:#x} is bound to model {:#x} (aclmdlRIUnbindStream or aclmdlRIDestroy \
                 first)",
                m.handle
            ),
        );
    }
    drop(rt);
    stream_state::destroying(h);
    if self::rt().streams.remove(&h).is_none() {
        return fail(
            RT_INVALID_HANDLE,
            format!("stream {h:#x} was destroyed by another call meanwhile"),
        );
    }
    callback::stream_gone(h);
    crate::limits::reset_stream(h);
    crate::allocator::forget(h);
    s.close(force);
    Ok(())
}

/// The number of streams the device can still create, and of events.
pub(crate) fn available(dev: i32) -> (u32, u32) {
    let rt = rt();
    let streams = rt.streams.values().filter(|s| s.device == dev).count();
    let events = rt.events.values().filter(|e| e.device == dev).count();
    (
        MAX_STREAMS_PER_DEVICE.saturating_sub(streams) as u32,
        MAX_EVENTS_PER_DEVICE.saturating_sub(events) as u32,
    )
}

/// Every stream of a device.
pub(crate) fn device_streams(dev: i32) -> Vec<Arc<Stream>> {
    rt().streams
        .values()
        .filter(|s| s.device == dev)
        .cloned()
        .collect()
}

/// `aclrtSynchronizeDevice*`: waits for every stream of the current device.
pub(crate) fn synchronize_device(timeout: Option<Duration>) -> R {
    let (dev, _) = current_ids()?;
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    let mut first_err = None;
    for s in device_streams(dev) {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
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

/// `aclrtCreateEvent*`; `ex` for `aclrtCreateEventExWithFlag`.
pub(crate) fn create_event(flags: u32, timing: bool, ex: bool) -> R<usize> {
    let (dev, _) = current_ids()?;
    let mut rt = rt();
    let n = rt.events.values().filter(|e| e.device == dev).count();
    if n >= MAX_EVENTS_PER_DEVICE {
        return fail(
            RT_NO_EVENT_RESOURCE,
            format!("device {dev} already has {n} events"),
        );
    }
    let h = new_handle();
    let mut ev = Event::new(h, dev, flags, timing);
    if ex {
        ev = ev.ex();
    }
    if flags & IPC_EVENT != 0 {
        let (base, _) = crate::notify::alloc_pair()?;
        ev = ev.with_shared(crate::event::Shared { base, own: true });
    }
    rt.events.insert(h, Arc::new(ev));
    Ok(h)
}

/// `ACL_EVENT_IPC`: an event other processes may open.
const IPC_EVENT: u32 = 0x40;

/// Registers an event opened from another process's IPC event handle (on the current device).
pub(crate) fn insert_opened_event(shared: crate::event::Shared) -> R<usize> {
    let (dev, _) = current_ids()?;
    let h = new_handle();
    let ev = Event::new(h, dev, IPC_EVENT, false).with_shared(shared);
    rt().events.insert(h, Arc::new(ev));
    Ok(h)
}

/// Resolves an event handle.
pub(crate) fn event(h: usize) -> R<Arc<Event>> {
    match rt().events.get(&h) {
        Some(e) => Ok(Arc::clone(e)),
        None => fail(
            RT_INVALID_HANDLE,
            format!("event {h:#x} is not a live event (destroyed, or not an event handle)"),
        ),
    }
}

/// `aclrtDestroyEvent`: does not wait for records in flight.
pub(crate) fn destroy_event(h: usize) -> R {
    match rt().events.remove(&h) {
        Some(ev) => {
            if ev.shared.is_some_and(|s| s.own) {
                // Later opens fail; processes that opened it keep their view of the words.
                crate::ipc::close_owner(crate::ipc::What::Event, h as u64);
            }
            Ok(())
        }
        None => fail(
            RT_INVALID_HANDLE,
            format!("event {h:#x} is not a live event"),
        ),
    }
}

/// Whether device `from` enabled peer access to device `to` (one-way).
pub(crate) fn peer_enabled(from: i32, to: i32) -> bool {
    rt().peers.contains(&(from, to))
}

/// Enables peer access from `from` to `to` (an import that asks for it).
pub(crate) fn enable_peer_from(from: i32, to: i32) -> R {
    rt().peers.insert((from, to));
    Ok(())
}

/// `aclrtDeviceEnablePeerAccess` / `aclrtDeviceDisablePeerAccess` from the current device.
pub(crate) fn set_peer(peer: i32, enable: bool) -> R {
    let (dev, _) = current_ids()?;
    check_device(peer)?;
    if peer == dev {
        return fail(
            RT_PARAM_INVALID,
            format!("peerDeviceId {peer} is the current device"),
        );
    }
    let mut rt = rt();
    if enable {
        rt.peers.insert((dev, peer));
        Ok(())
    } else if rt.peers.remove(&(dev, peer)) {
        Ok(())
    } else {
        fail(
            RT_PARAM_INVALID,
            format!("peer access from device {dev} to device {peer} was not enabled"),
        )
    }
}

/// Live counts now, for one device or the whole process.
pub(crate) fn live_report(dev: Option<i32>) -> LeakReport {
    let rt = rt();
    let on = |d: i32| dev.is_none_or(|x| x == d);
    let streams = rt
        .streams
        .values()
        .filter(|s| !s.is_default && on(s.device))
        .count();
    let events = rt.events.values().filter(|e| on(e.device)).count();
    let contexts = rt
        .contexts
        .values()
        .filter(|c| !c.is_default && on(c.device))
        .count();
    drop(rt);
    let (allocations, bytes, pinned, registered) = memory::read().counts(dev);
    LeakReport {
        device: dev,
        allocations,
        allocation_bytes: bytes,
        host_allocations: if dev.is_none() { pinned } else { 0 },
        host_registrations: if dev.is_none() { registered } else { 0 },
        streams,
        events,
        contexts,
    }
}

/// The current reference count of a device (0 when not set).
pub(crate) fn device_refs(dev: i32) -> u64 {
    rt().devices.get(&dev).map_or(0, |s| s.refs)
}
