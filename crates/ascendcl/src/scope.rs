//! Sound asynchronous work on a stream: [`Stream::scope`].
//!
//! The hazard of an asynchronous copy is that the host frees, moves or writes a buffer while the
//! device still reads or writes it. A guard returned to the caller cannot prevent that
//! (`mem::forget` defeats it). Instead, like `std::thread::scope`, [`Stream::scope`] runs a
//! closure and **itself** waits for the stream before returning — on success, on error and on
//! panic (an internal drop guard) — and every buffer handed to the scope is borrowed for the
//! whole scope:
//!
//! * sources are borrowed shared (`&'scope`): the host cannot write or free them while the copy
//!   may run;
//! * destinations are borrowed exclusively (`&'scope mut`): the host can neither read nor touch
//!   them;
//! * a buffer used by several operations of the scope is [`Scope::claim`]ed once: the scope then
//!   holds the exclusive borrow and hands out a copyable [`Claimed`] region that later
//!   operations on the same stream (ordered by the stream) may read and write. The region is
//!   branded with the scope's invariant `'scope` lifetime, which no other scope shares, so the
//!   scope of another stream (not ordered with this one) cannot use it.
//!
//! Buffers created inside the closure cannot be used (they would be dropped before the scope
//! waits): the borrow checker rejects them. Pageable host memory is accepted too: the runtime
//! completes such copies before the enqueue returns, and the scope's borrows cover them anyway.

use crate::copy::{self, Copy2d, CopyDest, CopySource, MemcpyKind, MemoryLocation, RawRegion};
use crate::current;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::host_fn::HostFnHandle;
use crate::memory::{DeviceRepr, resolve_range};
use crate::notify::Notify;
use crate::result;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::cell::RefCell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::rc::Rc;
use std::time::Duration;

/// The handle a [`Stream::scope`] closure enqueues work through.
///
/// | operation | C function |
/// |---|---|
/// | [`Scope::copy`] | `aclrtMemcpyAsync` |
/// | [`Scope::fill_bytes`] | `aclrtMemsetAsync` |
/// | [`Scope::copy_2d`] | `aclrtMemcpy2dAsync` |
/// | [`Scope::launch_host_fn`] | `aclrtLaunchHostFunc` |
/// | [`Scope::wait_event`], [`Scope::wait_event_timeout`] | `aclrtStreamWaitEvent[WithTimeout]` |
/// | [`Scope::hand_off`] | `aclrtRecordEvent` / `aclrtRecordNotify`, `aclrtStreamWaitEvent[WithTimeout]` / `aclrtWaitAndResetNotify` |
/// | end of the scope | `aclrtSynchronizeStream` (then `aclrtStreamQuery` if it fails) |
#[derive(Debug)]
pub struct Scope<'scope, 'env: 'scope> {
    stream: &'env Stream,
    /// Shared with the scopes it hands work to ([`Scope::hand_off`]).
    ties: Rc<Ties>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
    /// Neither `Send` nor `Sync`: a scope belongs to the one `Stream::scope` call (and thread)
    /// that waits for it.
    _not_send: PhantomData<*mut ()>,
}

/// What a scope shares with the scopes it hands work to ([`Scope::hand_off`]).
#[derive(Debug, Default)]
pub(crate) struct Ties {
    /// Notifies the scope's streams wait on: destroyed only once the scope's stream is idle.
    pub(crate) keep: RefCell<Vec<Rc<Notify>>>,
    /// The scope's stream and those of the hand-offs in progress (a hand-off to one of them
    /// would wait for itself).
    pub(crate) streams: RefCell<Vec<sys::aclrtStream>>,
    /// Every stream work was handed to (with its context): the end of the scope waits for each
    /// of them too, after the scope's own stream, so no work of the scope outlives its borrows
    /// even when a wait of the device-side order was cut short (a task failing in STOP mode
    /// discards the waits queued behind it).
    pub(crate) handed: RefCell<Vec<(sys::aclrtStream, sys::aclrtContext)>>,
    /// The streams of the scope's hand-offs, marked until the scope ends: stopping or aborting
    /// one would discard a wait that orders the other's work.
    pub(crate) marks: RefCell<Vec<HandOffMark>>,
}

