//! Host-function subscription (`aclrtSubscribeHostFunc`): a thread of this crate subscribed to
//! a stream runs the host functions launched on it, inside `aclrtProcessHostFunc`. Only the
//! IPV350 class of SoCs offers it; other runtimes answer `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`,
//! which [`Stream::subscribe_host_fns`] returns as that typed error.

use crate::current;
use crate::error::{Error, Result};
use crate::raw;
use crate::stream::Stream;
use ascendcl_sys::{self as sys, AclError};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// How long one `aclrtProcessHostFunc` call waits before the thread checks for shutdown.
const POLL_MS: i32 = 20;

/// A thread subscribed to a stream's host functions (`aclrtSubscribeHostFunc`): while it
/// lives, [`Stream::launch_host_fn`] closures launched on the stream run on this thread (it
/// loops on `aclrtProcessHostFunc`) instead of a runtime thread, in stream order, and the
/// stream waits for each. Dropping it (or [`HostFnSubscription::close`]) waits for the
/// stream, unsubscribes (`aclrtUnSubscribeHostFunc`) and joins the thread.
///
/// It holds a handle on the stream. Not `Send`: it owns its thread and must be closed by the
/// thread that opened it (never by a host function it runs, which would wait for itself).
#[derive(Debug)]
pub struct HostFnSubscription {
    stream: Stream,
    thread_id: u64,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<()>>>,
    _not_send: PhantomData<*mut ()>,
}

/// Whether a failed `aclrtProcessHostFunc` only means nothing arrived in time.
fn timed_out(e: &Error) -> bool {
    matches!(
        e.code(),
        Some(AclError::REPORT_TIMEOUT)
            | Some(AclError::WAIT_CALLBACK_TIMEOUT)
            | Some(AclError::TIMEOUT)
            | Some(AclError::WAIT_TIMEOUT)
    )
}

impl HostFnSubscription {
    fn subscribe(stream: &Stream) -> Result<Self> {
        use std::os::unix::thread::JoinHandleExt;
        stream.make_current()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (go_tx, go_rx) = std::sync::mpsc::channel::<bool>();
        let ctx = stream.raw_context() as usize;
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("ascendcl-host-fn".into())
            .spawn(move || -> Result<()> {
                if !go_rx.recv().unwrap_or(false) {
                    return Ok(());
                }
                current::force_current(ctx as sys::aclrtContext)?;
                loop {
                    // Read before waiting: once asked to stop, the thread still runs what is
                    // queued and leaves at the first wait that finds nothing.
                    let stopping = stop2.load(Ordering::Acquire);
                    // SAFETY: a plain value; this thread is the subscribed one, and the closures
                    // it runs were packaged by `Stream::launch_host_fn` to run once.
                    match unsafe { raw::aclrtProcessHostFunc(POLL_MS) } {
                        Ok(()) => {}
                        Err(e) if timed_out(&e) => {
                            if stopping {
                                return Ok(());
                            }
                        }
                        Err(e) => return Err(e),
                    }
                }
            })
            .map_err(|e| {
                Error::argument(
                    "aclrtSubscribeHostFunc",
                    format!("cannot spawn the host-function thread: {e}"),
                )
            })?;
        // `pthread_t` is a `u64` on Linux and a `usize` on macOS; the runtime takes a `u64`.
        #[allow(clippy::unnecessary_cast)]
        let thread_id = thread.as_pthread_t() as u64;
        // SAFETY: the stream is live: the caller lends a handle on it.
        if let Err(e) = unsafe { raw::aclrtSubscribeHostFunc(thread_id, stream.as_raw()) } {
            let _ = go_tx.send(false);
            let _ = thread.join();
            return Err(e);
        }
        let _ = go_tx.send(true);
        Ok(HostFnSubscription {
            stream: stream.clone(),
            thread_id,
            stop,
            thread: Some(thread),
            _not_send: PhantomData,
        })
    }

    /// The OS thread id passed to `aclrtSubscribeHostFunc`.
    pub fn thread_id(&self) -> u64 {
        self.thread_id
    }

    /// The subscribed stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for the stream, unsubscribes and joins the thread, reporting failures (including
    /// the thread's own).
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        // The host functions already launched run before the thread stops.
        let synced = self.stream.synchronize();
        self.stop.store(true, Ordering::Release);
        let joined = thread.join().unwrap_or_else(|_| {
            Err(Error::HostFnPanicked {
                message: "the host-function thread panicked".into(),
            })
        });
        let _ = self.stream.make_current();
        // SAFETY: the stream is live: the subscription holds a handle on it.
        let unsub = unsafe { raw::aclrtUnSubscribeHostFunc(self.thread_id, self.stream.as_raw()) };
        synced.and(joined).and(unsub)
    }
}

impl Drop for HostFnSubscription {
    fn drop(&mut self) {
        crate::drop_errors::report(self.shutdown());
    }
}

impl Stream {
    /// Starts a thread that runs this stream's host functions (`aclrtSubscribeHostFunc`).
    /// Offered by IPV350-class SoCs only: elsewhere the runtime's
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` comes back as the error
    /// (`e.code() == Some(AclError::FEATURE_NOT_SUPPORT)`), and host functions keep running on
    /// the runtime's thread.
    pub fn subscribe_host_fns(&self) -> Result<HostFnSubscription> {
        HostFnSubscription::subscribe(self)
    }
}
