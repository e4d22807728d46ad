//! Streams: in-order queues of device work.
//!
//! A [`Stream`] is a reference-counted handle that keeps the [`Device`] or [`Context`] it was
//! created in alive. Work is enqueued on it asynchronously: copies, memsets and kernel launches
//! on borrowed memory through [`Stream::scope`] (sound: the scope waits for the stream before the
//! borrows end) or the `unsafe` unchecked calls; host closures through
//! [`Stream::launch_host_fn`].

use crate::context::Context;
use crate::copy::{CopyDest, CopySource};
use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::host_fn::{self, HostFnHandle};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

bitflags::bitflags! {
    /// Stream creation flags (`ACL_STREAM_*`), for
    /// [`Device::create_stream_with`](crate::Device::create_stream_with).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct StreamFlags: u32 {
        /// `ACL_STREAM_FAST_LAUNCH`
        const FAST_LAUNCH = sys::ACL_STREAM_FAST_LAUNCH;
        /// `ACL_STREAM_FAST_SYNC`
        const FAST_SYNC = sys::ACL_STREAM_FAST_SYNC;
        /// `ACL_STREAM_PERSISTENT`
        const PERSISTENT = sys::ACL_STREAM_PERSISTENT;
        /// `ACL_STREAM_HUGE`
        const HUGE = sys::ACL_STREAM_HUGE;
        /// `ACL_STREAM_CPU_SCHEDULE`
        const CPU_SCHEDULE = sys::ACL_STREAM_CPU_SCHEDULE;
        /// `ACL_STREAM_DEVICE_USE_ONLY`
        const DEVICE_USE_ONLY = sys::ACL_STREAM_DEVICE_USE_ONLY;
    }
}

raw_enum! {
    /// Whether a stream's work is done (`aclrtStreamStatus`, from [`Stream::query`]).
    pub enum StreamStatus: sys::aclrtStreamStatus {
        /// `ACL_STREAM_STATUS_COMPLETE`
        Complete = sys::ACL_STREAM_STATUS_COMPLETE,
        /// `ACL_STREAM_STATUS_NOT_READY`
        NotReady = sys::ACL_STREAM_STATUS_NOT_READY,
        /// `ACL_STREAM_STATUS_RESERVED`
        Reserved = sys::ACL_STREAM_STATUS_RESERVED,
    }
}

raw_enum! {
    /// What a stream does after a task fails (`aclrtSetStreamFailureMode`).
    pub enum FailureMode: u64 {
        /// `ACL_CONTINUE_ON_FAILURE` (the default): later tasks still run.
        Continue = sys::ACL_CONTINUE_ON_FAILURE,
        /// `ACL_STOP_ON_FAILURE`: the stream stops at the first failure.
        Stop = sys::ACL_STOP_ON_FAILURE,
    }
}

/// State shared between a stream and the host functions launched on it.
#[derive(Default)]
pub(crate) struct StreamShared {
    panicked: AtomicBool,
    message: Mutex<Option<String>>,
    /// Host functions launched on the stream, possibly not run yet (pruned as they finish).
    pending: Mutex<Vec<Weak<host_fn::Payload>>>,
    /// Held while a host function is launched (the runtime call and the entry in `pending`)
    /// and while the stream is aborted (the runtime call and the take of `pending`), so that the
    /// functions an abort drops are exactly those the runtime discarded.
    launching: Mutex<()>,
    /// How many times [`Stream::abort`] was called (counted before the runtime discards the
    /// work): a scope or submission that sees it move reports its work as discarded.
    pub(crate) aborts: AtomicU64,
    /// Held by [`Stream::stop`] until [`Stream::abort`]: nothing queued on it runs.
    pub(crate) stopped: AtomicBool,
}

impl std::fmt::Debug for StreamShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamShared")
            .field("panicked", &self.panicked)
            .finish_non_exhaustive()
    }
}

impl StreamShared {
    /// Remembers a launched host function. Finished ones are pruned whenever the list is full,
    /// so the cost stays amortised O(1).
    pub(crate) fn track(&self, p: Weak<host_fn::Payload>) {
        let mut v = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() == v.capacity() {
            v.retain(|w| w.strong_count() > 0);
        }
        v.push(p);
    }

