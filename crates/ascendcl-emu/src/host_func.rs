//! Host-function subscription (`aclrtSubscribeHostFunc`, IPV350-class SoCs): host functions
//! launched on a subscribed stream run on the subscribed thread, inside its
//! `aclrtProcessHostFunc`, and the stream waits for each.

use crate::callback::{ReportQueue, thread_id};
use crate::error::*;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Subs {
    by_stream: HashMap<usize, u64>,
    queues: HashMap<u64, Arc<ReportQueue>>,
}

static SUBS: LazyLock<Mutex<Subs>> = LazyLock::new(|| Mutex::new(Subs::default()));

/// Routes the host functions of `stream` to thread `tid` (one thread per stream: 107011).
pub(crate) fn subscribe(tid: u64, stream: usize) -> R {
    let mut s = lock(&SUBS);
    if let Some(t) = s.by_stream.get(&stream) {
        return fail(
            RT_STREAM_SUBSCRIBE,
            format!("stream {stream:#x} already has host-function thread {t:#x}"),
        );
    }
    s.by_stream.insert(stream, tid);
    s.queues.entry(tid).or_default();
    Ok(())
}

/// Undoes [`subscribe`] (107011 when `stream` is not subscribed to `tid`). Host functions still
/// waiting for the thread are dropped and their streams go on.
pub(crate) fn unsubscribe(tid: u64, stream: usize) -> R {
    let mut s = lock(&SUBS);
    if s.by_stream.get(&stream) != Some(&tid) {
        return fail(
            RT_STREAM_SUBSCRIBE,
            format!("stream {stream:#x} is not subscribed to host-function thread {tid:#x}"),
        );
    }
    s.by_stream.remove(&stream);
    if let Some(q) = s.queues.get(&tid).cloned() {
        q.drop_stream(stream);
        if !s.by_stream.values().any(|t| *t == tid) {
            s.queues.remove(&tid);
        }
    }
    Ok(())
}

/// The queue of the thread subscribed to `stream`, if any.
pub(crate) fn queue_for(stream: usize) -> Option<Arc<ReportQueue>> {
    let s = lock(&SUBS);
    s.by_stream
        .get(&stream)
        .and_then(|t| s.queues.get(t))
        .cloned()
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
    let q = lock(&SUBS).queues.get(&tid).cloned();
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
    let tid = lock(&SUBS).by_stream.get(&stream).copied();
    if let Some(tid) = tid {
        let _ = unsubscribe(tid, stream);
    }
}

/// Forgets every subscription (aclFinalize).
pub(crate) fn clear() {
    let mut s = lock(&SUBS);
    let streams: Vec<usize> = s.by_stream.keys().copied().collect();
    for (_, q) in s.queues.drain() {
        for st in &streams {
            q.drop_stream(*st);
        }
    }
    s.by_stream.clear();
}
