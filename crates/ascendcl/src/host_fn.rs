//! Host closures enqueued on streams: `aclrtLaunchHostFunc`, and the older subscribe/report model
//! (`aclrtSubscribeReport`, `aclrtLaunchCallback`, `aclrtProcessReport`,
//! `aclrtUnSubscribeReport`).
//!
//! Closures are `FnOnce + Send + 'static`: they run on a runtime (or report) thread. A panic is
//! caught before it reaches the C caller, stored in the closure's [`HostFnHandle`] and reported by
//! the stream's next synchronisation as [`Error::HostFnPanicked`]. While a closure runs (and is
//! dropped), releases of the handles it captured are handed to a release thread (the `deferred`
//! module): the runtime forbids freeing or destroying on its callback thread.

use crate::deferred::CallbackMark;
use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::stream::{Stream, StreamShared};
use crate::subscribed_thread::{SubscribedThread, Subscription};
use ascendcl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

type Outcome = Result<()>;

#[derive(Debug, Default)]
struct Completion {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

/// A handle on a host closure launched on a stream: whether it ran, and how.
#[derive(Debug, Clone)]
pub struct HostFnHandle {
    completion: Arc<Completion>,
}

impl HostFnHandle {
    /// Whether the closure has run (or panicked).
    pub fn is_finished(&self) -> bool {
        self.lock().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Outcome>> {
        self.completion
            .outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn to_result(o: &Outcome) -> Result<()> {
        o.clone()
    }

    /// Blocks until the closure has run; its panic, if any, is the error. A closure whose stream
    /// was destroyed with [`Stream::destroy_force`] before reaching it never runs: it is dropped
    /// and this returns [`Error::HostFnDiscarded`]. (A stream torn down by raw FFI gives no such
    /// notice: use [`HostFnHandle::wait_timeout`] when that can happen.)
    pub fn wait(&self) -> Result<()> {
        let mut g = self.lock();
        loop {
            if let Some(o) = g.as_ref() {
                return Self::to_result(o);
            }
            g = self
                .completion
                .done
                .wait(g)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// As [`HostFnHandle::wait`], giving up after `timeout` (`None` when the closure has not run
    /// by then).
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<()>> {
        let g = self.lock();
        let (g, _) = self
            .completion
            .done
            .wait_timeout_while(g, timeout, |o| o.is_none())
            .unwrap_or_else(|p| p.into_inner());
        g.as_ref().map(Self::to_result)
    }
}

/// What a launched closure needs when it runs.
struct Job {
    f: Box<dyn FnOnce() + Send>,
    stream: Arc<StreamShared>,
    completion: Arc<Completion>,
}

/// The argument handed to the runtime: one strong `Arc` reference owned by the runtime's task
/// (consumed by the trampoline, or by `reclaim` when the launch is refused). The stream keeps a
/// weak reference so that [`discard_pending`] can drop the closure of a task that a forced
/// destruction discarded. Whoever takes the `Job` out of the mutex first runs or drops it: the
/// closure is dropped exactly once.
pub(crate) struct Payload {
    job: Mutex<Option<Job>>,
}

impl Payload {
    fn take(&self) -> Option<Job> {
        self.job.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

fn complete(completion: &Completion, outcome: Outcome) {
    // Nothing here can panic: a poisoned lock is recovered.
    let mut g = completion.outcome.lock().unwrap_or_else(|p| p.into_inner());
    *g = Some(outcome);
    completion.done.notify_all();
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// The C entry point: runs the boxed closure once, never unwinding into the caller.
unsafe extern "C" fn trampoline(arg: *mut c_void) {
    // SAFETY: `arg` is the strong reference leaked by `package` for the runtime's task, passed
    // to exactly one call (the runtime calls a host function once).
    let payload = unsafe { Arc::from_raw(arg.cast_const().cast::<Payload>()) };
    // Releases of handles the closure captured (dropped below, or when it returns) go to the
    // release thread.
    let _mark = CallbackMark::enter();
    let job = payload.take();
    drop(payload);
    // None: the closure was already dropped by `discard_pending`.
    let Some(Job {
        f,
        stream,
        completion,
    }) = job
    else {
        return;
    };
    let outcome = catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let m = panic_message(&*p);
        // A payload whose own Drop panics must not unwind into the C caller either.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(p)));
        m
    });
    if let Err(m) = &outcome {
        stream.record_panic(m.clone());
    }
    complete(
        &completion,
        outcome.map_err(|message| Error::HostFnPanicked { message }),
    );
}

fn package(stream: &Stream, f: Box<dyn FnOnce() + Send>) -> (*mut c_void, HostFnHandle) {
    let completion = Arc::new(Completion::default());
    let payload = Arc::new(Payload {
        job: Mutex::new(Some(Job {
            f,
            stream: stream.shared().clone(),
            completion: completion.clone(),
        })),
    });
    stream.shared().track(Arc::downgrade(&payload));
    (
        Arc::into_raw(payload).cast_mut().cast(),
        HostFnHandle { completion },
    )
}

/// Reclaims a payload the runtime refused, so nothing leaks on the error path.
fn reclaim(arg: *mut c_void) {
    // SAFETY: the runtime returned an error, so it will never call the trampoline with `arg`;
    // this consumes the strong reference `package` leaked for it, once.
    drop(unsafe { Arc::from_raw(arg.cast_const().cast::<Payload>()) });
}

/// After a forced destruction of the stream: drops the closures that never ran (the runtime
/// discarded their tasks) and completes their handles with [`Error::HostFnDiscarded`]. The
/// runtime's own reference to such a payload (a few words, without the closure) is not freed:
/// the runtime might still be about to call the trampoline, which then finds nothing to run.
pub(crate) fn discard_pending(pending: Vec<Weak<Payload>>) {
    for w in pending {
        let Some(job) = w.upgrade().and_then(|p| p.take()) else {
            continue;
        };
        let Job { f, completion, .. } = job;
        // A captured value whose Drop panics must not escape either.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(f)));
        complete(&completion, Err(Error::HostFnDiscarded));
    }
}

pub(crate) fn launch(stream: &Stream, f: Box<dyn FnOnce() + Send>) -> Result<HostFnHandle> {
    // An abort of the stream cannot come between the runtime's queueing and the entry in the
    // stream's list of pending functions (it would drop a function the runtime kept).
    let _launching = stream.shared().launching()?;
    let (arg, handle) = package(stream, f);
    // SAFETY: the stream is live; the trampoline consumes `arg` once.
    match unsafe { raw::aclrtLaunchHostFunc(stream.as_raw(), Some(trampoline), arg) } {
        Ok(()) => Ok(handle),
        Err(e) => {
            reclaim(arg);
            Err(e)
        }
    }
}

raw_enum! {
    /// Whether the stream waits for a report callback (`aclrtCallbackBlockType`).
    pub enum CallbackBlock: sys::aclrtCallbackBlockType {
        /// `ACL_CALLBACK_NO_BLOCK`: the stream goes on while the callback runs.
        NoBlock = sys::ACL_CALLBACK_NO_BLOCK,
        /// `ACL_CALLBACK_BLOCK`: later work waits for the callback.
        Block = sys::ACL_CALLBACK_BLOCK,
    }
}

/// A report thread subscribed to a stream (`aclrtSubscribeReport`): it loops on
/// `aclrtProcessReport` and runs the callbacks launched with
/// [`ReportSubscription::launch_callback`]. Dropping it (or [`ReportSubscription::close`])
/// unsubscribes (`aclrtUnSubscribeReport`) and joins the thread.
///
/// It holds a handle on the stream. Not `Send`: it owns the report thread, and must be closed by
/// the thread that opened it (never by a callback it runs, which would wait for itself).
#[derive(Debug)]
pub struct ReportSubscription {
    thread: SubscribedThread<Reports>,
    _not_send: PhantomData<*mut ()>,
}

/// How long one `aclrtProcessReport` call waits before the report thread checks for shutdown.
const REPORT_POLL_MS: i32 = 20;

/// The report kind of subscription.
#[derive(Debug)]
struct Reports;

impl Subscription for Reports {
    const THREAD_NAME: &'static str = "ascendcl-report";
    const SUBSCRIBE_API: &'static str = "aclrtSubscribeReport";
    const THREAD: &'static str = "the report thread";

    fn process() -> Result<()> {
        // SAFETY: a plain value; called by the report thread the subscriptions name.
        unsafe { raw::aclrtProcessReport(REPORT_POLL_MS) }
    }

    fn timed_out(e: &Error) -> bool {
        e.code() == Some(sys::AclError::REPORT_TIMEOUT)
            || e.code() == Some(sys::AclError::WAIT_CALLBACK_TIMEOUT)
    }

    unsafe fn subscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtSubscribeReport(thread_id, stream) }
    }

    unsafe fn unsubscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
        // SAFETY: the caller's guarantee.
        unsafe { raw::aclrtUnSubscribeReport(thread_id, stream) }
    }
}

impl ReportSubscription {
    /// Enqueues `f` on the subscribed stream (`aclrtLaunchCallback`); the report thread runs it
    /// when the stream reaches it. Panics are caught and reported as for
    /// [`Stream::launch_host_fn`].
    pub fn launch_callback<F>(&self, block: CallbackBlock, f: F) -> Result<HostFnHandle>
    where
        F: FnOnce() + Send + 'static,
    {
        let stream = self.thread.stream();
        stream.make_current()?;
        let (arg, handle) = package(stream, Box::new(f));
        // SAFETY: the stream is live and subscribed; the trampoline consumes `arg` once.
        match unsafe {
            raw::aclrtLaunchCallback(Some(trampoline), arg, block.into(), stream.as_raw())
        } {
            Ok(()) => Ok(handle),
            Err(e) => {
                reclaim(arg);
                Err(e)
            }
        }
    }

    /// The OS thread id passed to `aclrtSubscribeReport`.
    pub fn thread_id(&self) -> u64 {
        self.thread.thread_id()
    }

    /// Unsubscribes and joins the report thread, reporting failures (including the report
    /// thread's own).
    pub fn close(mut self) -> Result<()> {
        self.thread.shutdown()
    }
}

impl Drop for ReportSubscription {
    fn drop(&mut self) {
        crate::drop_errors::report(self.thread.shutdown());
    }
}

impl Stream {
    /// Starts a report thread for this stream (`aclrtSubscribeReport`), for
    /// [`ReportSubscription::launch_callback`].
    pub fn subscribe_report(&self) -> Result<ReportSubscription> {
        Ok(ReportSubscription {
            thread: SubscribedThread::start(self)?,
            _not_send: PhantomData,
        })
    }
}