    /// Holds off aborts of the stream while a host function is launched. On a runtime callback
    /// thread it does not wait: an abort in progress may be waiting for that very callback, so
    /// the launch is refused instead (the runtime forbids launching from callbacks anyway).
    pub(crate) fn launching(&self) -> Result<std::sync::MutexGuard<'_, ()>> {
        if !crate::deferred::in_callback() {
            return Ok(self.launching.lock().unwrap_or_else(|p| p.into_inner()));
        }
        match self.launching.try_lock() {
            Ok(g) => Ok(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Err(Error::argument(
                "aclrtLaunchHostFunc",
                "the stream is being aborted, and a runtime callback must not wait for that \
                 (nor launch work: the runtime forbids it)",
            )),
        }
    }

    /// Holds off launches of host functions while the stream is aborted.
    pub(crate) fn aborting(&self) -> std::sync::MutexGuard<'_, ()> {
        self.launching.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn take_pending(&self) -> Vec<Weak<host_fn::Payload>> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn record_panic(&self, message: String) {
        let mut m = self.message.lock().unwrap_or_else(|p| p.into_inner());
        m.get_or_insert(message);
        self.panicked.store(true, Ordering::Release);
    }

    /// Takes a recorded host-function panic as an error.
    pub(crate) fn take_panic(&self) -> Result<()> {
        if !self.panicked.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let m = self
            .message
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        Err(Error::HostFnPanicked { message: m })
    }
}

/// What a stream keeps alive: the device or the context it was created in.
#[derive(Debug, Clone)]
pub(crate) enum Owner {
    Device(Device),
    Context(Context),
}

impl From<&Device> for Owner {
    fn from(d: &Device) -> Owner {
        Owner::Device(d.clone())
    }
}

impl From<&Context> for Owner {
    fn from(c: &Context) -> Owner {
        Owner::Context(c.clone())
    }
}

impl Owner {
    fn context(&self) -> sys::aclrtContext {
        match self {
            Owner::Device(d) => d.raw_context(),
            Owner::Context(c) => c.as_raw(),
        }
    }

    fn device(&self) -> &Device {
        match self {
            Owner::Device(d) => d,
            Owner::Context(c) => c.device(),
        }
    }

    /// Upgradable while the context lives (see [`Context::liveness`]).
    fn liveness(&self) -> std::sync::Weak<dyn std::any::Any + Send + Sync> {
        match self {
            Owner::Device(d) => {
                let strong: Arc<dyn std::any::Any + Send + Sync> = d.inner.clone();
                Arc::downgrade(&strong)
            }
            Owner::Context(c) => c.liveness(),
        }
    }
}

/// A stream (`aclrtCreateStreamWithConfig`; destroyed with `aclrtDestroyStream` when its last
/// handle goes).
///
/// Cheap to clone, `Send + Sync`, `'static`. It keeps its device (or context) alive. Several
/// threads may enqueue on one stream: the runtime serialises the enqueues, and the order between
/// threads is theirs to arrange, as with one stream shared by threads in C. Every call makes the
/// stream's context current on the calling thread first.
///
/// | operation | C function |
/// |---|---|
/// | [`Device::create_stream`](crate::Device::create_stream), [`Device::create_stream_with`](crate::Device::create_stream_with) | `aclrtCreateStreamWithConfig` |
/// | drop of the last handle, [`Stream::destroy`] | `aclrtDestroyStream` |
/// | [`Stream::destroy_force`] | `aclrtDestroyStreamForce` |
/// | [`Stream::synchronize`] | `aclrtSynchronizeStream` |
/// | [`Stream::synchronize_timeout`] | `aclrtSynchronizeStreamWithTimeout` |
/// | [`Stream::query`] | `aclrtStreamQuery` |
/// | [`Stream::set_failure_mode`] | `aclrtSetStreamFailureMode` |
/// | [`Stream::priority`], [`Stream::flags`] | `aclrtStreamGetPriority`, `aclrtStreamGetFlags` |
/// | [`Stream::wait_event`] | `aclrtStreamWaitEvent` |
/// | [`Stream::wait_event_timeout`] | `aclrtStreamWaitEventWithTimeout` |
/// | [`Stream::config`] | `aclrtStreamGetId`, `aclrtStreamGetFlags`, `aclrtStreamGetPriority` |
/// | [`Stream::record_event`] | `aclrtRecordEvent` |
/// | [`Stream::launch_host_fn`] | `aclrtLaunchHostFunc` |
/// | [`Stream::id`], [`Stream::stop`], [`Stream::abort`] | `aclrtStreamGetId`, `aclrtStreamStop`, `aclrtStreamAbort` |
/// | [`Stream::failure_mode`], [`Stream::user_tag`], [`Stream::set_user_tag`], ... | `aclrtGetStreamAttribute`, `aclrtSetStreamAttribute` |
/// | [`Stream::res_limit`], [`Stream::set_res_limit`], [`Stream::reset_res_limits`], [`Stream::use_res_limits`] | `aclrt{Get,Set,Reset}StreamResLimit`, `aclrt{Use,Unuse}StreamResInCurrentThread` |
/// | [`Stream::scope`] | `aclrtMemcpyAsync`, `aclrtMemsetAsync`, `aclrtMemcpy2dAsync` |
#[derive(Debug, Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

