//! Contexts: a device's default context (shared by every thread that sets the device) and the
//! contexts `aclrtCreateContext` makes, each with its default stream and the failure state its
//! streams share; the calling thread's current context.

use crate::base::error::*;
use crate::base::hooks;
use crate::base::hub::{self, Kind, Resource, registry};
use crate::engine::failure::CtxFailure;
use crate::engine::stream::Stream;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    pub failure: Arc<CtxFailure>,
}

impl Context {
    /// Whether the context is still live (not destroyed, its device not released).
    pub(crate) fn alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }
}

impl Resource for Context {
    const KIND: Kind = Kind::Context;

    fn handle(&self) -> usize {
        self.handle
    }

    fn device(&self) -> Option<i32> {
        Some(self.device)
    }
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

/// The device and its incarnation of the calling thread's current context (for allocations).
pub(crate) fn current_device_epoch() -> R<(i32, u64)> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(ctx) if ctx.alive() => Ok((ctx.device, ctx.epoch)),
        _ => no_context(),
    })
}

/// Makes `ctx` (or none) the calling thread's current context.
pub(crate) fn set_current(ctx: Option<Arc<Context>>) {
    CURRENT.with(|c| *c.borrow_mut() = ctx);
}

/// Forgets the calling thread's current context if it is `h`.
pub(crate) fn clear_current_if(h: usize) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_some_and(|x| x.handle == h) {
            *c = None;
        }
    });
}

/// A new context of `device` (incarnation `epoch`) with its default stream, both registered.
/// The caller announces the default stream ([`hooks::stream_created`]) once it holds no lock.
pub(crate) fn make(device: i32, epoch: u64, is_default: bool) -> Arc<Context> {
    let handle = hub::new_handle();
    let failure = Arc::new(CtxFailure::default());
    let stream = Stream::new(
        hub::new_handle(),
        handle,
        device,
        true,
        0,
        0,
        Arc::clone(&failure),
    );
    registry::<Stream>().insert(Arc::clone(&stream));
    let ctx = Arc::new(Context {
        handle,
        device,
        epoch,
        is_default,
        alive: AtomicBool::new(true),
        default_stream: stream,
        failure,
    });
    registry::<Context>().insert(Arc::clone(&ctx));
    ctx
}

/// Takes the contexts out of the registry (they are no longer live) and closes their streams:
/// each is announced as destroyed and closed, waiting for its work (`force`: its waits give up;
/// see [`Stream::close`]). The streams closed.
pub(crate) fn retire(ctxs: &[Arc<Context>], force: bool) -> Vec<Arc<Stream>> {
    for c in ctxs {
        c.alive.store(false, Ordering::Release);
        registry::<Context>().remove(c.handle);
    }
    let streams = registry::<Stream>().remove_where(|s| ctxs.iter().any(|c| c.handle == s.ctx));
    for s in &streams {
        close(s, force);
    }
    streams
}

/// Closes a stream taken out of the registry: it is announced as destroyed, the concepts forget
/// what they kept for it, then its queue closes.
fn close(s: &Stream, force: bool) {
    hooks::stream_destroying(s.handle);
    hooks::stream_destroyed(s.handle);
    s.close(force);
}

/// Resolves a context handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Context>> {
    registry::<Context>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("context {h:#x} is not a live context"),
    })
}

/// `aclrtCreateContext`: the new context becomes current.
pub(crate) fn create(device: i32) -> R<usize> {
    super::check(device)?;
    let ctx = super::add_user_context(device);
    let h = ctx.handle;
    let default_stream = ctx.default_stream.handle;
    set_current(Some(ctx));
    hooks::stream_created(default_stream);
    Ok(h)
}

/// `aclrtDestroyContext`: its streams close after their work; the device is released when
/// nothing else holds it.
pub(crate) fn destroy(h: usize) -> R {
    let ctx = get(h)?;
    if ctx.is_default {
        return fail(
            RT_PARAM_INVALID,
            format!("context {h:#x} is a device's default context; aclrtResetDevice releases it"),
        );
    }
    retire(&[Arc::clone(&ctx)], false);
    super::remove_user_context(&ctx);
    clear_current_if(h);
    Ok(())
}

/// `aclrtSetCurrentContext`.
pub(crate) fn set_current_context(h: usize) -> R {
    set_current(Some(get(h)?));
    Ok(())
}

/// `aclrtGetCurrentContext`.
pub(crate) fn current_context() -> R<usize> {
    current_ids().map(|(_, h)| h)
}

/// `aclrtGetDevice`: the device of the current context.
pub(crate) fn current_device() -> R<i32> {
    current_ids().map(|(d, _)| d)
}
