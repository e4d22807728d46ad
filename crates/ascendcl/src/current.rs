//! The calling thread's current context, as this crate last set it.
//!
//! The runtime keeps one *current context* per thread, and memory, stream, event and copy calls
//! act on it. Handles of this crate can be used from any thread, so every call makes its
//! handle's context current first ([`ensure_current`]): a thread-local compare, and
//! `aclrtSetCurrentContext` only when this thread's current context is another one.
//!
//! What a thread remembers is a pair (context, epoch). The epoch is process-wide and moves
//! forward *before* any context is destroyed or any device reset, on whichever thread that
//! happens (handles are released by the thread that drops the last reference). A remembered
//! context from an older epoch is never trusted: the runtime may have handed the same address to
//! a new context since, and skipping `aclrtSetCurrentContext` would then leave the thread on a
//! destroyed one.

use crate::error::Result;
use crate::raw;
use ascendcl_sys as sys;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Moves forward before every context destruction and device reset in the process.
static EPOCH: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The context this crate last made current on this thread and the epoch it was made current
    /// in (epoch 0: nothing remembered).
    static CURRENT: Cell<(sys::aclrtContext, u64)> =
        const { Cell::new((std::ptr::null_mut(), 0)) };
}

/// The current epoch.
#[inline]
pub(crate) fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Called before a context is destroyed or a device reset: every remembered context of every
/// thread stops being trusted.
pub(crate) fn invalidate() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// What this thread remembers (NULL when nothing, or when it is from an older epoch).
pub(crate) fn remembered() -> sys::aclrtContext {
    match CURRENT.try_with(Cell::get) {
        Ok((ctx, at)) if at == epoch() => ctx,
        _ => std::ptr::null_mut(),
    }
}

/// Makes `ctx` current on this thread unless this crate already did in the current epoch.
///
/// `ctx` must be a live context owned by a handle the caller holds.
#[inline]
pub(crate) fn ensure_current(ctx: sys::aclrtContext) -> Result<()> {
    // `try_with`: a handle may be used while this thread's locals are being destroyed; the
    // context is then set unconditionally.
    if let Ok((c, at)) = CURRENT.try_with(Cell::get)
        && c == ctx
        && at == epoch()
    {
        return Ok(());
    }
    force_current(ctx)
}

/// As [`ensure_current`] for the context of a copy endpoint; NULL (memory that names no context,
/// such as a host slice) leaves the current context as it is.
#[inline]
pub(crate) fn ensure_known(ctx: sys::aclrtContext) -> Result<()> {
    if ctx.is_null() {
        return Ok(());
    }
    ensure_current(ctx)
}

/// Makes `ctx` current on this thread (`aclrtSetCurrentContext`) and remembers it.
pub(crate) fn force_current(ctx: sys::aclrtContext) -> Result<()> {
    // Read before the call: an invalidation racing with it leaves an older epoch remembered, so
    // the next `ensure_current` sets the context again (never the other way round).
    let at = epoch();
    // SAFETY: every context passed here belongs to a live Device or Context handle that the
    // caller holds (see `ensure_current`).
    unsafe { raw::aclrtSetCurrentContext(ctx) }?;
    note_current_at(ctx, at);
    Ok(())
}

/// Records that the runtime itself made `ctx` current (after `aclrtSetDevice`,
/// `aclrtCreateContext`), in the epoch read before that call.
pub(crate) fn note_current_at(ctx: sys::aclrtContext, at: u64) {
    let _ = CURRENT.try_with(|c| c.set((ctx, at)));
}

/// Forgets what this thread remembers.
pub(crate) fn forget() {
    let _ = CURRENT.try_with(|c| c.set((std::ptr::null_mut(), 0)));
}

/// `aclrtGetCurrentContext`: the calling thread's current context as the runtime sees it.
pub fn current_context() -> Result<sys::aclrtContext> {
    // SAFETY: a valid out-pointer.
    raw::out(|c| unsafe { raw::aclrtGetCurrentContext(c) })
}
