//! Work that returns at once ([`Stream::submit`], [`submit`]): the caller moves owned buffers
//! into a submission, enqueues work on them through a [`Scope`] that does not wait, and gets a
//! [`Submission`] that gives them back once every stream of it has passed the work — by
//! [`Submission::wait`], or as a [`Future`] woken by a host function the runtime calls at that
//! point (no polling thread, no executor of its own).
//!
//! The buffers stay in the submission's shared state until the last stream's completion has
//! run: dropping the handle neither blocks nor frees them early (the last completion drops
//! them, its releases going to this crate's release thread), and `mem::forget` of the handle
//! leaks them rather than freeing them.

use super::end::wait_idle;
use super::tracking::Tracking;
use super::{Scope, outcome};
use crate::error::{Error, Result};
use crate::host_fn;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Work submitted without waiting ([`Stream::submit`], [`submit`]), and the buffers it uses,
/// given back once every stream of the submission has passed the work.
///
/// * [`Submission::is_done`] tells without blocking; [`Submission::wait`] blocks;
/// * as a [`Future`] it is woken from the runtime's host-function callback that marks the
///   point: it works under any executor (tokio, smol, a plain `block_on`), and needs no thread
///   of its own;
/// * dropping it never blocks, and never frees the buffers before the streams are past them:
///   the last stream's completion drops them then.
///
/// The output is the buffers, or a [`SubmissionError`] with the buffers and what failed: the
/// submission's closure, the enqueueing of a completion (the stream was then waited for on the
/// host), or an abort of one of its streams ([`Error::Aborted`]). A task of the submission that
/// fails on the device is reported, as the runtime reports every failure of asynchronous work,
/// by the stream's next synchronisation ([`Stream::synchronize`], the end of a scope on it).
#[must_use = "dropping a submission gives its buffers up (they are freed once its streams are past them)"]
pub struct Submission<B> {
    shared: Arc<Shared<B>>,
}

/// What a submission's handle and its completions share.
struct Shared<B> {
    progress: Mutex<Progress<B>>,
    finished: Condvar,
    /// `Progress::left == 0`, readable without the lock.
    done: AtomicBool,
}

struct Progress<B> {
    /// The buffers (boxed: their own address stays put, for memory inside them).
    value: Option<Box<B>>,
    /// The first failure.
    error: Option<Error>,
    /// Completions not come yet, plus one while the submitting call still holds it.
    left: usize,
    waker: Option<Waker>,
    /// The handle was dropped: the last completion drops the buffers.
    abandoned: bool,
    /// The scope's events, given back to their streams' pools at the end.
    events: Vec<(Stream, Vec<sys::aclrtEvent>)>,
    /// The caller's events the scope recorded or waited for: kept until the streams are past
    /// them.
    kept: Vec<crate::event::Event>,
}

// SAFETY: the raw events are idle handles of live streams' pools (the streams are held with
// them), only handed back to those pools; everything else is `Send` when `B` is.
unsafe impl<B: Send> Send for Progress<B> {}

impl<B> Shared<B> {
    fn lock(&self) -> MutexGuard<'_, Progress<B>> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One completion came (or was discarded, with `error`).
    fn finish_one(&self, error: Option<Error>) {
        let mut p = self.lock();
        if let Some(e) = error
            && p.error.is_none()
        {
            p.error = Some(e);
        }
        p.left -= 1;
        if p.left > 0 {
            return;
        }
        let events = std::mem::take(&mut p.events);
        let kept = std::mem::take(&mut p.kept);
        let waker = p.waker.take();
        let value = if p.abandoned { p.value.take() } else { None };
        self.done.store(true, Ordering::Release);
        drop(p);
        self.finished.notify_all();
        // Every stream is past the work: its events' records were reached and their waits done.
        for (stream, events) in events {
            stream.give_events(events);
        }
        if let Some(w) = waker {
            w.wake();
        }
        // On a runtime callback thread the releases go to the release thread.
        drop(kept);
        drop(value);
    }
}

/// The completion of one stream of a submission: run by the host function enqueued after the
/// submission's work there, or dropped unrun when the stream discarded it (an abort).
struct Completion<B> {
    shared: Arc<Shared<B>>,
    stream: Stream,
    /// The stream's abort count when the submission began.
    aborts: u64,
    ran: bool,
}

impl<B> Completion<B> {
    fn run(mut self) {
        self.ran = true;
        let aborted = self.stream.shared().aborts.load(Ordering::Acquire) != self.aborts;
        self.shared
            .finish_one(aborted.then_some(Error::Aborted { what: "Submission" }));
    }
}

impl<B> Drop for Completion<B> {
    fn drop(&mut self) {
        if !self.ran {
            self.shared
                .finish_one(Some(Error::Aborted { what: "Submission" }));
        }
    }
}

