//! Host-function subscription (`aclrtSubscribeHostFunc`, IPV350-class SoCs): host functions
//! launched on a subscribed stream run on the subscribed thread, inside its
//! `aclrtProcessHostFunc`, and the stream waits for each.

use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use crate::host::report::{ReportQueue, thread_id};
use crate::host::subscriptions::Subscriptions;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

static SUBS: LazyLock<Mutex<Subscriptions>> = LazyLock::new(|| Mutex::ranked(Rank::HostFuncs));

/// Routes the host functions of `stream` to thread `tid` (one thread per stream: 107011).
pub(crate) fn subscribe(tid: u64, stream: usize) -> R {
    super::report::HOOKS.ensure();
    SUBS.lock().subscribe(tid, stream).or_else(|t| {
        fail(
            RT_STREAM_SUBSCRIBE,
            format!("stream {stream:#x} already has host-function thread {t:#x}"),
        )
    })
}

/// Undoes [`subscribe`] (107011 when `stream` is not subscribed to `tid`). Host functions still
/// waiting for the thread are dropped and their streams go on.
pub(crate) fn unsubscribe(tid: u64, stream: usize) -> R {
    if !SUBS.lock().unsubscribe(tid, stream) {
        return fail(
            RT_STREAM_SUBSCRIBE,
            format!("stream {stream:#x} is not subscribed to host-function thread {tid:#x}"),
        );
    }
    Ok(())
}

/// The queue of the thread subscribed to `stream`, if any.
pub(crate) fn queue_for(stream: usize) -> Option<Arc<ReportQueue>> {
    SUBS.lock().queue_for_stream(stream)
}

/// `aclrtProcessHostFunc`: runs one host function for the calling thread, waiting up to
/// `timeout` ms (-1: forever; 0 or < -1: 107000); 107012 when the thread has no subscription,
/// 507012 when nothing arrived in time.
pub(crate) fn process(timeout: i32) -> R {
    if timeout == 0 || timeout < -1 {
        return fail(
            RT_PARAM_INVALID,
            format!("timeout {timeout} is invalid (-1 waits forever, otherwise milliseconds > 0)"),
        );
    }
    let tid = thread_id();
    let q = SUBS.lock().queue_of_thread(tid);
    let Some(q) = q else {
        return fail(
            RT_THREAD_SUBSCRIBE,
            format!("thread {tid:#x} is not subscribed to any stream (aclrtSubscribeHostFunc)"),
        );
    };
    let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    if !q.run_one(deadline) {
        return fail(
            RT_REPORT_TIMEOUT,
            format!("no host function arrived within {timeout} ms"),
        );
    }
    Ok(())
}

/// Forgets a destroyed stream's subscription.
pub(crate) fn stream_gone(stream: usize) {
    SUBS.lock().stream_gone(stream);
}

/// Forgets every subscription (aclFinalize).
pub(crate) fn clear() {
    SUBS.lock().clear();
}
