//! `aclrtLaunchCallback` reports: subscriptions of streams to threads that loop on
//! `aclrtProcessReport`.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::lock::{Condvar, Mutex, Rank, wait_until};
use crate::host::subscriptions::Subscriptions;
use crate::host::work::HostFn;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// The longest a stream waiting for a blocking callback sleeps before it looks at its
/// cancellation flag again.
const SLICE: Duration = Duration::from_millis(20);

/// Completion flag of a blocking callback.
#[derive(Debug)]
pub(crate) struct Done {
    m: Mutex<bool>,
    cv: Condvar,
}

impl Default for Done {
    fn default() -> Done {
        Done {
            m: Mutex::new(Rank::Done, false),
            cv: Condvar::new(),
        }
    }
}

impl Done {
    fn signal(&self) {
        *self.m.lock() = true;
        self.cv.notify_all();
    }

    /// Waits until the callback ran, or `cancel` is set (its stream was aborted, stopped or
    /// destroyed by force: the stream gives up waiting; the callback still runs when its thread
    /// processes it).
    pub(crate) fn wait(&self, cancel: &AtomicBool) {
        let mut g = self.m.lock();
        while !*g && !cancel.load(Ordering::Acquire) {
            let (back, _) = wait_until(&self.cv, g, Some(Instant::now() + SLICE), |d| *d);
            g = back;
        }
    }
}

struct Report {
    f: HostFn,
    arg: usize,
    stream: usize,
    done: Option<Arc<Done>>,
}

/// The reports waiting for one subscribed thread.
pub(crate) struct ReportQueue {
    q: Mutex<VecDeque<Report>>,
    cv: Condvar,
}

impl Default for ReportQueue {
    fn default() -> ReportQueue {
        ReportQueue {
            q: Mutex::new(Rank::ReportQueue, VecDeque::new()),
            cv: Condvar::new(),
        }
    }
}

impl std::fmt::Debug for ReportQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportQueue").finish_non_exhaustive()
    }
}

impl ReportQueue {
    pub(crate) fn push(&self, f: HostFn, arg: usize, stream: usize, done: Option<Arc<Done>>) {
        self.q.lock().push_back(Report {
            f,
            arg,
            stream,
            done,
        });
        self.cv.notify_all();
    }

    /// Waits for a report until `deadline` (None: forever) and runs it on the calling thread;
    /// false when none arrived in time.
    pub(crate) fn run_one(&self, deadline: Option<Instant>) -> bool {
        let g = self.q.lock();
        let (mut g, ok) = wait_until(&self.cv, g, deadline, |v| !v.is_empty());
        if !ok {
            return false;
        }
        let r = g.pop_front().expect("non-empty");
        drop(g);
        // SAFETY: whoever queued the report provided a function and argument that are valid to
        // call from the thread that processes reports.
        unsafe { (r.f)(r.arg as *mut c_void) };
        if let Some(d) = r.done {
            d.signal();
        }
        true
    }

    /// Drops the reports of `stream` (signalling blocked workers).
    pub(crate) fn drop_stream(&self, stream: usize) {
        let mut q = self.q.lock();
        q.retain(|r| {
            if r.stream == stream {
                if let Some(d) = &r.done {
                    d.signal();
                }
                false
            } else {
                true
            }
        });
    }
}

static SUBS: LazyLock<Mutex<Subscriptions>> = LazyLock::new(|| Mutex::ranked(Rank::Reports));

/// The calling thread's id as `aclrtSubscribeReport` expects it (`pthread_self`).
pub(crate) fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// Routes the callbacks of `stream` to thread `tid`.
pub(crate) fn subscribe(tid: u64, stream: usize) -> R {
    HOOKS.ensure();
    SUBS.lock().subscribe(tid, stream).or_else(|t| {
        fail(
            RT_STREAM_SUBSCRIBE,
            format!("stream {stream:#x} is already subscribed to thread {t:#x}"),
        )
    })
}

/// Undoes [`subscribe`].
pub(crate) fn unsubscribe(tid: u64, stream: usize) -> R {
    if !SUBS.lock().unsubscribe(tid, stream) {
        return fail(
            RT_STREAM_NO_CB_REG,
            format!("stream {stream:#x} is not subscribed to thread {tid:#x}"),
        );
    }
    Ok(())
}

/// A destroyed stream's subscriptions go with it; finalize forgets them all.
pub(super) static HOOKS: Registration = Registration::new(Hooks {
    name: "host subscriptions",
    stream_destroyed: Some(stream_gone),
    finalized: Some(finalized),
    ..Hooks::NONE
});

fn finalized(_: &mut crate::base::leak::LeakReport) {
    clear();
}

/// Forgets a destroyed stream's subscriptions (reports and host functions).
pub(crate) fn stream_gone(stream: usize) {
    crate::host::host_func::stream_gone(stream);
    SUBS.lock().stream_gone(stream);
}

/// Forgets every subscription (aclFinalize).
pub(crate) fn clear() {
    crate::host::host_func::clear();
    SUBS.lock().clear();
}

/// The report queue of the thread subscribed to `stream`.
pub(crate) fn queue_for(stream: usize) -> R<Arc<ReportQueue>> {
    match SUBS.lock().queue_for_stream(stream) {
        Some(q) => Ok(q),
        None => fail(
            RT_STREAM_NO_CB_REG,
            format!(
                "stream {stream:#x} has no thread subscribed (call aclrtSubscribeReport first)"
            ),
        ),
    }
}

/// `aclrtProcessReport`: runs one callback for the calling thread, waiting up to `timeout` ms
/// (-1: forever).
pub(crate) fn process(timeout: i32) -> R {
    if timeout < -1 {
        return fail(
            RT_PARAM_INVALID,
            format!("timeout {timeout} is invalid (-1 waits forever)"),
        );
    }
    let tid = thread_id();
    let q = SUBS.lock().queue_of_thread(tid);
    let Some(q) = q else {
        return fail(
            RT_THREAD_SUBSCRIBE,
            format!("thread {tid:#x} is not subscribed to any stream (aclrtSubscribeReport)"),
        );
    };
    let deadline = (timeout >= 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    if !q.run_one(deadline) {
        return fail(
            RT_REPORT_TIMEOUT,
            format!("no callback arrived within {timeout} ms"),
        );
    }
    Ok(())
}
