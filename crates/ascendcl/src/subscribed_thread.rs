//! A thread of this crate subscribed to a stream, which loops on a runtime call that runs the
//! work the stream hands it ([`SubscribedThread`]): started, subscribed, stopped and joined the
//! same way for report callbacks (`aclrtSubscribeReport`) and host functions
//! (`aclrtSubscribeHostFunc`), each a [`Subscription`].

use crate::current;
use crate::error::{Error, Result};
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// What one kind of subscription names and calls.
pub(crate) trait Subscription {
    /// The subscribed thread's name.
    const THREAD_NAME: &'static str;
    /// The subscribing C function, named by a failure to spawn the thread.
    const SUBSCRIBE_API: &'static str;
    /// The thread in messages ("the report thread").
    const THREAD: &'static str;

    /// One wait of the subscribed thread for work, running what arrives.
    fn process() -> Result<()>;

    /// Whether a failed [`process`](Self::process) only means nothing arrived in time.
    fn timed_out(e: &Error) -> bool;

    /// Subscribes thread `thread_id` to `stream`.
    ///
    /// # Safety
    /// `stream` is live.
    unsafe fn subscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()>;

    /// Undoes [`subscribe`](Self::subscribe).
    ///
    /// # Safety
    /// `stream` is live.
    unsafe fn unsubscribe(thread_id: u64, stream: sys::aclrtStream) -> Result<()>;
}

/// A thread subscribed to a stream as `S` says. It holds a handle on the stream; stopping it
/// ([`shutdown`](Self::shutdown)) waits for the stream, lets the thread run what is queued,
/// joins it and unsubscribes.
#[derive(Debug)]
pub(crate) struct SubscribedThread<S> {
    stream: Stream,
    thread_id: u64,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<()>>>,
    _kind: PhantomData<fn() -> S>,
}

impl<S: Subscription> SubscribedThread<S> {
    /// Spawns the thread and subscribes it to `stream`. The thread waits until the subscription
    /// is made (and leaves at once when it is refused), then loops on [`Subscription::process`]
    /// with the stream's context current.
    pub(crate) fn start(stream: &Stream) -> Result<Self> {
        use std::os::unix::thread::JoinHandleExt;
        stream.make_current()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (go_tx, go_rx) = std::sync::mpsc::channel::<bool>();
        let ctx = stream.raw_context() as usize;
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(S::THREAD_NAME.into())
            .spawn(move || -> Result<()> {
                if !go_rx.recv().unwrap_or(false) {
                    return Ok(());
                }
                current::force_current(ctx as sys::aclrtContext)?;
                loop {
                    // Read before waiting: once asked to stop, the thread still runs everything
                    // already queued (`NoBlock` report callbacks the stream synchronisation did
                    // not wait for, say) and leaves at the first wait that finds nothing, so no
                    // closure is left behind unrun.
                    let stopping = stop2.load(Ordering::Acquire);
                    match S::process() {
                        Ok(()) => {}
                        Err(e) if S::timed_out(&e) => {
                            if stopping {
                                return Ok(());
                            }
                        }
                        Err(e) => return Err(e),
                    }
                }
            })
            .map_err(|e| {
                Error::argument(S::SUBSCRIBE_API, format!("cannot spawn {}: {e}", S::THREAD))
            })?;
        // `pthread_t` is a `u64` on Linux and a `usize` on macOS; the runtime takes a `u64`.
        #[allow(clippy::unnecessary_cast)]
        let thread_id = thread.as_pthread_t() as u64;
        // SAFETY: the stream is live: the caller lends a handle on it.
        if let Err(e) = unsafe { S::subscribe(thread_id, stream.as_raw()) } {
            let _ = go_tx.send(false);
            let _ = thread.join();
            return Err(e);
        }
        let _ = go_tx.send(true);
        Ok(SubscribedThread {
            stream: stream.clone(),
            thread_id,
            stop,
            thread: Some(thread),
            _kind: PhantomData,
        })
    }

    /// The OS thread id passed to the subscribing function.
    pub(crate) fn thread_id(&self) -> u64 {
        self.thread_id
    }

    /// The subscribed stream.
    pub(crate) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for the stream, stops and joins the thread and unsubscribes, reporting failures
    /// (including the thread's own); nothing the second time.
    pub(crate) fn shutdown(&mut self) -> Result<()> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        // The work already launched runs before the thread stops.
        let synced = self.stream.synchronize();
        self.stop.store(true, Ordering::Release);
        let joined = thread.join().unwrap_or_else(|_| {
            Err(Error::HostFnPanicked {
                message: format!("{} panicked", S::THREAD),
            })
        });
        let _ = self.stream.make_current();
        // SAFETY: the stream is live: `self` holds a handle on it.
        let unsub = unsafe { S::unsubscribe(self.thread_id, self.stream.as_raw()) };
        synced.and(joined).and(unsub)
    }
}
