//! Sound asynchronous work on one or several streams: [`Stream::scope`], [`scope`] (a scope over
//! several streams) and [`Stream::submit`] / [`submit`] (work that returns at once, with owned
//! buffers).
//!
//! The hazard of an asynchronous copy is that the host frees, moves or writes a buffer while the
//! device still reads or writes it. A guard returned to the caller cannot prevent that
//! (`mem::forget` defeats it). Instead, like `std::thread::scope`, a scope runs a closure and
//! **itself** waits for its streams before returning — on success, on error and on panic (an
//! internal drop guard) — and every buffer handed to the scope is borrowed for the whole scope:
//!
//! * sources are borrowed shared (`&'scope`): the host cannot write or free them while the copy
//!   may run;
//! * destinations are borrowed exclusively (`&'scope mut`): the host can neither read nor touch
//!   them;
//! * a buffer used by several operations is [`Scope::claim`]ed once: the scope then holds the
//!   exclusive borrow and hands out a copyable [`Claimed`] region that later operations — on any
//!   of the scope's streams — may read and write. The scope tracks each claim's last write and
//!   the reads since, per stream, and makes a stream wait for an event recorded after the uses
//!   it conflicts with before it uses the claim (`tracking`). The region is branded with the
//!   scope's invariant `'scope` lifetime, which no other scope shares, so another scope (which
//!   knows nothing of its uses) cannot use it.
//!
//! Buffers created inside the closure cannot be used (they would be dropped before the scope
//! waits): the borrow checker rejects them. Pageable host memory is accepted too: the runtime
//! completes such copies before the enqueue returns, and the scope's borrows cover them anyway.

mod access;
mod end;
mod submit;
mod tracking;

pub use access::{AsyncDest, AsyncSource, Claimed};
pub use submit::{Submission, SubmissionError, submit};
pub use tracking::ScopeStats;

use crate::copy::{self, Access, Copy2d, CopyDest, MemcpyKind};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::host_fn::HostFnHandle;
use crate::raw;
use crate::stream::Stream;
use ascendcl_sys as sys;
use end::End;
use std::cell::RefCell;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;
use tracking::Tracking;

/// The handle a scope closure enqueues work on one of the scope's streams through.
///
/// A scope spans one stream ([`Stream::scope`]) or several ([`scope`], [`Scope::on`]); each
/// `Scope` value is the scope on one of them, and all of them accept the scope's [`Claimed`]
/// regions. Work on one stream runs in order; across streams the scope orders every use of
/// claimed memory after the earlier uses it conflicts with (it queues
/// `aclrtStreamWaitEvent` for an event it recorded after them), unless the streams are ordered
/// already — by an earlier wait of the scope, or by an event the caller recorded and waited for
/// through the scope ([`Scope::record_event`], [`Scope::wait_event`]), which the scope
/// recognises. [`Scope::stats`] counts the waits it queued.
///
/// | operation | C function |
/// |---|---|
/// | [`Scope::copy`] | `aclrtMemcpyAsync` |
/// | [`Scope::fill_bytes`] | `aclrtMemsetAsync` |
/// | [`Scope::copy_2d`] | `aclrtMemcpy2dAsync` |
/// | [`Scope::launch_host_fn`] | `aclrtLaunchHostFunc` |
/// | [`Scope::record_event`] | `aclrtRecordEvent` |
/// | [`Scope::wait_event`], [`Scope::wait_event_timeout`] | `aclrtStreamWaitEvent[WithTimeout]` |
/// | ordering claimed memory across streams | `aclrtRecordEvent`, `aclrtStreamWaitEvent` (events of the streams' pools) |
/// | end of the scope | `aclrtSynchronizeStream` on each stream (then `aclrtStreamQuery` if it fails) |
pub struct Scope<'scope, 'env> {
    state: &'scope RefCell<Tracking<'env>>,
    lane: usize,
    stream: &'env Stream,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
    /// Neither `Send` nor `Sync`: a scope belongs to the one call (and thread) that waits for
    /// it.
    _not_send: PhantomData<*mut ()>,
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("stream", &self.stream.as_raw())
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    fn lane(state: &'scope RefCell<Tracking<'env>>, lane: usize) -> Self {
        let stream = state.borrow().lanes[lane].stream;
        Scope {
            state,
            lane,
            stream,
            _scope: PhantomData,
            _env: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// The stream's raw handle, for FFI that enqueues work on it. Work that uses claimed
    /// memory goes through [`Scope::enqueue`], which orders it on this stream.
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.stream.as_raw()
    }

    /// This scope's stream, for APIs that take a `&Stream`. Work enqueued through it is waited
    /// for by the scope like the rest; work that uses claimed memory goes through
    /// [`Scope::enqueue`].
    pub fn stream(&self) -> &'env Stream {
        self.stream
    }