#[derive(Debug)]
struct StreamInner {
    /// NULL once destroyed explicitly.
    raw: sys::aclrtStream,
    ctx: sys::aclrtContext,
    owner: Owner,
    shared: Arc<StreamShared>,
    /// Events of this stream's context that scopes record on it to order their other streams
    /// after it ([`crate::Scope`]); each is idle when it is here (its records reached, its
    /// waits done). Destroyed with the stream.
    events: Mutex<Vec<sys::aclrtEvent>>,
}

/// At most this many idle events are kept per stream; more are destroyed.
const POOLED_EVENTS: usize = 1024;

// SAFETY: a stream handle is a plain value the runtime accepts from any thread (enqueues on one
// stream are serialised by the runtime); every call makes the stream's context current first.
unsafe impl Send for StreamInner {}
// SAFETY: as above; `raw` and `ctx` are never mutated while shared, `shared` is synchronised.
unsafe impl Sync for StreamInner {}

/// Milliseconds for a `*WithTimeout` call: `None` waits forever (-1); durations are rounded up
/// to whole milliseconds and capped at `i32::MAX`.
pub(crate) fn timeout_ms(t: Option<Duration>) -> i32 {
    match t {
        None => -1,
        Some(d) => {
            let ms = d.as_nanos().div_ceil(1_000_000);
            i32::try_from(ms).unwrap_or(i32::MAX)
        }
    }
}

/// Seconds for `aclrtStreamWaitEventWithTimeout`: `None` waits for ever (0); durations are
/// rounded up to whole seconds (at least one) and capped at `i32::MAX`.
pub(crate) fn timeout_secs(t: Option<Duration>) -> i32 {
    match t {
        None => 0,
        Some(d) => {
            let s = d.as_nanos().div_ceil(1_000_000_000).max(1);
            i32::try_from(s).unwrap_or(i32::MAX)
        }
    }
}

