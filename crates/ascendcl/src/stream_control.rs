//! Stream control: ids, attributes, stop and abort, per-stream compute-resource limits, capacity
//! queries,
//! and process-wide stream-state callbacks as Rust closures ([`StreamStateCallback`]).

use crate::device::Device;
use crate::device_info::ResourceKind;
use crate::error::{Error, Result};
use crate::host_fn;
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use crate::stream::{FailureMode, Stream};
use ascendcl_sys as sys;
use std::ffi::{CString, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

impl Stream {
    /// The stream's id (`aclrtStreamGetId`), as exception reports name it.
    pub fn id(&self) -> Result<i32> {
        self.make_current()?;
        let mut id = 0i32;
        // SAFETY: the stream is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtStreamGetId(self.as_raw(), &mut id) }?;
        Ok(id)
    }

    /// Holds the stream's queue (`aclrtStreamStop`): tasks not started yet stay queued and do
    /// not run, and a synchronisation reports the failure at once instead of waiting. Follow
    /// with [`Stream::abort`] to discard the held tasks and use the stream again.
    ///
    /// A [`Stream::scope`] waits for its streams' work before it returns; while a stream is
    /// stopped that work never completes, so a scope on it waits until the stream is aborted
    /// (from another thread), and then reports its work as discarded ([`Error::Aborted`]).
    /// Opening a scope on a stopped stream, adding one to a scope ([`Scope::on`]) or submitting
    /// work to one ([`Stream::submit`]) is refused with [`Error::Argument`] until it is
    /// aborted. Stopping a stream from inside its own scope therefore never returns.
    ///
    /// [`Scope::on`]: crate::Scope::on
    pub fn stop(&self) -> Result<()> {
        self.make_current()?;
        // SAFETY: the stream is live while `self` is.
        unsafe { raw::aclrtStreamStop(self.as_raw()) }?;
        self.shared().stopped.store(true, Ordering::Release);
        Ok(())
    }

    /// Discards the tasks queued on the stream that have not started (`aclrtStreamAbort`); the
    /// stream is usable again afterwards. Host functions discarded this way are dropped without
    /// running, and their [`HostFnHandle`](crate::HostFnHandle)s report
    /// [`Error::HostFnDiscarded`]; host functions launched by other threads meanwhile are
    /// either discarded with the rest or run, never dropped while the runtime keeps them.
    /// Discarded work never touches its buffers, so a scope on the stream stays sound: it
    /// returns once nothing is left to run, with [`Error::Aborted`] (its work did not all run),
    /// and a [`Submission`](crate::Submission) on it completes with the same error, giving its
    /// buffers back.
    pub fn abort(&self) -> Result<()> {
        self.make_current()?;
        let shared = self.shared();
        let pending = {
            let _aborting = shared.aborting();
            // Counted before the runtime discards anything: a scope that ends after the discard
            // sees the count moved.
            shared.aborts.fetch_add(1, Ordering::AcqRel);
            // SAFETY: the stream is live while `self` is.
            unsafe { raw::aclrtStreamAbort(self.as_raw()) }?;
            shared.stopped.store(false, Ordering::Release);
            shared.take_pending()
        };
        host_fn::discard_pending(pending);
        Ok(())
    }

    fn attribute(&self, attr: sys::aclrtStreamAttr) -> Result<sys::aclrtStreamAttrValue> {
        self.make_current()?;
        let mut v = sys::aclrtStreamAttrValue::default();
        // SAFETY: the stream is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtGetStreamAttribute(self.as_raw(), attr, &mut v) }?;
        Ok(v)
    }

    fn set_attribute(
        &self,
        attr: sys::aclrtStreamAttr,
        mut v: sys::aclrtStreamAttrValue,
    ) -> Result<()> {
        self.make_current()?;
        // SAFETY: the stream is live while `self` is; the value is read during the call.
        unsafe { raw::aclrtSetStreamAttribute(self.as_raw(), attr, &mut v) }
    }

    /// What the stream does after a failed task (`aclrtGetStreamAttribute`,
    /// `ACL_STREAM_ATTR_FAILURE_MODE`); set with
    /// [`Stream::set_failure_mode`](crate::Stream::set_failure_mode).
    pub fn failure_mode(&self) -> Result<FailureMode> {
        let v = self.attribute(sys::ACL_STREAM_ATTR_FAILURE_MODE)?;
        // SAFETY: every member of the union is plain integers; the runtime wrote this one.
        FailureMode::try_from(unsafe { v.failureMode })
    }

    /// Whether the stream checks float overflow (`ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK`).
    pub fn float_overflow_check(&self) -> Result<bool> {
        let v = self.attribute(sys::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK)?;
        // SAFETY: as above.
        Ok(unsafe { v.overflowSwitch } != 0)
    }

    /// Switches the float-overflow check (`aclrtSetStreamAttribute`,
    /// `ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK`).
    pub fn set_float_overflow_check(&self, on: bool) -> Result<()> {
        let v = sys::aclrtStreamAttrValue {
            overflowSwitch: u32::from(on),
        };
        self.set_attribute(sys::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, v)
    }

    /// Whether the stream caches operator information (`ACL_STREAM_ATTR_CACHE_OP_INFO`).
    pub fn cache_op_info(&self) -> Result<bool> {
        let v = self.attribute(sys::ACL_STREAM_ATTR_CACHE_OP_INFO)?;
        // SAFETY: as above.
        Ok(unsafe { v.cacheOpInfoSwitch } != 0)
    }

    /// Switches the caching of operator information (`ACL_STREAM_ATTR_CACHE_OP_INFO`).
    pub fn set_cache_op_info(&self, on: bool) -> Result<()> {
        let v = sys::aclrtStreamAttrValue {
            cacheOpInfoSwitch: u32::from(on),
        };
        self.set_attribute(sys::ACL_STREAM_ATTR_CACHE_OP_INFO, v)
    }

    /// The user's tag on the stream (`ACL_STREAM_ATTR_USER_CUSTOM_TAG`; 0 until set).
    pub fn user_tag(&self) -> Result<u32> {
        let v = self.attribute(sys::ACL_STREAM_ATTR_USER_CUSTOM_TAG)?;
        // SAFETY: as above.
        Ok(unsafe { v.userCustomTag })
    }

    /// Tags the stream (`ACL_STREAM_ATTR_USER_CUSTOM_TAG`).
    pub fn set_user_tag(&self, tag: u32) -> Result<()> {
        let v = sys::aclrtStreamAttrValue { userCustomTag: tag };
        self.set_attribute(sys::ACL_STREAM_ATTR_USER_CUSTOM_TAG, v)
    }

    /// The limit on one kind of compute resource for work on this stream
    /// (`aclrtGetStreamResLimit`): its own, else the device's.
    pub fn res_limit(&self, kind: ResourceKind) -> Result<u32> {
        self.make_current()?;
        let mut v = 0u32;
        // SAFETY: the stream is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtGetStreamResLimit(self.as_raw(), kind.into(), &mut v) }?;
        Ok(v)
    }

    /// Limits the cores of one kind that work on this stream may use
    /// (`aclrtSetStreamResLimit`); above the hardware count the runtime refuses it.
    pub fn set_res_limit(&self, kind: ResourceKind, value: u32) -> Result<()> {
        self.make_current()?;
        // SAFETY: the stream is live while `self` is; plain values.
        unsafe { raw::aclrtSetStreamResLimit(self.as_raw(), kind.into(), value) }
    }

    /// Drops the stream's own limits: the device's apply again (`aclrtResetStreamResLimit`).
    pub fn reset_res_limits(&self) -> Result<()> {
        self.make_current()?;
        // SAFETY: the stream is live while `self` is.
        unsafe { raw::aclrtResetStreamResLimit(self.as_raw()) }
    }

    /// Makes the calling thread use this stream's limits for the work it launches
    /// (`aclrtUseStreamResInCurrentThread`) until the returned guard is dropped
    /// (`aclrtUnuseStreamResInCurrentThread`). The guard belongs to this thread: it is neither
    /// `Send` nor `Sync`.
    pub fn use_res_limits(&self) -> Result<ThreadResLimits> {
        self.make_current()?;
        // SAFETY: the stream is live while `self` is.
        unsafe { raw::aclrtUseStreamResInCurrentThread(self.as_raw()) }?;
        Ok(ThreadResLimits {
            stream: Some(self.clone()),
            _thread: PhantomData,
        })
    }
}

/// The calling thread uses a stream's resource limits while this lives
/// ([`Stream::use_res_limits`]). Not `Send`: the runtime keeps the setting per thread.
#[derive(Debug)]
pub struct ThreadResLimits {
    stream: Option<Stream>,
    _thread: PhantomData<*const ()>,
}

impl ThreadResLimits {
    fn unuse(stream: &Stream) -> Result<()> {
        stream.make_current()?;
        // SAFETY: the stream is live (held by the guard).
        unsafe { raw::aclrtUnuseStreamResInCurrentThread(stream.as_raw()) }
    }

    /// Stops using the stream's limits (`aclrtUnuseStreamResInCurrentThread`), reporting a
    /// failure; the guard comes back with the error.
    pub fn release(mut self) -> ReleaseResult<(), Self> {
        let Some(stream) = self.stream.take() else {
            return Ok(());
        };
        match Self::unuse(&stream) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.stream = Some(stream);
                Err(ReleaseError::new(e, self))
            }
        }
    }
}

