//! Contexts and the calling thread's current context.
//!
//! The runtime keeps one *current context* per thread; memory, stream and event calls act on it.
//! [`Device`] makes its default context current when opened. This crate remembers, per thread,
//! which context it last made current, and operations that create resources (allocations,
//! streams, events) or enqueue work on a stream make their own context current first when it is
//! not already — a thread-local compare, no runtime call in the common case. Synchronous copies
//! never change the current context.
//!
//! A [`Context`] is an extra context on a device (`aclrtCreateContext`). [`Context::bind`] runs a
//! closure with the context current and restores the previous one afterwards, even on panic, so
//! raw FFI inside the closure (for example a kernel launch) sees the context the code names.

use crate::device::Device;
use crate::error::Result;
use crate::release::{ReleaseError, ReleaseResult};
use crate::result;
use crate::stream::{Stream, StreamFlags};
use ascendcl_sys as sys;
use std::cell::Cell;
use std::marker::PhantomData;

thread_local! {
    /// The context this crate last made current on this thread (NULL: unknown).
    static CURRENT: Cell<sys::aclrtContext> = const { Cell::new(std::ptr::null_mut()) };
    /// Bumped whenever this thread resets a device or destroys a context: a context remembered
    /// before a change of epoch may no longer exist.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// Default contexts of the devices open on this thread, in opening order (one entry per
    /// `Device` handle).
    static LIVE: std::cell::RefCell<Vec<sys::aclrtContext>> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// Records a device handle opened on this thread.
pub(crate) fn device_opened(ctx: sys::aclrtContext) {
    // `try_with`: a handle may be created or dropped while this thread's locals are being
    // destroyed (a `Device<'static>` kept in a `thread_local!`); `with` would panic there.
    let _ = LIVE.try_with(|l| l.borrow_mut().push(ctx));
}

/// Records that a device handle of this thread was reset (`all`: every handle of that context,
/// after a forced reset), and makes a still-open device's context current so that calls that
/// rely on *some* current context (synchronous copies) keep working.
pub(crate) fn device_closed(ctx: sys::aclrtContext, all: bool) {
    forget_any();
    let fallback = LIVE
        .try_with(|l| {
            let mut l = l.borrow_mut();
            if all {
                l.retain(|&c| c != ctx);
            } else if let Some(i) = l.iter().rposition(|&c| c == ctx) {
                l.remove(i);
            }
            l.last().copied()
        })
        .ok()
        .flatten();
    if let Some(c) = fallback {
        crate::drop_errors::report(force_current(c));
    }
}

/// After a context of this thread was destroyed: when it was the current one, makes an open
/// device's context current instead.
fn context_destroyed(ctx: sys::aclrtContext) {
    let was_current = remembered() == ctx;
    forget_current(ctx);
    if was_current && let Ok(Some(c)) = LIVE.try_with(|l| l.borrow().last().copied()) {
        crate::drop_errors::report(force_current(c));
    }
}

fn bump_epoch() {
    EPOCH.with(|e| e.set(e.get().wrapping_add(1)));
}

fn epoch() -> u64 {
    EPOCH.with(Cell::get)
}

/// Makes `ctx` current on this thread unless this crate already did.
#[inline]
pub(crate) fn ensure_current(ctx: sys::aclrtContext) -> Result<()> {
    if CURRENT.with(Cell::get) == ctx {
        return Ok(());
    }
    force_current(ctx)
}

/// Makes `ctx` current on this thread (`aclrtSetCurrentContext`) and remembers it.
pub(crate) fn force_current(ctx: sys::aclrtContext) -> Result<()> {
    // SAFETY: every context this crate passes here is owned by a live Device or Context that the
    // caller borrows.
    unsafe { result::context::set_current(ctx) }?;
    CURRENT.with(|c| c.set(ctx));
    Ok(())
}

/// Records that the runtime itself made `ctx` current (after `aclrtSetDevice`,
/// `aclrtCreateContext`).
pub(crate) fn note_current(ctx: sys::aclrtContext) {
    CURRENT.with(|c| c.set(ctx));
}

/// Forgets the remembered context when it is `ctx` (it was destroyed or reset).
pub(crate) fn forget_current(ctx: sys::aclrtContext) {
    bump_epoch();
    CURRENT.with(|c| {
        if c.get() == ctx {
            c.set(std::ptr::null_mut());
        }
    });
}

/// Forgets the remembered context, whatever it is.
pub(crate) fn forget_any() {
    bump_epoch();
    CURRENT.with(|c| c.set(std::ptr::null_mut()));
}

pub(crate) fn remembered() -> sys::aclrtContext {
    CURRENT.with(Cell::get)
}

/// An explicitly created context on a device (`aclrtCreateContext` / `aclrtDestroyContext`).
///
/// Borrows its [`Device`]; streams created in it borrow the `Context`. Not `Send`: contexts are
/// made current per thread.
#[derive(Debug)]
pub struct Context<'d> {
    raw: sys::aclrtContext,
    device: i32,
    _device: PhantomData<&'d Device<'d>>,
}

