//! Work of one scope continued on another stream ([`Scope::hand_off`]): a thin layer over a
//! scope of several streams ([`Scope::on`]). The other stream joins the scope, waits for the
//! caller's event or notify ([`Handoff`]), and the closure enqueues on it; the scope's tracking
//! orders every use of claimed memory on either stream after the uses it conflicts with on the
//! other. Every wait it queues is for an event record enqueued before it, so no hand-off can
//! wait for itself, however many threads hand off between the same streams.

use crate::error::Result;
use crate::event::Event;
use crate::notify::Notify;
use crate::scope::Scope;
use crate::stream::Stream;
use std::time::Duration;

/// What the other stream of a [`Scope::hand_off`] first waits for, on top of the order the scope
/// keeps for claimed memory.
#[derive(Debug, Clone, Copy)]
pub enum Handoff<'a> {
    /// `event` recorded on the scope's stream (`aclrtRecordEvent`) and waited for by the other
    /// (`aclrtStreamWaitEvent`, or `aclrtStreamWaitEventWithTimeout` with a timeout).
    Event {
        /// The event, which the caller may also synchronise or query.
        event: &'a Event,
        /// How long the other stream waits (`None`: for ever).
        timeout: Option<Duration>,
    },
    /// `notify` recorded on the scope's stream (`aclrtRecordNotify`) and waited for by the
    /// other (`aclrtWaitAndResetNotify`).
    Notify {
        /// The notify.
        notify: &'a Notify,
        /// How long the other stream waits (`None`: for ever).
        timeout: Option<Duration>,
    },
}

impl<'a> Handoff<'a> {
    /// Ordered by `event`, waited for without a timeout.
    pub fn event(event: &'a Event) -> Handoff<'a> {
        Handoff::Event {
            event,
            timeout: None,
        }
    }

    /// Ordered by `notify`, waited for without a timeout.
    pub fn notify(notify: &'a Notify) -> Handoff<'a> {
        Handoff::Notify {
            notify,
            timeout: None,
        }
    }

    /// The same, the other stream's wait for the event or notify failing after `timeout`: the
    /// other stream's next synchronisation (the scope's end) reports
    /// `ACL_ERROR_RT_TASK_TIMEOUT`. The order of claimed memory stays: it does not rest on this
    /// wait.
    pub fn timeout(self, timeout: Duration) -> Handoff<'a> {
        match self {
            Handoff::Event { event, .. } => Handoff::Event {
                event,
                timeout: Some(timeout),
            },
            Handoff::Notify { notify, .. } => Handoff::Notify {
                notify,
                timeout: Some(timeout),
            },
        }
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Continues the scope's work on `other`: `other` joins the scope ([`Scope::on`]), waits
    /// for `by` (an event or a notify recorded here and waited for there, optionally with a
    /// timeout), and `f` enqueues on it through the scope on `other`, which accepts this scope's
    /// claimed regions. Uses of claimed memory are ordered across the two streams by the scope
    /// (an event `by` without a timeout is recognised as an order, so no second wait is queued
    /// for what it covers); the scope's end waits for both streams.
    ///
    /// Nothing here waits for work not enqueued yet, so hand-offs between the same streams from
    /// any number of threads cannot wait for each other in a cycle, and either stream may be
    /// stopped or aborted at any time (the scope then reports [`Error::Aborted`](crate::Error)).
    /// `other` may be on another device: claimed memory is then used there only with a live
    /// [`PeerAccess`](crate::PeerAccess) of the two.
    ///
    /// ```
    /// use ascendcl::{Handoff, ReduceKind};
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let (first, second) = (dev.create_stream()?, dev.create_stream()?);
    /// let event = dev.create_event()?;
    /// let mut x = dev.clone_htod(&[1i32, 2, 3])?;
    /// let ones = dev.clone_htod(&[1i32; 3])?;
    /// first.scope(|s| {
    ///     let x = s.claim(&mut x);
    ///     s.reduce(x, &ones, ReduceKind::Sum)?; // x += 1 on the first stream
    ///     s.hand_off(&second, Handoff::event(&event), |t| {
    ///         t.reduce(x, x, ReduceKind::Sum) // then x *= 2 on the second
    ///     })?;
    ///     s.reduce(x, &ones, ReduceKind::Sum) // then x += 1 on the first again
    /// })?;
    /// assert_eq!(x.to_vec()?, [5, 7, 9]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn hand_off<R>(
        &self,
        other: &'env Stream,
        by: Handoff<'scope>,
        f: impl FnOnce(&Scope<'scope, 'env>) -> Result<R>,
    ) -> Result<R> {
        let there = self.on(other)?;
        match by {
            Handoff::Event { event, timeout } => {
                self.record_event(event)?;
                there.wait_event_timeout(event, timeout)?;
            }
            Handoff::Notify { notify, timeout } => {
                self.record_notify(notify)?;
                there.wait_notify(notify, timeout)?;
            }
        }
        f(&there)
    }
}
