//! The end of a scope: the host waits until every one of its streams has finished its work, on
//! every way out (return, error, panic), before the borrows are released — and never returns
//! while a stream may still use them.

use super::tracking::Tracking;
use crate::current;
use crate::error::{Error, Result};
use crate::raw;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::cell::RefCell;
use std::sync::atomic::Ordering;

/// Waits for every stream of the scope when dropped (unless [`End::wait`] did): the end of
/// every scope, unwinding included.
pub(crate) struct End<'a, 'env> {
    state: &'a RefCell<Tracking<'env>>,
    armed: bool,
}

impl<'a, 'env> End<'a, 'env> {
    pub(crate) fn new(state: &'a RefCell<Tracking<'env>>) -> Self {
        End { state, armed: true }
    }

    /// Waits until every stream of the scope is idle (see [`wait_idle`]); then gives the
    /// scope's events back to their streams' pools. The first failure is returned — in a scope
    /// of several streams as [`Error::OnStream`], naming the stream — and the others go to
    /// [`take_drop_errors`](crate::take_drop_errors). A host function that panicked on a stream
    /// is a failure ([`Error::HostFnPanicked`]), so is an abort of a stream while the scope
    /// used it ([`Error::Aborted`]).
    pub(crate) fn wait(&mut self) -> Result<()> {
        self.armed = false;
        let lanes: Vec<(&'env Stream, u64)> = self
            .state
            .borrow()
            .lanes
            .iter()
            .map(|l| (l.stream, l.aborts))
            .collect();
        let several = lanes.len() > 1;
        let mut first = Ok(());
        for (lane, &(stream, aborts)) in lanes.iter().enumerate() {
            let r = wait_idle(stream.as_raw(), stream.raw_context())
                .and_then(|()| stream.shared().take_panic())
                .and_then(|()| {
                    if stream.shared().aborts.load(Ordering::Acquire) != aborts {
                        Err(Error::Aborted {
                            what: "Stream::scope",
                        })
                    } else {
                        Ok(())
                    }
                });
            let r = r.map_err(|e| {
                if several {
                    on_stream(lane, stream, e)
                } else {
                    e
                }
            });
            if first.is_ok() {
                first = r;
            } else {
                crate::drop_errors::report(r);
            }
        }
        // Every stream is idle: the events' records were reached and their waits are done.
        for (stream, events) in self.state.borrow_mut().take_events() {
            stream.give_events(events);
        }
        first
    }
}

impl Drop for End<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            crate::drop_errors::report(self.wait());
        }
    }
}

/// `e`, as the failure of the scope's `lane`-th stream.
pub(crate) fn on_stream(lane: usize, stream: &Stream, e: Error) -> Error {
    Error::OnStream {
        lane,
        stream_id: stream.id().ok(),
        source: Box::new(e),
    }
}

/// Waits until `stream` has finished its work. Returns the first synchronisation failure (a
/// task that failed, for example), but never returns while the stream may still use memory:
///
/// 1. `aclrtSynchronizeStream`; on failure the stream's context is made current (the caller
///    may have changed it) and the call repeated;
/// 2. if that fails too, `aclrtStreamQuery` is polled (with `aclrtSynchronizeStream` retried
///    between polls) until it reports the stream complete, however long that takes;
/// 3. if even the query keeps failing, nothing can prove that the device has stopped touching
///    the borrowed memory, and releasing the borrows could let safe code free or read memory
///    the device is writing: the process is aborted with a message on stderr.
pub(crate) fn wait_idle(stream: sys::aclrtStream, ctx: sys::aclrtContext) -> Result<()> {
    // SAFETY: the stream is live: the scope borrows it.
    let first = unsafe { raw::aclrtSynchronizeStream(stream) };
    let Err(first) = first else {
        return Ok(());
    };
    let _ = current::force_current(ctx);
    // SAFETY: as above.
    if unsafe { raw::aclrtSynchronizeStream(stream) }.is_ok() {
        return Err(first);
    }
    wait_until_complete(stream, ctx, &first);
    Err(first)
}

/// Consecutive failing `aclrtStreamQuery` calls after which [`wait_until_complete`] gives up.
const QUERY_ATTEMPTS: u32 = 20;

/// Returns once `aclrtStreamQuery` reports the stream complete (or a synchronisation succeeds);
/// aborts the process when the stream's state cannot be learnt at all (see [`wait_idle`]).
#[cold]
fn wait_until_complete(stream: sys::aclrtStream, ctx: sys::aclrtContext, first: &Error) {
    let mut pause = std::time::Duration::from_millis(1);
    let mut failures = 0;
    loop {
        // SAFETY: the stream is live: the scope borrows it.
        match raw::out(|st| unsafe { raw::aclrtStreamQuery(stream, st) }) {
            Ok(sys::ACL_STREAM_STATUS_COMPLETE) => return,
            Ok(_) => failures = 0,
            Err(e) => {
                failures += 1;
                if failures >= QUERY_ATTEMPTS {
                    eprintln!("{}", abort_message(stream, first, &e));
                    std::process::abort();
                }
                let _ = current::force_current(ctx);
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
        // SAFETY: as above.
        if unsafe { raw::aclrtSynchronizeStream(stream) }.is_ok() {
            return;
        }
    }
}

/// The one line printed before [`wait_until_complete`] aborts the process.
fn abort_message(stream: sys::aclrtStream, first: &Error, last: &Error) -> String {
    format!(
        "ascendcl: Stream::scope cannot tell whether stream {stream:p} still uses the buffers \
         borrowed by the scope (first {first}; then {last}); aborting rather than releasing \
         memory the device may still access"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascendcl_sys::AclError;

    #[test]
    fn the_abort_message_is_one_sentence() {
        let e = |api| Error::Acl {
            api,
            code: AclError::RT_INTERNAL_ERROR.code(),
            name: crate::error_name(AclError::RT_INTERNAL_ERROR.code()),
            message: None,
        };
        let m = abort_message(
            std::ptr::null_mut(),
            &e("aclrtSynchronizeStream"),
            &e("aclrtStreamQuery"),
        );
        assert!(!m.contains("  "), "{m}");
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains("first aclrtSynchronizeStream failed"), "{m}");
        assert!(m.contains("then aclrtStreamQuery failed"), "{m}");
    }
}
