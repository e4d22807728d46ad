//! Which thread each stream's queued host work goes to ([`Subscriptions`]): the registry behind
//! `aclrtSubscribeReport` (report callbacks) and, separately, `aclrtSubscribeHostFunc` (host
//! functions), each thread with one [`ReportQueue`].

use crate::host::report::ReportQueue;
use std::collections::HashMap;
use std::sync::Arc;

/// Streams subscribed to threads, and the queue of each subscribed thread. One stream has at
/// most one thread; a thread may serve several streams, and its queue lives while it serves one.
#[derive(Default)]
pub(crate) struct Subscriptions {
    by_stream: HashMap<usize, u64>,
    queues: HashMap<u64, Arc<ReportQueue>>,
}

impl Subscriptions {
    /// Routes `stream` to thread `tid`; the thread already subscribed as the error.
    pub(crate) fn subscribe(&mut self, tid: u64, stream: usize) -> Result<(), u64> {
        if let Some(t) = self.by_stream.get(&stream) {
            return Err(*t);
        }
        self.by_stream.insert(stream, tid);
        self.queues.entry(tid).or_default();
        Ok(())
    }

    /// Undoes [`subscribe`](Self::subscribe): `stream`'s queued work is dropped (its streams go
    /// on), and the thread's queue too when it serves no other stream. False when `stream` is
    /// not subscribed to `tid`.
    pub(crate) fn unsubscribe(&mut self, tid: u64, stream: usize) -> bool {
        if self.by_stream.get(&stream) != Some(&tid) {
            return false;
        }
        self.by_stream.remove(&stream);
        if let Some(q) = self.queues.get(&tid).cloned() {
            q.drop_stream(stream);
            if !self.by_stream.values().any(|t| *t == tid) {
                self.queues.remove(&tid);
            }
        }
        true
    }

    /// The queue of the thread subscribed to `stream`, if any.
    pub(crate) fn queue_for_stream(&self, stream: usize) -> Option<Arc<ReportQueue>> {
        self.by_stream
            .get(&stream)
            .and_then(|t| self.queues.get(t))
            .cloned()
    }

    /// The queue of thread `tid`, if it is subscribed to a stream.
    pub(crate) fn queue_of_thread(&self, tid: u64) -> Option<Arc<ReportQueue>> {
        self.queues.get(&tid).cloned()
    }

    /// Forgets a destroyed stream's subscription.
    pub(crate) fn stream_gone(&mut self, stream: usize) {
        if let Some(tid) = self.by_stream.get(&stream).copied() {
            self.unsubscribe(tid, stream);
        }
    }

    /// Forgets every subscription, dropping the work still queued (aclFinalize).
    pub(crate) fn clear(&mut self) {
        let streams: Vec<usize> = self.by_stream.keys().copied().collect();
        for (_, q) in self.queues.drain() {
            for st in &streams {
                q.drop_stream(*st);
            }
        }
        self.by_stream.clear();
    }
}