/// A stream taking part in a hand-off of an open scope ([`StreamShared::hand_offs`]): while
/// any such mark lives, [`Stream::stop`] and [`Stream::abort`] refuse.
#[derive(Debug)]
pub(crate) struct HandOffMark(std::sync::Arc<crate::stream::StreamShared>);

impl HandOffMark {
    pub(crate) fn new(stream: &Stream) -> HandOffMark {
        let shared = std::sync::Arc::clone(stream.shared());
        shared
            .hand_offs
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        HandOffMark(shared)
    }
}

impl Drop for HandOffMark {
    fn drop(&mut self) {
        self.0
            .hand_offs
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Memory a scope operation may read until the scope ends.
///
/// # Safety
/// The region stays valid, unmoved and unwritten by the host until the end of `'scope`.
pub unsafe trait AsyncSource<'scope> {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory.
    fn region(&self) -> RawRegion<Self::Elem>;
}

/// Memory a scope operation may write until the scope ends.
///
/// # Safety
/// The region stays valid, unmoved and untouched by the host until the end of `'scope`.
pub unsafe trait AsyncDest<'scope> {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory.
    fn region(&mut self) -> RawRegion<Self::Elem>;
}

// SAFETY: the shared borrow lasts for 'scope, so nobody writes or frees the memory.
unsafe impl<'scope, S: CopySource + ?Sized> AsyncSource<'scope> for &'scope S {
    type Elem = S::Elem;
    fn region(&self) -> RawRegion<S::Elem> {
        self.source_region()
    }
}

// SAFETY: the exclusive borrow lasts for 'scope.
unsafe impl<'scope, D: CopyDest + ?Sized> AsyncDest<'scope> for &'scope mut D {
    type Elem = D::Elem;
    fn region(&mut self) -> RawRegion<D::Elem> {
        self.dest_region()
    }
}

/// A buffer the scope holds exclusively until it ends ([`Scope::claim`]); copyable, so several
/// operations of the stream (ordered by it) can read and write it.
///
/// A `Claimed` is branded with the `'scope` lifetime of the scope that claimed it, and that
/// lifetime is invariant: it is accepted by the operations of that scope only. Handing it to the
/// scope of another stream (where the two streams would race on the memory) does not compile,
/// nor does keeping it beyond the scope. `docs/soundness.md` gives the argument.
#[derive(Debug)]
pub struct Claimed<'scope, T> {
    region: RawRegion<T>,
    /// Invariant in `'scope`: a region of one scope never passes for a region of another.
    _scope: PhantomData<(&'scope mut &'scope (), *mut T)>,
}

impl<T> Clone for Claimed<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Claimed<'_, T> {}

impl<'scope, T: DeviceRepr> Claimed<'scope, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }
    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }
    /// Where the memory is.
    pub fn location(&self) -> MemoryLocation {
        self.region.location()
    }
    /// The address, for FFI that enqueues work on the scope's stream (kernel arguments, with
    /// [`Scope::as_raw`]). The memory stays valid and untouched by the host until the scope
    /// ends; work that uses the address must be enqueued on this scope's stream only (work on
    /// another stream would race with it: that is for the `unsafe` caller to rule out).
    pub fn as_ptr(&self) -> *const T {
        self.region.ptr()
    }
    /// The address, for FFI that writes the memory on the scope's stream; the same contract as
    /// [`Claimed::as_ptr`].
    pub fn as_mut_ptr(&self) -> *mut T {
        self.region.ptr()
    }
    /// A part of the claimed memory; out of bounds is an error.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Claimed<'scope, T>> {
        let (start, len) = resolve_range("Claimed::slice", range, self.region.len())?;
        Ok(Claimed {
            region: RawRegion::new(
                self.region.ptr().wrapping_add(start),
                len,
                self.region.location(),
            ),
            _scope: PhantomData,
        })
    }
}