impl<B> Submission<B> {
    /// A submission that failed before anything was enqueued: done, with its buffers.
    fn refused(value: B, error: Error) -> Submission<B> {
        Submission {
            shared: Arc::new(Shared {
                progress: Mutex::new(Progress {
                    value: Some(Box::new(value)),
                    error: Some(error),
                    left: 0,
                    waker: None,
                    abandoned: false,
                    events: Vec::new(),
                    kept: Vec::new(),
                }),
                finished: Condvar::new(),
                done: AtomicBool::new(true),
            }),
        }
    }

    /// Whether every stream of the submission has passed its work (the buffers can be taken
    /// without waiting).
    pub fn is_done(&self) -> bool {
        self.shared.done.load(Ordering::Acquire)
    }

    /// Blocks until every stream of the submission has passed its work, and gives the buffers
    /// back (with the failure, if any).
    pub fn wait(self) -> std::result::Result<B, SubmissionError<B>> {
        let mut p = self.shared.lock();
        while p.left > 0 {
            p = self
                .shared
                .finished
                .wait(p)
                .unwrap_or_else(|e| e.into_inner());
        }
        take(&mut p)
    }
}

/// The buffers and the failure of a finished submission.
fn take<B>(p: &mut Progress<B>) -> std::result::Result<B, SubmissionError<B>> {
    let value = *p
        .value
        .take()
        .expect("a submission's buffers are taken once, by its only handle");
    match p.error.take() {
        None => Ok(value),
        Some(error) => Err(SubmissionError { error, value }),
    }
}

impl<B> Future for Submission<B> {
    type Output = std::result::Result<B, SubmissionError<B>>;

    /// Ready once every stream of the submission has passed its work; the waker is woken from
    /// the runtime's host-function callback. Polling again after `Ready` panics, as the
    /// `Future` contract allows.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut p = self.shared.lock();
        if p.left == 0 {
            return Poll::Ready(take(&mut p));
        }
        if !p.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            p.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl<B> Drop for Submission<B> {
    fn drop(&mut self) {
        let mut p = self.shared.lock();
        if p.left > 0 {
            p.abandoned = true;
            return;
        }
        let value = p.value.take();
        drop(p);
        drop(value);
    }
}

impl<B> fmt::Debug for Submission<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Submission")
            .field("done", &self.is_done())
            .finish_non_exhaustive()
    }
}

/// A submission that failed: what failed, and its buffers, which are given back all the same
/// (once its streams were past them).
pub struct SubmissionError<B> {
    error: Error,
    value: B,
}

impl<B> SubmissionError<B> {
    /// What failed.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The buffers.
    pub fn into_value(self) -> B {
        self.value
    }

    /// The failure and the buffers.
    pub fn into_parts(self) -> (Error, B) {
        (self.error, self.value)
    }

    /// The failure, dropping the buffers.
    pub fn into_error(self) -> Error {
        self.error
    }
}

impl<B> fmt::Debug for SubmissionError<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubmissionError")
            .field("error", &self.error)
            .field("value", &std::any::type_name::<B>())
            .finish()
    }
}

impl<B> fmt::Display for SubmissionError<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<B> std::error::Error for SubmissionError<B> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

impl<B> From<SubmissionError<B>> for Error {
    /// Keeps the failure, dropping the buffers.
    fn from(e: SubmissionError<B>) -> Error {
        e.error
    }
}

