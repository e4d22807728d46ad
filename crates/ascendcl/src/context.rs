//! Explicit contexts (`aclrtCreateContext` … `aclrtDestroyContext`) and [`Context::bind`].
//!
//! A [`Context`] is an extra context on a device: a reference-counted handle that keeps its
//! [`Device`] open, and that streams created in it keep alive in turn. Calls of this crate make
//! their own context current (see the `current` module), so `bind` is for raw FFI that needs a
//! known current context for the duration of a closure.

use crate::current;
use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::Result;
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::stream::{Owner, Stream, StreamFlags};
use ascendcl_sys as sys;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// An explicitly created context on a device (`aclrtCreateContext`; destroyed with
/// `aclrtDestroyContext` when its last handle goes).
///
/// Cheap to clone, `Send + Sync`, `'static`; it keeps its [`Device`] open, and streams created
/// in it keep it alive.
#[derive(Debug, Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

impl Context {
    /// A weak reference that stays upgradable while any handle on the context lives (how a
    /// process-wide record of a context tells a live context from one whose address was reused).
    pub(crate) fn liveness(&self) -> std::sync::Weak<dyn std::any::Any + Send + Sync> {
        let strong: Arc<dyn std::any::Any + Send + Sync> = self.inner.clone();
        Arc::downgrade(&strong)
    }
}

#[derive(Debug)]
struct ContextInner {
    /// NULL once destroyed explicitly.
    raw: sys::aclrtContext,
    device: Device,
}

// SAFETY: a context handle is a plain value the runtime accepts from any thread; the runtime
// makes it current per thread, which every call of this crate does first.
unsafe impl Send for ContextInner {}
// SAFETY: as above; `raw` is never mutated while shared.
unsafe impl Sync for ContextInner {}

/// The explicit contexts alive in the process (weak: the handles own them), so that
/// [`Context::bind`] can tell whether the context it restores still exists.
/// Each entry is the context's address and a weak reference; only a matching entry is upgraded,
/// so that no last handle is dropped while the lock is held.
static LIVE: Mutex<Vec<(usize, Weak<ContextInner>)>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<(usize, Weak<ContextInner>)>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A handle on whatever owns `ctx` (an open device's default context, or an explicit context),
/// if it is alive: holding it keeps `ctx` alive.
fn owner_of(ctx: sys::aclrtContext) -> Option<Owner> {
    if ctx.is_null() {
        return None;
    }
    if let Some(d) = crate::device::owner_of(ctx) {
        return Some(Owner::Device(d));
    }
    live()
        .iter()
        .filter(|(raw, _)| *raw == ctx as usize)
        .find_map(|(_, w)| w.upgrade())
        .map(|inner| Owner::Context(Context { inner }))
}

impl Context {
    pub(crate) fn create(device: &Device) -> Result<Context> {
        let at = current::epoch();
        // SAFETY: a valid out-pointer.
        let raw = raw::out(|c| unsafe { raw::aclrtCreateContext(c, device.id()) })?;
        // aclrtCreateContext made the new context current on this thread.
        current::note_current_at(raw, at);
        let inner = Arc::new(ContextInner {
            raw,
            device: device.clone(),
        });
        let mut l = live();
        l.retain(|(_, w)| w.strong_count() > 0);
        l.push((raw as usize, Arc::downgrade(&inner)));
        Ok(Context { inner })
    }

    /// The raw `aclrtContext`, for FFI.
    pub fn as_raw(&self) -> sys::aclrtContext {
        self.inner.raw
    }

    /// The id of the device the context belongs to.
    pub fn device_id(&self) -> i32 {
        self.inner.device.id()
    }

    /// The device the context belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// Runs `f` with this context current on the calling thread (`aclrtSetCurrentContext`), then
    /// makes the previously current context current again, also when `f` panics. (When the
    /// previous context is gone by then — its last handle dropped, on any thread — it is not
    /// restored, and the next call of this crate makes its own context current.)
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let ctx = dev.create_context()?;
    /// let raw = ctx.bind(|current| current.as_raw())?;
    /// assert_eq!(raw, ctx.as_raw());
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn bind<R>(&self, f: impl FnOnce(&CurrentContext<'_>) -> R) -> Result<R> {
        let previous = current::remembered();
        current::force_current(self.inner.raw)?;
        struct Restore {
            previous: sys::aclrtContext,
        }
        impl Drop for Restore {
            fn drop(&mut self) {
                // Only a context that some handle still owns is made current again; the handle
                // found is held meanwhile, so the context cannot go away during the call.
                match owner_of(self.previous) {
                    Some(owner) => {
                        crate::drop_errors::report(current::force_current(self.previous));
                        drop(owner);
                    }
                    None => current::forget(),
                }
            }
        }
        let _restore = Restore { previous };
        Ok(f(&CurrentContext {
            raw: self.inner.raw,
            _not_send: PhantomData,
        }))
    }

    /// Creates a stream in this context (default flags, priority 0).
    pub fn create_stream(&self) -> Result<Stream> {
        self.create_stream_with(StreamFlags::empty(), 0)
    }

    /// Creates a stream in this context with flags and a priority (0 highest … 7).
    pub fn create_stream_with(&self, flags: StreamFlags, priority: u32) -> Result<Stream> {
        Stream::create(self.into(), flags, priority)
    }

    /// Releases this handle. When it was the last one (no clone, no stream of the context), the
    /// context is destroyed now (`aclrtDestroyContext`); on failure it is still alive and comes
    /// back with the error ([`ReleaseError`]): retry, or drop it. Otherwise this returns `Ok` and
    /// the last handle destroys it.
    pub fn destroy(self) -> ReleaseResult<(), Self> {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(_shared) => return Ok(()),
        };
        current::invalidate();
        // SAFETY: `raw` is a live context owned by this, the only handle; on success it is never
        // used again (cleared below).
        match unsafe { raw::aclrtDestroyContext(inner.raw) } {
            Ok(()) => {
                inner.raw = std::ptr::null_mut();
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(
                e,
                Context {
                    inner: Arc::new(inner),
                },
            )),
        }
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let (raw, device) = (Raw(self.raw), self.device.clone());
        deferred::release(move || {
            current::invalidate();
            // SAFETY: the context was owned by the last handle, which is gone; released once.
            let r = unsafe { raw::aclrtDestroyContext(raw.get()) };
            drop(device);
            r
        });
    }
}

/// Proof, inside [`Context::bind`], that a context is current on this thread. Not `Send`: the
/// current context is per thread.
#[derive(Debug)]
pub struct CurrentContext<'c> {
    raw: sys::aclrtContext,
    _not_send: PhantomData<&'c *mut ()>,
}

impl CurrentContext<'_> {
    /// The current context's raw handle.
    pub fn as_raw(&self) -> sys::aclrtContext {
        self.raw
    }

    /// The default stream of this context (`aclrtCtxGetCurrentDefaultStream`), as a raw handle.
    /// The runtime owns it and it lives as long as the context; it is for FFI (a launch on the
    /// default stream through [`raw`](crate::raw)) and for display. Work of this crate goes to
    /// streams it creates, so that a scope can wait for exactly its own.
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let ctx = rt.device(0)?.create_context()?;
    /// let stream = ctx.bind(|current| current.default_stream())??;
    /// assert!(!stream.is_null());
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn default_stream(&self) -> Result<sys::aclrtStream> {
        // A call of this crate inside the closure may have made its own context current.
        current::ensure_current(self.raw)?;
        let mut stream: sys::aclrtStream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        unsafe { crate::raw::aclrtCtxGetCurrentDefaultStream(&mut stream) }?;
        Ok(stream)
    }
}