// SAFETY: the scope holds the exclusive borrow of the memory for 'scope.
unsafe impl<'scope, T: DeviceRepr> AsyncSource<'scope> for Claimed<'scope, T> {
    type Elem = T;
    fn region(&self) -> RawRegion<T> {
        self.region
    }
}
// SAFETY: as above.
unsafe impl<'scope, T: DeviceRepr> AsyncDest<'scope> for Claimed<'scope, T> {
    type Elem = T;
    fn region(&mut self) -> RawRegion<T> {
        self.region
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// The stream's raw handle, for FFI that enqueues work (kernel launches) on it.
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.stream.as_raw()
    }

    /// The scope's stream, for APIs that take a `&Stream` (for example kernel launchers). Work
    /// enqueued through it is waited for by the scope like the rest.
    pub fn stream(&self) -> &'env Stream {
        self.stream
    }

    /// The device id of the stream.
    pub fn device_id(&self) -> i32 {
        self.stream.device_id()
    }

    /// A scope with the same brand on `stream`, sharing this one's ties ([`Scope::hand_off`]
    /// orders the two streams before handing it out).
    pub(crate) fn on_stream(&self, stream: &'env Stream) -> Scope<'scope, 'env> {
        Scope {
            stream,
            ties: Rc::clone(&self.ties),
            _scope: PhantomData,
            _env: PhantomData,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn ties(&self) -> &Ties {
        &self.ties
    }

    /// Takes `buf` for the rest of the scope and returns a copyable region of it, usable by
    /// several operations of this scope (and of no other: see [`Claimed`]).
    pub fn claim<D: CopyDest + ?Sized>(&self, buf: &'scope mut D) -> Claimed<'scope, D::Elem> {
        Claimed {
            region: buf.dest_region(),
            _scope: PhantomData,
        }
    }

    /// Enqueues a copy of `src` into `dst` (`aclrtMemcpyAsync`); lengths must be equal, buffers
    /// of two devices are rejected, the direction follows from the locations.
    pub fn copy<D, S>(&self, mut dst: D, src: S) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
    {
        let (d, s) = (dst.region(), src.region());
        self.stream.make_current()?;
        // SAFETY: both regions are borrowed for 'scope and the scope waits for the stream before
        // 'scope ends.
        unsafe { copy::copy_regions_async(d, s, self.stream.as_raw()) }
    }

    /// Enqueues setting every byte of device memory `dst` to `value` (`aclrtMemsetAsync`).
    pub fn fill_bytes<D: AsyncDest<'scope>>(&self, mut dst: D, value: u8) -> Result<()> {
        let d = dst.region();
        if d.location().device().is_none() {
            return Err(Error::argument(
                "aclrtMemsetAsync",
                "the destination must be device memory",
            ));
        }
        if d.bytes() == 0 {
            return Ok(());
        }
        self.stream.make_current()?;
        // SAFETY: the region is borrowed for 'scope; the scope waits before 'scope ends.
        unsafe {
            result::memory::memset_async(
                d.ptr().cast(),
                d.bytes(),
                value,
                d.bytes(),
                self.stream.as_raw(),
            )
        }
    }

    /// Enqueues a 2D copy (`aclrtMemcpy2dAsync`): host to device, device to host or device to
    /// device; bounds are checked against both buffers.
    pub fn copy_2d<D, S>(&self, mut dst: D, src: S, geometry: Copy2d) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
    {
        let (d, s) = (dst.region(), src.region());
        if let (Some(x), Some(y)) = (d.location().device(), s.location().device())
            && x != y
        {
            return Err(Error::argument(
                "aclrtMemcpy2dAsync",
                "buffers of two devices need peer access",
            ));
        }
        let Some([dp, sp, w, h]) = copy::check_2d("aclrtMemcpy2dAsync", &d, &s, geometry)? else {
            return Ok(());
        };
        let kind = MemcpyKind::between(s.location(), d.location());
        self.stream.make_current()?;
        // SAFETY: the pitched regions lie within buffers borrowed for 'scope; the scope waits
        // before 'scope ends.
        unsafe {
            result::memory::memcpy_2d_async(
                d.ptr().cast(),
                dp,
                s.ptr().cast::<c_void>().cast_const(),
                sp,
                w,
                h,
                kind.into(),
                self.stream.as_raw(),
            )
        }
    }

    /// Records `event` on the scope's stream.
    pub fn record_event(&self, event: &Event) -> Result<()> {
        event.record(self.stream)
    }

    /// Makes the scope's stream wait for `event`.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.stream.wait_event(event)
    }

    /// Makes the scope's stream wait for `event`, the wait failing after `timeout`
    /// ([`Stream::wait_event_timeout`]); the scope then reports `ACL_ERROR_RT_TASK_TIMEOUT`.
    pub fn wait_event_timeout(&self, event: &Event, timeout: Option<Duration>) -> Result<()> {
        self.stream.wait_event_timeout(event, timeout)
    }

    /// Enqueues a host closure ([`Stream::launch_host_fn`]).
    pub fn launch_host_fn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<HostFnHandle> {
        self.stream.launch_host_fn(f)
    }
}