impl Drop for ThreadResLimits {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            crate::drop_errors::report(Self::unuse(&stream));
        }
    }
}

impl Device {
    /// How many more streams the device can create (`aclrtGetStreamAvailableNum`, asked in the
    /// device's context).
    pub fn available_streams(&self) -> Result<u32> {
        self.ensure_current()?;
        let mut n = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtGetStreamAvailableNum(&mut n) }?;
        Ok(n)
    }

    /// How many more events the device can create (`aclrtGetEventAvailNum`, asked in the
    /// device's context).
    pub fn available_events(&self) -> Result<u32> {
        self.ensure_current()?;
        let mut n = 0u32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtGetEventAvailNum(&mut n) }?;
        Ok(n)
    }
}

raw_enum! {
    /// What happened to a stream ([`StreamStateEvent::state`], `aclrtStreamState`).
    pub enum StreamState: sys::aclrtStreamState {
        /// `ACL_RT_STREAM_STATE_CREATE_POST`: the stream was just created.
        Created = sys::ACL_RT_STREAM_STATE_CREATE_POST,
        /// `ACL_RT_STREAM_STATE_DESTROY_PRE`: the stream is about to be destroyed.
        Destroying = sys::ACL_RT_STREAM_STATE_DESTROY_PRE,
    }
}