/// Enqueues work on several streams without waiting for it: `buffers` move into the
/// submission, `f` enqueues work on them (and on `'static` memory) through the scope on each of
/// `streams` — copies, kernel launches, collectives, everything a [`Scope`] takes — with the
/// cross-stream ordering of a [`scope`](super::scope) over the same streams, and the call
/// returns at once. The returned [`Submission`] gives the buffers back when every stream has
/// passed the work.
///
/// `f` is `'static`: it cannot capture borrowed memory, which would have to stay borrowed
/// until the streams are done, long after this call returns. The buffers it works on are the
/// ones it is given, lent for the scope (`&'scope mut B`, destructured and claimed as needed).
/// When `f` fails (or panics) the work it enqueued still completes before the buffers come back
/// (with `f`'s error; a panic is resumed once the completions are enqueued). A stopped stream
/// ([`Stream::stop`]) or one in STOP failure mode (whose host functions the runtime skips after
/// a failure) is refused: the submission is done at once with the error.
///
/// ```
/// # let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let (up, down) = (dev.create_stream()?, dev.create_stream()?);
/// let buffers = (vec![1u32, 2, 3], dev.alloc_zeros::<u32>(3)?, vec![0u32; 3]);
/// let job = ascendcl::submit([&up, &down], buffers, |[u, d], (host, dev, back)| {
///     let dev = u.claim(dev);
///     u.copy(dev, &*host)?;
///     d.copy(back, dev) // ordered after the upload by the submission
/// });
/// let (_, _, back) = job.wait()?;
/// assert_eq!(back, [1, 2, 3]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn submit<'env, const N: usize, B, F>(
    streams: [&'env Stream; N],
    buffers: B,
    f: F,
) -> Submission<B>
where
    B: Send + 'static,
    F: for<'scope> FnOnce(&'scope [Scope<'scope, 'env>; N], &'scope mut B) -> Result<()> + 'static,
{
    const API: &str = "Submission";
    crate::trace::span!(
        "submit",
        streams = N,
        device = streams.first().map_or(-1, |s| s.device_id())
    );
    let opened =
        Tracking::open(API, &streams).and_then(|t| match streams.iter().find(|s| s.stop_mode()) {
            Some(_) => Err(Error::argument(
                API,
                "a stream's context is in STOP failure mode, where the runtime skips host \
                 functions after a failure: the submission's completion would never come",
            )),
            None => Ok(t),
        });
    let (t, lanes) = match opened {
        Ok(t) => t,
        Err(e) => return Submission::refused(buffers, e),
    };
    let state = RefCell::new(t);
    let mut value = Box::new(buffers);
    let ran = {
        let scopes: [Scope<'_, 'env>; N] = std::array::from_fn(|k| Scope::lane(&state, lanes[k]));
        catch_unwind(AssertUnwindSafe(|| f(&scopes, &mut *value)))
    };
    let (r, panic) = match ran {
        Ok(r) => (r, None),
        Err(p) => (
            Err(Error::HostFnPanicked {
                message: host_fn::panic_message(&*p),
            }),
            Some(p),
        ),
    };
    let submission = complete(state.into_inner(), value, r, panic.is_some());
    if let Some(p) = panic {
        drop(submission);
        resume_unwind(p);
    }
    submission
}

/// Enqueues one completion on every stream of the scope and gives the handle.
fn complete<B: Send + 'static>(
    mut t: Tracking<'_>,
    value: Box<B>,
    r: Result<()>,
    abandoned: bool,
) -> Submission<B> {
    let events = t
        .take_events()
        .into_iter()
        .map(|(s, e)| (s.clone(), e))
        .collect();
    let lanes: Vec<(Stream, u64)> = t
        .lanes
        .iter()
        .map(|l| (l.stream.clone(), l.aborts))
        .collect();
    let shared = Arc::new(Shared {
        progress: Mutex::new(Progress {
            value: Some(value),
            error: r.err(),
            // One per stream, and one held until every completion is enqueued.
            left: lanes.len() + 1,
            waker: None,
            abandoned,
            events,
            kept: t.take_kept(),
        }),
        finished: Condvar::new(),
        done: AtomicBool::new(false),
    });
    let several = lanes.len() > 1;
    let mut failed = None;
    for (lane, (stream, aborts)) in lanes.into_iter().enumerate() {
        let c = Completion {
            shared: Arc::clone(&shared),
            stream: stream.clone(),
            aborts,
            ran: false,
        };
        // A refused launch drops the completion (counted as done), so the stream's work is
        // waited for here, while the submission is still held.
        if let Err(e) = stream.launch_host_fn(move || c.run()) {
            let waited = wait_idle(stream.as_raw(), stream.raw_context());
            let e = outcome(Err::<(), _>(e), waited).unwrap_err();
            let e = if several {
                super::end::on_stream(lane, &stream, e)
            } else {
                e
            };
            failed.get_or_insert(e);
        }
    }
    shared.finish_one(failed);
    Submission { shared }
}

impl Stream {
    /// Enqueues work on this stream without waiting for it ([`submit`] with one stream): the
    /// buffers move into the submission, `f` enqueues work on them through the scope, and the
    /// returned [`Submission`] gives them back once the stream has passed the work.
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let dev = rt.device(0)?;
    /// let stream = dev.create_stream()?;
    /// let job = stream.submit((dev.alloc_zeros::<f32>(4)?, vec![0f32; 4]), |s, (d, back)| {
    ///     let d = s.claim(d);
    ///     s.fill(d, 2.5)?;
    ///     s.copy(back, d)
    /// });
    /// // ... other work meanwhile; `job.await` in async code.
    /// let (_, back) = job.wait()?;
    /// assert_eq!(back, [2.5; 4]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn submit<'env, B, F>(&'env self, buffers: B, f: F) -> Submission<B>
    where
        B: Send + 'static,
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>, &'scope mut B) -> Result<()> + 'static,
    {
        submit([self], buffers, move |[s], b| f(s, b))
    }
}