/// Waits for the stream when dropped: the end of every scope, including unwinding.
struct SyncOnExit {
    stream: sys::aclrtStream,
    ctx: sys::aclrtContext,
    /// The scope's ties, whose hand-off streams are waited for after this one.
    ties: Option<Rc<Ties>>,
    armed: bool,
}

impl SyncOnExit {
    /// Waits until the stream has finished its work. Returns the first synchronisation failure
    /// (a task that failed, for example), but never returns while the stream may still use the
    /// borrowed buffers:
    ///
    /// 1. `aclrtSynchronizeStream`; on failure the stream's context is made current (the closure
    ///    may have changed it) and the call repeated;
    /// 2. if that fails too, `aclrtStreamQuery` is polled (with `aclrtSynchronizeStream` retried
    ///    between polls) until it reports the stream complete, however long that takes;
    /// 3. if even the query keeps failing, nothing can prove that the device has stopped
    ///    touching the borrowed memory, and releasing the borrows could let safe code free or
    ///    read memory the device is writing: the process is aborted with a message on stderr.
    fn wait(&mut self) -> Result<()> {
        let own = self.wait_own();
        let Some(ties) = self.ties.take() else {
            return own;
        };
        // The streams work was handed to, each once: normally idle already (this stream waited
        // for them on the device), but their idleness, not that order, is what releases the
        // borrows.
        let handed = ties.handed.borrow().clone();
        let mut first = own;
        for (i, &(stream, ctx)) in handed.iter().enumerate() {
            if handed[..i].iter().any(|&(s, _)| s == stream) {
                continue;
            }
            let r = SyncOnExit {
                stream,
                ctx,
                ties: None,
                armed: true,
            }
            .wait_own();
            if first.is_ok() {
                first = r;
            } else {
                crate::drop_errors::report(r);
            }
        }
        first
    }

    /// Waits for this guard's own stream (see [`SyncOnExit::wait`]).
    fn wait_own(&mut self) -> Result<()> {
        self.armed = false;
        // SAFETY: the stream is live: the scope borrows it.
        let first = unsafe { result::stream::synchronize(self.stream) };
        let Err(first) = first else {
            return Ok(());
        };
        // The closure may have changed the current context: make the stream's current and wait
        // again, so that the buffers are released only once the stream has stopped.
        let _ = current::force_current(self.ctx);
        // SAFETY: as above.
        if unsafe { result::stream::synchronize(self.stream) }.is_ok() {
            return Err(first);
        }
        wait_until_idle(self.stream, self.ctx, &first);
        Err(first)
    }
}

/// Waits until `stream` has finished its work, as the end of a scope does (aborting the process
/// when the runtime cannot tell); the first synchronisation error, if any.
pub(crate) fn wait_idle(stream: &Stream) -> Result<()> {
    SyncOnExit {
        stream: stream.as_raw(),
        ctx: stream.raw_context(),
        ties: None,
        armed: true,
    }
    .wait()
}

/// Consecutive failing `aclrtStreamQuery` calls after which [`wait_until_idle`] gives up.
const QUERY_ATTEMPTS: u32 = 20;