/// One report to a [`StreamStateCallback`]: which stream, and what happened to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStateEvent {
    /// The stream's raw handle, as an address (an identity only: `Send`, never dereferenced).
    stream: usize,
    /// What happened.
    pub state: StreamState,
}

impl StreamStateEvent {
    /// Whether the report is about `stream`. A destroyed stream's handle may be reused by a
    /// later stream.
    pub fn is_for(&self, stream: &Stream) -> bool {
        self.stream == stream.as_raw() as usize
    }

    /// The stream's raw handle, for comparing with handles created through raw FFI.
    pub fn raw_stream(&self) -> sys::aclrtStream {
        self.stream as sys::aclrtStream
    }
}

/// The closure a [`StreamStateCallback`] runs.
type StateFn = dyn Fn(StreamStateEvent) + Send + Sync + 'static;

/// What the runtime's `args` pointer points to. Never freed: after unregistering, a report
/// already on its way may still read it; it then finds no closure.
struct Slot {
    f: Mutex<Option<Arc<StateFn>>>,
    panic: Mutex<Option<String>>,
}

/// A closure registered for the creation and destruction of every stream of the process
/// (`aclrtRegStreamStateCallback`), until this is dropped or [`unregister`]ed (the same
/// function with a NULL callback).
///
/// The closure runs on the thread that creates or destroys the stream, while the runtime does
/// so: it must not create or destroy streams itself. A panic is caught at the FFI boundary and
/// reported by [`unregister`]. After unregistering no new report starts; one already running
/// finishes with the closure kept alive. A registration leaves a few words behind for the life
/// of the process (reports in flight may still read them).
///
/// [`unregister`]: StreamStateCallback::unregister
pub struct StreamStateCallback {
    name: CString,
    slot: &'static Slot,
    registered: bool,
}