impl Stream {
    /// A stream created by the caller in `owner`'s context (made current), now owned.
    pub(crate) fn adopt(owner: Owner, raw: sys::aclrtStream) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                raw,
                ctx: owner.context(),
                owner,
                shared: Arc::default(),
                events: Mutex::default(),
            }),
        }
    }

    pub(crate) fn create(owner: Owner, flags: StreamFlags, priority: u32) -> Result<Stream> {
        let ctx = owner.context();
        current::ensure_current(ctx)?;
        // SAFETY: a valid out-pointer and plain values.
        let raw =
            raw::out(|s| unsafe { raw::aclrtCreateStreamWithConfig(s, priority, flags.bits()) })?;
        Ok(Stream {
            inner: Arc::new(StreamInner {
                raw,
                ctx,
                owner,
                shared: Arc::default(),
                events: Mutex::default(),
            }),
        })
    }

    /// The raw `aclrtStream`, for FFI (kernel launches). The stream stays owned by `self`.
    #[inline]
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.inner.raw
    }

    /// The context the stream belongs to.
    pub fn raw_context(&self) -> sys::aclrtContext {
        self.inner.ctx
    }

    /// The id of the device the stream belongs to.
    pub fn device_id(&self) -> i32 {
        self.inner.owner.device().id()
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        self.inner.owner.device()
    }

    pub(crate) fn shared(&self) -> &Arc<StreamShared> {
        &self.inner.shared
    }

    /// An idle event of the stream's context, from the stream's pool or new
    /// (`aclrtCreateEvent`), for a scope to record on this stream.
    pub(crate) fn take_event(&self) -> Result<sys::aclrtEvent> {
        let pooled = self
            .inner
            .events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        if let Some(e) = pooled {
            return Ok(e);
        }
        self.make_current()?;
        let mut e: sys::aclrtEvent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the stream's context is current.
        unsafe { crate::raw::aclrtCreateEvent(&mut e) }?;
        Ok(e)
    }

    /// Gives idle events taken with [`Stream::take_event`] back to the pool (no runtime call,
    /// so a runtime callback may do it); beyond the pool's size they are destroyed.
    pub(crate) fn give_events(&self, events: impl IntoIterator<Item = sys::aclrtEvent>) {
        let mut pool = self.inner.events.lock().unwrap_or_else(|p| p.into_inner());
        let mut extra = Vec::new();
        for e in events {
            if pool.len() < POOLED_EVENTS {
                pool.push(e);
            } else {
                extra.push(Raw(e));
            }
        }
        drop(pool);
        if extra.is_empty() {
            return;
        }
        let (ctx, owner) = (Raw(self.inner.ctx), self.inner.owner.clone());
        deferred::release(move || {
            let _ = current::ensure_current(ctx.get());
            let r = destroy_events(extra.iter().map(Raw::get));
            drop(owner);
            r
        });
    }

    /// Whether the stream's context is in STOP failure mode as far as this crate knows
    /// ([`Stream::set_failure_mode`] on any of its streams).
    pub(crate) fn stop_mode(&self) -> bool {
        stop_mode::is_set(self.inner.ctx)
    }

    /// The number of other handles on this stream (0: this is the only one).
    pub(crate) fn other_handles(&self) -> usize {
        Arc::strong_count(&self.inner).saturating_sub(1)
    }

    /// Makes the stream's context current on this thread if this crate did not already; raw FFI
    /// that enqueues work on [`Stream::as_raw`] calls this first.
    #[inline]
    pub fn make_current(&self) -> Result<()> {
        current::ensure_current(self.inner.ctx)
    }

    /// Blocks until all work on the stream is done (`aclrtSynchronizeStream`). A host function
    /// launched on the stream that panicked is reported here as [`Error::HostFnPanicked`].
    pub fn synchronize(&self) -> Result<()> {
        deferred::refuse_sync_on_callback("aclrtSynchronizeStream")?;
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { raw::aclrtSynchronizeStream(self.as_raw()) }?;
        self.inner.shared.take_panic()
    }

    /// As [`Stream::synchronize`], giving up after `timeout` (`None`: wait forever) with
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (`aclrtSynchronizeStreamWithTimeout`).
    pub fn synchronize_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        deferred::refuse_sync_on_callback("aclrtSynchronizeStreamWithTimeout")?;
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { raw::aclrtSynchronizeStreamWithTimeout(self.as_raw(), timeout_ms(timeout)) }?;
        self.inner.shared.take_panic()
    }

    /// Whether the stream's work is done, without blocking (`aclrtStreamQuery`).
    pub fn query(&self) -> Result<StreamStatus> {
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        let raw = raw::out(|st| unsafe { raw::aclrtStreamQuery(self.as_raw(), st) })?;
        StreamStatus::try_from(raw)
    }

    /// `query() == Complete`.
    pub fn is_complete(&self) -> Result<bool> {
        Ok(self.query()? == StreamStatus::Complete)
    }

    /// The stream's priority (`aclrtStreamGetPriority`; 0 is the highest).
    pub fn priority(&self) -> Result<u32> {
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        raw::out(|p| unsafe { raw::aclrtStreamGetPriority(self.as_raw(), p) })
    }

    /// The flags the stream was created with (`aclrtStreamGetFlags`); bits this crate does not
    /// name are kept.
    pub fn flags(&self) -> Result<StreamFlags> {
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        raw::out(|f| unsafe { raw::aclrtStreamGetFlags(self.as_raw(), f) })
            .map(StreamFlags::from_bits_retain)
    }

    /// Sets what the stream does after a failed task (`aclrtSetStreamFailureMode`; once per
    /// stream).
    pub fn set_failure_mode(&self, mode: FailureMode) -> Result<()> {
        self.make_current()?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { raw::aclrtSetStreamFailureMode(self.as_raw(), mode.into()) }?;
        if mode == FailureMode::Stop {
            stop_mode::set(self.inner.ctx, self.inner.owner.liveness());
        }
        Ok(())
    }

    /// Makes later work on this stream wait for `event` (recorded on any stream)
    /// (`aclrtStreamWaitEvent`).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        event.wait_on(self, None).map(drop)
    }

    /// As [`Stream::wait_event`], the waiting task failing after `timeout`
    /// (`aclrtStreamWaitEventWithTimeout`; whole seconds, rounded up; `None` waits for ever):
    /// the stream's next synchronisation then reports `ACL_ERROR_RT_TASK_TIMEOUT`. In the
    /// default failure mode the stream goes on with its later work after a timed-out wait.
    pub fn wait_event_timeout(&self, event: &Event, timeout: Option<Duration>) -> Result<()> {
        event.wait_on(self, Some(timeout_secs(timeout))).map(drop)
    }

    /// Records `event` on this stream (`aclrtRecordEvent`); same as [`Event::record`].
    pub fn record_event(&self, event: &Event) -> Result<()> {
        event.record(self)
    }

    /// Enqueues `f` to run on a runtime thread once the stream's earlier work is done
    /// (`aclrtLaunchHostFunc`); later work waits for it.
    ///
    /// A panic in `f` is caught at the FFI boundary; it is reported by the returned handle
    /// ([`HostFnHandle::wait`]) and by the stream's next [`synchronize`](Stream::synchronize).
    /// Like every callback of the runtime, `f` must not synchronise or launch work on this
    /// stream. Handles that `f` captures may be dropped there: their releases are handed to a
    /// release thread of this crate, because the runtime forbids freeing or destroying anything
    /// on its callback thread.
    pub fn launch_host_fn<F>(&self, f: F) -> Result<HostFnHandle>
    where
        F: FnOnce() + Send + 'static,
    {
        self.make_current()?;
        host_fn::launch(self, Box::new(f))
    }

    /// Enqueues an asynchronous copy without any lifetime checking (`aclrtMemcpyAsync`).
    /// The lengths and devices are still checked.
    ///
    /// # Safety
    /// Until the stream's work is done (a later synchronisation returned):
    /// * neither `dst` nor `src` may be freed, moved or reallocated;
    /// * the host must not write `src` nor read or write `dst`.
    ///
    /// [`Stream::scope`] is the safe form.
    pub unsafe fn copy_async_unchecked<D, S>(&self, dst: &mut D, src: &S) -> Result<()>
    where
        D: CopyDest + ?Sized,
        S: CopySource<Elem = D::Elem> + ?Sized,
    {
        self.make_current()?;
        let (d, s) = (dst.dest_region(), src.source_region());
        // Memory of another device than the stream's needs peer access (a copy between two
        // devices is refused below as well).
        for r in [d.location(), s.location()] {
            if let Some(m) = r.device()
                && !crate::peer::reachable(self.device_id(), m)
            {
                return Err(Error::argument(
                    "aclrtMemcpyAsync",
                    format!(
                        "the memory is on another device ({m}) than the stream's ({})",
                        self.device_id()
                    ),
                ));
            }
        }
        // SAFETY: the caller keeps both regions alive and untouched until the work is done.
        unsafe { crate::copy::copy_regions_async(d, s, self.as_raw(), false) }
    }

    /// Releases this handle. When it was the last one, the stream is destroyed now, after its
    /// work is done (`aclrtDestroyStream`); on failure it is still alive and comes back with the
    /// error ([`ReleaseError`]): retry, or drop it. Otherwise this returns `Ok` and the last
    /// handle destroys it.
    pub fn destroy(self) -> ReleaseResult<(), Self> {
        self.release(false)
    }

    /// Destroys the stream at once, discarding work that has not started
    /// (`aclrtDestroyStreamForce`). Host functions that had not run are dropped, and their
    /// [`HostFnHandle`]s report [`Error::HostFnDiscarded`].
    ///
    /// Discarding needs the only handle: while a clone is alive (another thread may be enqueuing
    /// on the stream, or waiting in a [`Stream::scope`]) it is refused with [`Error::Shared`] and
    /// this handle comes back unchanged inside the [`ReleaseError`]. A runtime failure gives it
    /// back as well: retry, or drop it.
    pub fn destroy_force(self) -> ReleaseResult<(), Self> {
        self.release(true)
    }

    fn release(self, force: bool) -> ReleaseResult<(), Self> {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(inner) if force => {
                let others = Arc::strong_count(&inner).saturating_sub(1);
                return Err(ReleaseError::new(
                    Error::Shared {
                        api: "aclrtDestroyStreamForce",
                        what: "stream",
                        others,
                    },
                    Stream { inner },
                ));
            }
            // Other handles keep the stream; the last of them destroys it.
            Err(_shared) => return Ok(()),
        };
        let destroyed = current::ensure_current(inner.ctx).and_then(|()| {
            // SAFETY: `raw` is live and owned by this, the only handle; on success it is never
            // used again (cleared below).
            unsafe {
                if force {
                    raw::aclrtDestroyStreamForce(inner.raw)
                } else {
                    raw::aclrtDestroyStream(inner.raw)
                }
            }
        });
        match destroyed {
            Ok(()) => {
                inner.raw = std::ptr::null_mut();
                if force {
                    host_fn::discard_pending(inner.shared.take_pending());
                }
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(
                e,
                Stream {
                    inner: Arc::new(inner),
                },
            )),
        }
    }
}

