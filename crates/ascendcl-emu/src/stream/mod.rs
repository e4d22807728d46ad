//! Streams as the application sees them: handles resolved (NULL is the current context's default
//! stream), created in the current context within the per-device limit, destroyed (after the
//! concepts that kept something for the stream forgot it), and the callbacks told of both.

pub(crate) mod callbacks;

use crate::base::error::*;
use crate::base::hooks;
use crate::base::hub::{self, Kind, Resource, registry};
use crate::device::context;
use crate::engine::stream::Stream;
use std::sync::Arc;

/// Streams per device beyond which creation fails with 207008 (hardware has a similar limit).
pub(crate) const MAX_PER_DEVICE: usize = 2048;

impl Resource for Stream {
    const KIND: Kind = Kind::Stream;

    fn handle(&self) -> usize {
        self.handle
    }

    fn device(&self) -> Option<i32> {
        Some(self.device)
    }
}

/// Resolves a stream handle; NULL is the current context's default stream.
pub(crate) fn get(h: usize) -> R<Arc<Stream>> {
    if h == 0 {
        return context::current().map(|c| Arc::clone(&c.default_stream));
    }
    registry::<Stream>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("stream {h:#x} is not a live stream (destroyed, or not a stream handle)"),
    })
}

/// Checks that `s` belongs to the calling thread's current context.
pub(crate) fn check_context(s: &Stream) -> R {
    let (_, ctx) = context::current_ids()?;
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

/// `aclrtCreateStream*` in the current context.
pub(crate) fn create(priority: u32, flags: u32) -> R<usize> {
    let ctx = context::current()?;
    let s = registry::<Stream>()
        .insert_within(ctx.device, MAX_PER_DEVICE, || {
            Stream::new(
                hub::new_handle(),
                ctx.handle,
                ctx.device,
                false,
                priority,
                flags,
                Arc::clone(&ctx.failure),
            )
        })
        .map_err(|n| Fail {
            code: RT_NO_STREAM_RESOURCE,
            msg: format!("device {} already has {n} streams", ctx.device),
        })?;
    hooks::stream_created(s.handle);
    Ok(s.handle)
}

/// `aclrtDestroyStream*`: a default stream lives as long as its context (107000); a capturing
/// stream (107027) or one bound to a model (107005) cannot be destroyed.
pub(crate) fn destroy(h: usize, force: bool) -> R {
    let s = registry::<Stream>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("stream {h:#x} is not a live stream"),
    })?;
    if s.is_default {
        return fail(
            RT_PARAM_INVALID,
            format!("stream {h:#x} is a default stream; it lives as long as its context"),
        );
    }
    s.check_destroy()?;
    // The stream state callbacks see the stream still live, as the runtime calls them.
    hooks::stream_destroying(h);
    if registry::<Stream>().remove(h).is_none() {
        return fail(
            RT_INVALID_HANDLE,
            format!("stream {h:#x} was destroyed by another call meanwhile"),
        );
    }
    hooks::stream_destroyed(h);
    s.close(force);
    Ok(())
}

/// The number of streams the device can still create.
pub(crate) fn available(dev: i32) -> u32 {
    MAX_PER_DEVICE.saturating_sub(registry::<Stream>().count_on(dev)) as u32
}