impl std::fmt::Debug for StreamStateCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamStateCallback")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

unsafe extern "C" fn state_trampoline(
    stream: sys::aclrtStream,
    state: sys::aclrtStreamState,
    args: *mut c_void,
) {
    // SAFETY: `args` is the `&'static Slot` passed at registration, never freed.
    let slot = unsafe { &*args.cast_const().cast::<Slot>() };
    let f = slot
        .f
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let (Some(f), Ok(state)) = (f, StreamState::try_from(state)) else {
        return;
    };
    let ran = catch_unwind(AssertUnwindSafe(|| {
        f(StreamStateEvent {
            stream: stream as usize,
            state,
        })
    }));
    if let Err(p) = ran {
        let message = host_fn::panic_message(&*p);
        slot.panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(message);
    }
}

static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

impl StreamStateCallback {
    /// Registers `f` under a name unique to this registration.
    pub fn register<F>(f: F) -> Result<StreamStateCallback>
    where
        F: Fn(StreamStateEvent) + Send + Sync + 'static,
    {
        let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
        let name = CString::new(format!(
            "ascendcl-rs-stream-state-{}-{n}",
            std::process::id()
        ))
        .map_err(|e| Error::argument("aclrtRegStreamStateCallback", e.to_string()))?;
        let slot: &'static Slot = Box::leak(Box::new(Slot {
            f: Mutex::new(Some(Arc::new(f))),
            panic: Mutex::new(None),
        }));
        let args = std::ptr::from_ref(slot).cast_mut().cast::<c_void>();
        // SAFETY: a NUL-terminated name; the trampoline matches the C signature and `args`
        // stays valid for the life of the process.
        let r = unsafe {
            raw::aclrtRegStreamStateCallback(name.as_ptr(), Some(state_trampoline), args)
        };
        if let Err(e) = r {
            // Never registered: drop the closure now (the slot's few words stay).
            slot.f.lock().unwrap_or_else(PoisonError::into_inner).take();
            return Err(e);
        }
        Ok(StreamStateCallback {
            name,
            slot,
            registered: true,
        })
    }

    fn unregister_inner(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        // SAFETY: the name registered by `register`; a NULL callback unregisters it.
        unsafe {
            raw::aclrtRegStreamStateCallback(self.name.as_ptr(), None, std::ptr::null_mut())
        }?;
        self.registered = false;
        self.slot
            .f
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        Ok(())
    }

    /// Unregisters the closure. A panic of the closure while it was registered is reported as
    /// [`Error::CallbackPanicked`] (the closure is unregistered all the same). When the runtime
    /// refuses, the registration stays and the drop of this value tries again.
    pub fn unregister(mut self) -> Result<()> {
        self.unregister_inner()?;
        let panic = self
            .slot
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match panic {
            None => Ok(()),
            Some(message) => Err(Error::CallbackPanicked {
                what: "stream state callback",
                message,
            }),
        }
    }
}

impl Drop for StreamStateCallback {
    fn drop(&mut self) {
        let r = self.unregister_inner();
        crate::drop_errors::report(r);
    }
}