/// Destroys idle pooled events (`aclrtDestroyEvent`), reporting the first failure.
fn destroy_events(events: impl Iterator<Item = sys::aclrtEvent>) -> Result<()> {
    let mut first = Ok(());
    for e in events {
        // SAFETY: a pooled event is idle and owned by the pool alone; destroyed once.
        let r = unsafe { crate::raw::aclrtDestroyEvent(e) };
        if first.is_ok() {
            first = r;
        } else {
            crate::drop_errors::report(r);
        }
    }
    first
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        let events: Vec<Raw<std::ffi::c_void>> =
            std::mem::take(self.events.get_mut().unwrap_or_else(|p| p.into_inner()))
                .into_iter()
                .map(Raw)
                .collect();
        let raw = (!self.raw.is_null()).then_some(Raw(self.raw));
        if raw.is_none() && events.is_empty() {
            return;
        }
        let (ctx, owner) = (Raw(self.ctx), self.owner.clone());
        deferred::release(move || {
            let _ = current::ensure_current(ctx.get());
            let mut r = destroy_events(events.iter().map(Raw::get));
            if let Some(stream) = raw {
                // SAFETY: the stream was owned by the last handle, which is gone; released once.
                let d = unsafe { raw::aclrtDestroyStream(stream.get()) };
                r = r.and(d);
            }
            drop(owner);
            r
        });
    }
}

/// The contexts a stream of which was set to STOP failure mode through this crate: the runtime
/// applies the mode to the whole context, and after a failure there it skips host functions,
/// which submissions rely on ([`Stream::submit`]). Each entry holds a weak reference to the
/// context's owner, so that a context destroyed (and another created at its address) is not
/// taken for one in STOP mode.
mod stop_mode {
    use ascendcl_sys as sys;
    use std::any::Any;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, Weak};

    type Entry = (usize, Weak<dyn Any + Send + Sync>);

    static ANY: AtomicBool = AtomicBool::new(false);
    static CONTEXTS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

    pub(super) fn set(ctx: sys::aclrtContext, alive: Weak<dyn Any + Send + Sync>) {
        let mut v = CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
        v.retain(|(_, w)| w.strong_count() > 0);
        if !v
            .iter()
            .any(|(c, w)| *c == ctx as usize && w.ptr_eq(&alive))
        {
            v.push((ctx as usize, alive));
        }
        ANY.store(true, Ordering::Release);
    }

    pub(super) fn is_set(ctx: sys::aclrtContext) -> bool {
        ANY.load(Ordering::Acquire)
            && CONTEXTS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|(c, w)| *c == ctx as usize && w.strong_count() > 0)
    }
}