impl<'d> Context<'d> {
    pub(crate) fn create(device: &'d Device<'_>) -> Result<Context<'d>> {
        let raw = result::context::create(device.id())?;
        // aclrtCreateContext made the new context current on this thread.
        note_current(raw);
        Ok(Context {
            raw,
            device: device.id(),
            _device: PhantomData,
        })
    }

    /// The raw `aclrtContext`, for FFI.
    pub fn as_raw(&self) -> sys::aclrtContext {
        self.raw
    }

    /// The id of the device the context belongs to.
    pub fn device_id(&self) -> i32 {
        self.device
    }

    /// Runs `f` with this context current on the calling thread (`aclrtSetCurrentContext`), then
    /// makes the previously current context current again, also when `f` panics. (When `f`
    /// resets a device or destroys a context, the previous context may be gone: it is then not
    /// restored, and the next operation of this crate makes its own context current.)
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let ctx = dev.create_context()?;
    /// let raw = ctx.bind(|bound| bound.as_raw())?;
    /// assert_eq!(raw, ctx.as_raw());
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn bind<R>(&self, f: impl FnOnce(&Bound<'_>) -> R) -> Result<R> {
        // Only a context this crate made current is restored: its owner is alive unless the
        // epoch changes.
        let previous = remembered();
        force_current(self.raw)?;
        struct Restore {
            previous: sys::aclrtContext,
            epoch: u64,
        }
        impl Drop for Restore {
            fn drop(&mut self) {
                if !self.previous.is_null() && epoch() == self.epoch {
                    crate::drop_errors::report(force_current(self.previous));
                } else {
                    forget_any();
                }
            }
        }
        let _restore = Restore {
            previous,
            epoch: epoch(),
        };
        Ok(f(&Bound {
            raw: self.raw,
            _not_send: PhantomData,
        }))
    }

    /// Creates a stream in this context (default flags, priority 0).
    pub fn create_stream(&self) -> Result<Stream<'_>> {
        self.create_stream_with(StreamFlags::empty(), 0)
    }

    /// Creates a stream in this context with flags and a priority (0 highest … 7).
    pub fn create_stream_with(&self, flags: StreamFlags, priority: u32) -> Result<Stream<'_>> {
        Stream::create(self.raw, self.device, flags, priority)
    }

    /// Destroys the context (`aclrtDestroyContext`). On failure the context is still alive and
    /// comes back with the error ([`ReleaseError`]): retry, or drop it.
    pub fn destroy(self) -> ReleaseResult<(), Self> {
        // SAFETY: `raw` is a live context owned by this handle; on success it is never used
        // again (forgotten below).
        match unsafe { result::context::destroy(self.raw) } {
            Ok(()) => {
                context_destroyed(self.raw);
                std::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` is a live context owned by this handle, released once.
        crate::drop_errors::report(unsafe { result::context::destroy(self.raw) });
        context_destroyed(self.raw);
    }
}

/// Proof, inside [`Context::bind`], that a context is current on this thread.
#[derive(Debug)]
pub struct Bound<'c> {
    raw: sys::aclrtContext,
    _not_send: PhantomData<&'c *mut ()>,
}

impl Bound<'_> {
    /// The current context's raw handle.
    pub fn as_raw(&self) -> sys::aclrtContext {
        self.raw
    }
}

/// `aclrtGetCurrentContext`: the calling thread's current context as the runtime sees it.
pub fn current_context() -> Result<sys::aclrtContext> {
    result::context::current()
}