    /// The device id of the stream.
    pub fn device_id(&self) -> i32 {
        self.stream.device_id()
    }

    /// The scope on `stream`, another stream (of this device, or of another one): the stream
    /// joins the scope, whose end waits for it too, and its work may use the scope's claimed
    /// regions, ordered with their uses on the scope's other streams. `stream` may already be
    /// one of the scope's streams (the same scope on it is returned). A scope spans at most 16
    /// streams; a stopped stream ([`Stream::stop`]) is refused until it is aborted.
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let (copies, compute) = (dev.create_stream()?, dev.create_stream()?);
    /// let mut x = dev.alloc_zeros::<i32>(4)?;
    /// let mut back = vec![0i32; 4];
    /// copies.scope(|c| {
    ///     let k = c.on(&compute)?;
    ///     let x = c.claim(&mut x);
    ///     k.fill(x, 7)?;          // on the compute stream
    ///     c.copy(&mut back, x)    // on the copy stream, after the fill (the scope waits)
    /// })?;
    /// assert_eq!(back, [7; 4]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn on(&self, stream: &'env Stream) -> Result<Scope<'scope, 'env>> {
        let lane = self.state.borrow_mut().join("Scope::on", stream)?;
        Ok(Scope {
            state: self.state,
            lane,
            stream,
            _scope: PhantomData,
            _env: PhantomData,
            _not_send: PhantomData,
        })
    }

    /// What the scope's tracking did so far (waits queued, uses found ordered already, events
    /// recorded, caller's waits recognised), for all its streams.
    pub fn stats(&self) -> ScopeStats {
        self.state.borrow().stats()
    }

    /// Takes `buf` for the rest of the scope and returns a copyable region of it, usable by
    /// several operations of this scope, on any of its streams (and of no other scope: see
    /// [`Claimed`]).
    pub fn claim<D: CopyDest + ?Sized>(&self, buf: &'scope mut D) -> Claimed<'scope, D::Elem> {
        let tag = self.state.borrow_mut().claim();
        Claimed {
            region: buf.dest_region().with_claim(tag),
            _scope: PhantomData,
        }
    }

    /// Enqueues one task on this scope's stream: first orders the stream after every earlier
    /// use, on the scope's other streams, of the claimed memory the task accesses (a write
    /// after the last write and the reads since, a read after the last write), then calls
    /// `enqueue` with the stream, which makes the runtime call (`Stream::make_current` done),
    /// then notes the task's accesses. Memory of another device than the stream's needs a live
    /// [`PeerAccess`](crate::PeerAccess) of the two (else [`Error::Argument`], before anything
    /// is enqueued).
    ///
    /// This is how work outside this crate (kernel launchers, collectives) takes part in the
    /// tracking: every region handed to the runtime is declared, with [`RawRegion::read`] or
    /// [`RawRegion::write`](crate::RawRegion::write) of its [`AsyncSource::region`] /
    /// [`AsyncDest::region`]. When `enqueue` fails, nothing is noted (the waits queued stay,
    /// which only orders more).
    ///
    /// [`RawRegion::read`]: crate::RawRegion::read
    #[inline]
    pub fn enqueue<R>(
        &self,
        accesses: &[Access],
        enqueue: impl FnOnce(&'env Stream) -> Result<R>,
    ) -> Result<R> {
        self.enqueue_as("Scope::enqueue", accesses, enqueue)
    }

    /// [`Scope::enqueue`], errors of the ordering naming `api`.
    #[inline]
    pub(crate) fn enqueue_as<R>(
        &self,
        api: &'static str,
        accesses: &[Access],
        enqueue: impl FnOnce(&'env Stream) -> Result<R>,
    ) -> Result<R> {
        enqueue_on(self.state, self.lane, self.stream, api, accesses, enqueue)
    }

    /// This scope on its stream as a copyable value of the scope's lifetime only, for
    /// libraries whose own operation types keep it (the collectives of `hccl` do):
    /// [`Lane::enqueue`] orders like [`Scope::enqueue`].
    pub fn as_lane(&self) -> Lane<'scope> {
        Lane {
            state: self.state,
            lane: self.lane,
            stream: self.stream,
            _scope: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// Enqueues a copy of `src` into `dst` (`aclrtMemcpyAsync`); lengths must be equal, the
    /// direction follows from the locations. Device memory must be the stream's device's, or
    /// reachable from it through a [`PeerAccess`](crate::PeerAccess).
    pub fn copy<D, S>(&self, mut dst: D, src: S) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
    {
        let (d, s) = (dst.region(), src.region());
        copy::refuse_managed("aclrtMemcpyAsync", &d)?;
        copy::refuse_managed("aclrtMemcpyAsync", &s)?;
        self.enqueue_as("aclrtMemcpyAsync", &[d.write(), s.read()], |st| {
            // SAFETY: both regions are borrowed for 'scope, their devices checked by the
            // ordering, and the scope waits for the stream before 'scope ends.
            unsafe { copy::copy_regions_async(d, s, st.as_raw(), true) }
        })
    }

    /// Enqueues setting every byte of device memory `dst` to `value` (`aclrtMemsetAsync`).
    pub fn fill_bytes<D: AsyncDest<'scope>>(&self, mut dst: D, value: u8) -> Result<()> {
        const API: &str = "aclrtMemsetAsync";
        let d = dst.region();
        if d.location().device().is_none() {
            return Err(Error::argument(
                API,
                "the destination must be device memory",
            ));
        }
        if d.bytes() == 0 {
            return Ok(());
        }
        self.enqueue_as(API, &[d.write()], |st| {
            // SAFETY: the region is borrowed for 'scope; the scope waits before 'scope ends.
            unsafe {
                raw::aclrtMemsetAsync(
                    d.ptr().cast(),
                    d.bytes(),
                    i32::from(value),
                    d.bytes(),
                    st.as_raw(),
                )
            }
        })
    }

    /// Enqueues a 2D copy (`aclrtMemcpy2dAsync`): host to device, device to host or device to
    /// device; bounds are checked against both buffers.
    pub fn copy_2d<D, S>(&self, mut dst: D, src: S, geometry: Copy2d) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
    {
        const API: &str = "aclrtMemcpy2dAsync";
        let (d, s) = (dst.region(), src.region());
        copy::refuse_managed(API, &d)?;
        copy::refuse_managed(API, &s)?;
        let Some([dp, sp, w, h]) = copy::check_2d(API, &d, &s, geometry)? else {
            return Ok(());
        };
        let kind = MemcpyKind::between(s.location(), d.location());
        self.enqueue_as(API, &[d.write(), s.read()], |st| {
            // SAFETY: the pitched regions lie within buffers borrowed for 'scope; the scope
            // waits before 'scope ends.
            unsafe {
                raw::aclrtMemcpy2dAsync(
                    d.ptr().cast(),
                    dp,
                    s.ptr().cast::<c_void>().cast_const(),
                    sp,
                    w,
                    h,
                    kind.into(),
                    st.as_raw(),
                )
            }
        })
    }

    /// Records `event` on this stream (`aclrtRecordEvent`). Until the event is recorded again
    /// or reset, a [`Scope::wait_event`] for it on another of the scope's streams orders that
    /// stream after this one's work so far, and the scope counts that order: it queues no wait
    /// of its own for claimed memory the order covers.
    pub fn record_event(&self, event: &Event) -> Result<()> {
        let n = event.record_on(self.stream)?;
        self.state.borrow_mut().recorded(self.lane, event, n);
        Ok(())
    }

    /// Makes this stream wait for `event`'s latest record (`aclrtStreamWaitEvent`). When that
    /// record is one this scope made on another of its streams ([`Scope::record_event`]), the
    /// scope knows the order it gives.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        let n = event.wait_on(self.stream, None)?;
        self.state.borrow_mut().waited(self.lane, event, n);
        Ok(())
    }

    /// Makes this stream wait for `event`, the wait failing after `timeout`
    /// ([`Stream::wait_event_timeout`]); the scope then reports `ACL_ERROR_RT_TASK_TIMEOUT`.
    /// A wait that may expire orders nothing, so the scope does not count it as an order.
    pub fn wait_event_timeout(&self, event: &Event, timeout: Option<Duration>) -> Result<()> {
        match timeout {
            None => self.wait_event(event),
            Some(_) => self.stream.wait_event_timeout(event, timeout),
        }
    }

    /// Enqueues a host closure ([`Stream::launch_host_fn`]).
    pub fn launch_host_fn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<HostFnHandle> {
        self.stream.launch_host_fn(f)
    }
}

/// The ordering of a scope, whatever the lifetime of its streams' borrow.
trait Order {
    fn order(&self, api: &'static str, lane: usize, accesses: &[Access]) -> Result<()>;
    fn commit(&self, lane: usize, accesses: &[Access]);
}

impl Order for RefCell<Tracking<'_>> {
    #[inline]
    fn order(&self, api: &'static str, lane: usize, accesses: &[Access]) -> Result<()> {
        self.borrow_mut().order(api, lane, accesses)
    }
    #[inline]
    fn commit(&self, lane: usize, accesses: &[Access]) {
        self.borrow_mut().commit(lane, accesses)
    }
}

/// The body of [`Scope::enqueue`] and [`Lane::enqueue`].
#[inline]
fn enqueue_on<'s, R>(
    order: &dyn Order,
    lane: usize,
    stream: &'s Stream,
    api: &'static str,
    accesses: &[Access],
    enqueue: impl FnOnce(&'s Stream) -> Result<R>,
) -> Result<R> {
    order.order(api, lane, accesses)?;
    stream.make_current()?;
    let r = enqueue(stream)?;
    order.commit(lane, accesses);
    Ok(r)
}

/// A scope on one of its streams, as a copyable value branded with the scope's lifetime
/// ([`Scope::as_lane`]), for libraries that keep it in their own operation types. Like a
/// [`Claimed`] region it is invariant in `'scope`, neither `Send` nor `Sync`, and cannot outlive
/// the scope.
#[derive(Clone, Copy)]
pub struct Lane<'scope> {
    state: &'scope dyn Order,
    lane: usize,
    stream: &'scope Stream,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _not_send: PhantomData<*mut ()>,
}

