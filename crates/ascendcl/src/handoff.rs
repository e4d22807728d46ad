//! Work of one scope continued on another stream of its context ([`Scope::hand_off`]): the
//! other stream waits for this one's work so far, through an event or a notify of the caller's
//! choosing ([`Handoff`]), and this stream's later work waits for the other's, so the memory the
//! scope holds may be used on both.
//!
//! The argument (see also `docs/soundness.md`): a region claimed by a scope is used only by
//! work that the device runs one piece at a time. Work enqueued on the other stream inside the
//! hand-off waits (on the device) for everything the scope's stream had been given before, and
//! the scope's stream, before anything enqueued on it from then on, waits for the other
//! stream's hand-off work. Both orders rest on notifies that only the hand-off uses (the caller's
//! event or notify is waited for as well, with its timeout, but the order does not depend on
//! it: another thread may record the same event, a notify may hold an older record, a wait may
//! time out).

use crate::error::{Error, Result};
use crate::event::Event;
use crate::notify::Notify;
use crate::raw;
use crate::scope::{HandOffMark, Scope, Ties, wait_idle};
use crate::stream::Stream;
use std::rc::Rc;
use std::time::Duration;

/// How [`Scope::hand_off`] orders the other stream after the scope's stream.
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
    /// other stream's next synchronisation reports `ACL_ERROR_RT_TASK_TIMEOUT`. The order of the
    /// work stays (the hand-off's own wait has no timeout).
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

/// Ends a hand-off, also when its closure fails or panics: records the join notify on the other
/// stream, so that the scope's stream goes on, and takes the other stream off the scope's list.
struct Join<'a> {
    notify: Rc<Notify>,
    ties: &'a Ties,
    /// The stream handed to, which records the notify.
    other: &'a Stream,
    /// The scope's stream, which waits for it.
    here: &'a Stream,
    armed: bool,
}

impl Join<'_> {
    fn finish(&mut self) -> Result<()> {
        self.armed = false;
        self.ties.streams.borrow_mut().pop();
        // The notify is kept by the scope until its stream is idle.
        let recorded = record_notify(self.other, &self.notify);
        let Err(e) = recorded else {
            return Ok(());
        };
        // The scope's stream waits for a record that will not come. Wait on the host for the
        // other stream's work (it may use the scope's memory), then discard what the scope's
        // stream holds (discarded work never touches memory): the scope ends soundly.
        crate::drop_errors::report(wait_idle(self.other));
        crate::drop_errors::report(self.here.abort_marked());
        Err(e)
    }
}

impl Drop for Join<'_> {
    fn drop(&mut self) {
        if self.armed {
            crate::drop_errors::report(self.finish());
        }
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Continues the scope's work on `other`, a stream of the same context: `f` enqueues on
    /// `other` through a scope that accepts this scope's claimed regions, so one buffer can be
    /// worked on by both streams, in order.
    ///
    /// `other` first waits for this stream's work so far: for `by` (an event or a notify
    /// recorded here and waited for there, optionally with a timeout), and for a notify of the
    /// hand-off recorded right after it, which keeps the order whatever happens to `by`. This
    /// stream's later work, also what `f` enqueues on it through this scope, waits on the
    /// device for everything `f` enqueued on `other` (another notify of the hand-off, recorded
    /// on `other` when `f` returns, fails or panics). The scope's end waits for both streams
    /// (and reports the first failure of either), and until then neither may be stopped or
    /// aborted ([`Stream::stop`] and [`Stream::abort`] refuse).
    ///
    /// Errors ([`Error::Argument`]) before anything is enqueued: `other` is this scope's stream
    /// or one of a hand-off in progress, or is on another device or in another context (in one
    /// context a task failing in STOP mode stops both streams, whose waits would otherwise never
    /// end). While `f` runs, this stream holds its work until `f` returns: synchronising it (or
    /// an event recorded on it) inside `f` never returns.
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
        const API: &str = "Scope::hand_off";
        let here = self.stream();
        if self.ties().streams.borrow().contains(&other.as_raw()) {
            return Err(Error::argument(
                API,
                "the stream is this scope's or one of a hand-off in progress: it would wait for \
                 itself",
            ));
        }
        if other.device_id() != here.device_id() {
            return Err(Error::argument(
                API,
                format!(
                    "the streams are on devices {} and {}; a hand-off stays on one device",
                    here.device_id(),
                    other.device_id()
                ),
            ));
        }
        if other.raw_context() != here.raw_context() {
            return Err(Error::argument(
                API,
                "the streams belong to two contexts; a hand-off stays in one, where a task that \
                 fails in STOP mode stops both streams, so that neither waits for the other for \
                 ever",
            ));
        }
        let (fork, join) = (Notify::new(here.device())?, Notify::new(here.device())?);
        // The caller's order first, with its timeout.
        match by {
            Handoff::Event { event, timeout } => {
                event.record(here)?;
                other.wait_event_timeout(event, timeout)?;
            }
            Handoff::Notify { notify, timeout } => {
                self.record_notify(notify)?;
                wait_notify(other, notify, crate::notify::timeout_secs(timeout))?;
            }
        }
        // Then the hand-off's own: `other` after this stream's work so far, this stream's later
        // work after `other`'s hand-off work. Both notifies are fresh and used by nobody else.
        record_notify(here, &fork)?;
        wait_notify(other, &fork, 0)?;
        wait_notify(here, &join, 0)?;
        // From here the streams wait on the notifies: the scope keeps them until its end, waits
        // for `other` at its end as for its own stream, and keeps both streams from being
        // stopped or aborted meanwhile (that would discard a wait of the order).
        let ties = self.ties();
        let join = Rc::new(join);
        ties.keep.borrow_mut().push(Rc::new(fork));
        ties.keep.borrow_mut().push(Rc::clone(&join));
        ties.streams.borrow_mut().push(other.as_raw());
        ties.handed
            .borrow_mut()
            .push((other.as_raw(), other.raw_context()));
        ties.marks.borrow_mut().push(HandOffMark::new(here));
        ties.marks.borrow_mut().push(HandOffMark::new(other));
        let mut guard = Join {
            notify: join,
            ties,
            other,
            here,
            armed: true,
        };
        let r = f(&self.on_stream(other));
        let joined = guard.finish();
        match r {
            Ok(v) => joined.map(|()| v),
            Err(e) => {
                crate::drop_errors::report(joined);
                Err(e)
            }
        }
    }
}

/// Enqueues a record of `notify` on `stream`.
fn record_notify(stream: &Stream, notify: &Notify) -> Result<()> {
    stream.make_current()?;
    // SAFETY: both handles are live; the caller keeps the notify until the stream is done.
    unsafe { raw::aclrtRecordNotify(notify.as_raw(), stream.as_raw()) }
}

/// Enqueues a wait for (and reset of) `notify` on `stream`; `seconds` 0 waits for ever.
fn wait_notify(stream: &Stream, notify: &Notify, seconds: u32) -> Result<()> {
    stream.make_current()?;
    // SAFETY: as for `record_notify`.
    unsafe { raw::aclrtWaitAndResetNotify(notify.as_raw(), stream.as_raw(), seconds) }
}
