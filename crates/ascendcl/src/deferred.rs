//! Releases that must not run on a runtime callback thread.
//!
//! Handles are `Send + 'static`, so a host function (`aclrtLaunchHostFunc`, report callbacks) may
//! capture one and drop it when it has run — on the runtime's callback thread, where the runtime
//! forbids freeing memory, destroying streams or synchronising. While a callback of this crate
//! runs, its thread is marked; a release requested there is handed to a release thread of this
//! crate instead of running in place. Everywhere else a release runs at once.

use crate::error::Result;
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

type Job = Box<dyn FnOnce() -> Result<()> + Send>;

thread_local! {
    /// Whether this thread is running a callback of this crate.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as a runtime callback thread until dropped.
pub(crate) struct CallbackMark {
    was: bool,
}

impl CallbackMark {
    pub(crate) fn enter() -> CallbackMark {
        let was = IN_CALLBACK.try_with(|c| c.replace(true)).unwrap_or(false);
        CallbackMark { was }
    }
}

impl Drop for CallbackMark {
    fn drop(&mut self) {
        let _ = IN_CALLBACK.try_with(|c| c.set(self.was));
    }
}

pub(crate) fn in_callback() -> bool {
    IN_CALLBACK.try_with(Cell::get).unwrap_or(false)
}

/// An error for a synchronisation asked for on a runtime callback thread (a host function, an
/// exception callback), where the runtime forbids it: the stream the callback runs for may be
/// the one waited for, which would wait for the callback itself.
pub(crate) fn refuse_sync_on_callback(api: &'static str) -> Result<()> {
    if !in_callback() {
        return Ok(());
    }
    Err(crate::error::Error::argument(
        api,
        "called on a runtime callback thread (a host function or an exception callback), where \
         the runtime forbids synchronising: the callback may be what the wait waits for",
    ))
}

/// Runs `release` now, or — on a runtime callback thread — on the release thread; a failure goes
/// to [`take_drop_errors`](crate::take_drop_errors) either way.
pub(crate) fn release(release: impl FnOnce() -> Result<()> + Send + 'static) {
    if !in_callback() {
        crate::drop_errors::report(release());
        return;
    }
    let job: Job = Box::new(release);
    if let Err(job) = send(job) {
        // No release thread could be started: releasing in place is the only way not to leak.
        crate::drop_errors::report(job());
    }
}

static QUEUE: Mutex<Option<Sender<Job>>> = Mutex::new(None);

/// Hands `job` to the release thread, starting it on first use; gives the job back when no thread
/// can be started.
fn send(job: Job) -> std::result::Result<(), Job> {
    let mut q = QUEUE.lock().unwrap_or_else(|p| p.into_inner());
    let job = match q.as_ref() {
        Some(tx) => match tx.send(job) {
            Ok(()) => return Ok(()),
            Err(e) => e.0,
        },
        None => job,
    };
    let (tx, rx) = channel::<Job>();
    let spawned = std::thread::Builder::new()
        .name("ascendcl-release".into())
        .spawn(move || {
            for job in rx {
                crate::drop_errors::report(job());
            }
        });
    if spawned.is_err() {
        return Err(job);
    }
    let sent = tx.send(job).map_err(|e| e.0);
    *q = Some(tx);
    sent
}

/// A raw runtime handle or device address carried to the release thread.
///
/// The runtime accepts its handles and device addresses from any thread (with the right context
/// current, which every release sets first); the value is never dereferenced on the host.
pub(crate) struct Raw<T>(pub(crate) *mut T);

impl<T> Raw<T> {
    /// The value (a method, so that a closure captures the whole `Raw`, not its field).
    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: see the type's documentation: the pointer is an opaque runtime value, only passed back
// to the runtime, by one release.
unsafe impl<T> Send for Raw<T> {}