impl fmt::Debug for Lane<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lane")
            .field("stream", &self.stream.as_raw())
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl<'scope> Lane<'scope> {
    /// The stream.
    pub fn stream(&self) -> &'scope Stream {
        self.stream
    }

    /// [`Scope::enqueue`] on this stream of the scope.
    #[inline]
    pub fn enqueue<R>(
        &self,
        api: &'static str,
        accesses: &[Access],
        enqueue: impl FnOnce(&'scope Stream) -> Result<R>,
    ) -> Result<R> {
        enqueue_on(self.state, self.lane, self.stream, api, accesses, enqueue)
    }
}

/// Returns `f`'s value, or its error (the end's error then goes to the drop errors), or the
/// end's error.
fn outcome<R>(r: Result<R>, ended: Result<()>) -> Result<R> {
    match r {
        Ok(v) => ended.map(|()| v),
        Err(e) => {
            // Only one error can be returned: the end's is kept where failures of implicit
            // releases go, rather than lost.
            crate::drop_errors::report(ended);
            Err(e)
        }
    }
}

/// Runs `f` in a scope over several streams: `f` gets the scope on each of `streams`, in order,
/// and every one of them accepts the scope's [`Claimed`] regions. Uses of claimed memory on
/// different streams are ordered by the scope (see [`Scope`]); the scope waits for every stream
/// before it returns — also when `f` fails or panics — so buffers borrowed by the scope are
/// released only when no stream can touch them. The streams may be of several devices: memory
/// of one device is used on another's stream only while a [`PeerAccess`](crate::PeerAccess) of
/// the two is alive. A stream given twice is one stream of the scope.
///
/// The first failure is returned: `f`'s, else the first stream's that failed, as
/// [`Error::OnStream`] (which stream, and its error); the others go to
/// [`take_drop_errors`](crate::take_drop_errors).
///
/// The copy/compute overlap idiom: chunks copied in on one stream while the previous chunk is
/// computed on another and the one before copied out on a third.
///
/// ```
/// use ascendcl::ReduceKind;
/// # let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let (load, compute, store) = (dev.create_stream()?, dev.create_stream()?, dev.create_stream()?);
/// let input: Vec<i32> = (0..8).collect();
/// let ones = dev.clone_htod(&[1i32; 4])?;
/// let mut slots = [dev.alloc_zeros::<i32>(4)?, dev.alloc_zeros::<i32>(4)?];
/// let mut output = vec![0i32; 8];
/// ascendcl::scope([&load, &compute, &store], |[l, c, s]| {
///     let [a, b] = &mut slots;
///     let slots = [l.claim(a), l.claim(b)];
///     for (i, (inp, out)) in input.chunks(4).zip(output.chunks_mut(4)).enumerate() {
///         let x = slots[i % 2];
///         l.copy(x, inp)?;                    // waits for the store that last read the slot
///         c.reduce(x, &ones, ReduceKind::Sum)?; // waits for the load
///         s.copy(out, x)?;                    // waits for the compute
///     }
///     Ok(())
/// })?;
/// assert_eq!(output, [1, 2, 3, 4, 5, 6, 7, 8]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn scope<'env, const N: usize, R, F>(streams: [&'env Stream; N], f: F) -> Result<R>
where
    F: for<'scope> FnOnce(&'scope [Scope<'scope, 'env>; N]) -> Result<R>,
{
    crate::trace::span!(
        "scope",
        streams = N,
        device = streams.first().map_or(-1, |s| s.device_id())
    );
    let (t, lanes) = Tracking::open("ascendcl::scope", &streams)?;
    for s in &streams {
        s.make_current()?;
    }
    streams[0].make_current()?;
    let state = RefCell::new(t);
    let scopes: [Scope<'_, 'env>; N] = std::array::from_fn(|k| Scope::lane(&state, lanes[k]));
    let mut end = End::new(&state);
    let r = f(&scopes);
    let ended = end.wait();
    outcome(r, ended)
}

impl Stream {
    /// Runs `f`, which enqueues asynchronous work on this stream through a [`Scope`], then waits
    /// for the stream (`aclrtSynchronizeStream`) before returning — also when `f` fails or
    /// panics. Buffers passed to the scope are borrowed until then, so safe code can neither
    /// free, move nor touch them while the device may use them. Other streams may join the
    /// scope ([`Scope::on`]); [`scope`] opens one over several streams at once.
    ///
    /// Returns `f`'s error if it failed, else the synchronisation's (including a host function
    /// that panicked, and [`Error::Aborted`] when the stream was aborted meanwhile). When both
    /// failed, the synchronisation's error is pushed onto
    /// [`take_drop_errors`](crate::take_drop_errors). A stopped stream ([`Stream::stop`]) is
    /// refused until it is aborted.
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
        crate::trace::span!("scope", streams = 1, device = self.device_id());
        self.make_current()?;
        let (t, _) = Tracking::open("Stream::scope", &[self])?;
        let state = RefCell::new(t);
        let scope = Scope::lane(&state, 0);
        let mut end = End::new(&state);
        let r = f(&scope);
        let ended = end.wait();
        outcome(r, ended)
    }
}