/// Returns once `aclrtStreamQuery` reports the stream complete (or a synchronisation succeeds);
/// aborts the process when the stream's state cannot be learnt at all (see [`SyncOnExit::wait`]).
#[cold]
fn wait_until_idle(stream: sys::aclrtStream, ctx: sys::aclrtContext, first: &Error) {
    let mut pause = std::time::Duration::from_millis(1);
    let mut failures = 0;
    loop {
        // SAFETY: the stream is live: the scope borrows it.
        match unsafe { result::stream::query(stream) } {
            Ok(sys::ACL_STREAM_STATUS_COMPLETE) => return,
            Ok(_) => failures = 0,
            Err(e) => {
                failures += 1;
                if failures >= QUERY_ATTEMPTS {
                    eprintln!("{}", abort_message(stream, first, &e));
                    std::process::abort();
                }
                let _ = current::force_current(ctx);
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
        // SAFETY: as above.
        if unsafe { result::stream::synchronize(stream) }.is_ok() {
            return;
        }
    }
}

/// The one line printed before [`wait_until_idle`] aborts the process.
fn abort_message(stream: sys::aclrtStream, first: &Error, last: &Error) -> String {
    format!(
        "ascendcl: Stream::scope cannot tell whether stream {stream:p} still uses the buffers \
         borrowed by the scope (first {first}; then {last}); aborting rather than releasing \
         memory the device may still access"
    )
}

impl Drop for SyncOnExit {
    fn drop(&mut self) {
        if self.armed {
            crate::drop_errors::report(self.wait());
        }
    }
}

impl Stream {
    /// Runs `f`, which enqueues asynchronous work on this stream through a [`Scope`], then waits
    /// for the stream (`aclrtSynchronizeStream`) before returning — also when `f` fails or
    /// panics. Buffers passed to the scope are borrowed until then, so safe code can neither
    /// free, move nor touch them while the device may use them.
    ///
    /// Returns `f`'s error if it failed, else the synchronisation's (including a host function
    /// that panicked). When both failed, the synchronisation's error is pushed onto
    /// [`take_drop_errors`](crate::take_drop_errors).
    ///
    /// When `aclrtSynchronizeStream` fails (twice: the second time with the stream's context made
    /// current), the scope does not give the buffers back yet: it polls `aclrtStreamQuery` until
    /// the stream reports its work complete, and only then returns the synchronisation error. If
    /// the runtime cannot even answer the query (the stream or device is gone), nothing proves
    /// the device has stopped using the borrowed memory, so the process is **aborted** (with a
    /// message on stderr) rather than releasing it.
    ///
    /// ```
    /// use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let stream = dev.create_stream()?;
    /// let src = HostBuffer::from_slice(&dev, &[1u8, 2, 3, 4])?;
    /// let mut dev_buf = DeviceBuffer::<u8>::zeroed(&dev, 4, MallocPolicy::HugeFirst)?;
    /// let mut out = HostBuffer::<u8>::zeroed(&dev, 4)?;
    /// stream.scope(|s| {
    ///     let d = s.claim(&mut dev_buf);
    ///     s.copy(d, &src)?;      // host to device
    ///     s.copy(&mut out, d)?;  // device to host, ordered after it
    ///     Ok(())
    /// })?;
    /// assert_eq!(&out[..], &[1, 2, 3, 4]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn scope<'env, R, F>(&'env self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        self.make_current()?;
        // Declared before the guard, so dropped after it: the notifies hand-offs keep are
        // destroyed only once the stream has finished waiting on them, on unwinding too.
        let scope = Scope {
            stream: self,
            ties: Rc::new(Ties {
                keep: RefCell::default(),
                streams: RefCell::new(vec![self.as_raw()]),
                handed: RefCell::default(),
                marks: RefCell::default(),
            }),
            _scope: PhantomData,
            _env: PhantomData,
            _not_send: PhantomData,
        };
        let mut guard = SyncOnExit {
            stream: self.as_raw(),
            ctx: self.raw_context(),
            ties: Some(Rc::clone(&scope.ties)),
            armed: true,
        };
        let r = f(&scope);
        let synced = guard.wait().and_then(|()| self.shared().take_panic());
        match r {
            Ok(v) => synced.map(|()| v),
            Err(e) => {
                // Only one error can be returned: the synchronisation's is kept where failures of
                // implicit releases go, rather than lost.
                crate::drop_errors::report(synced);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendcl_sys::AclError;

    #[test]
    fn the_abort_message_is_one_sentence() {
        let e = |api| Error::Acl {
            api,
            code: AclError::RT_INTERNAL_ERROR.code(),
            name: crate::error_name(AclError::RT_INTERNAL_ERROR.code()),
            message: None,
        };
        let m = abort_message(
            std::ptr::null_mut(),
            &e("aclrtSynchronizeStream"),
            &e("aclrtStreamQuery"),
        );
        assert!(!m.contains("  "), "{m}");
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains("first aclrtSynchronizeStream failed"), "{m}");
        assert!(m.contains("then aclrtStreamQuery failed"), "{m}");
    }
}
