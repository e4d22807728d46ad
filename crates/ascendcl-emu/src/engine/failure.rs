//! The failure state a context's streams share (`ACL_STOP_ON_FAILURE`).

use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use std::sync::atomic::{AtomicBool, Ordering};

/// The failure state of a context, shared by its streams. Setting `ACL_STOP_ON_FAILURE` on any
/// stream switches the whole context to STOP mode (as the runtime does); the first task that
/// fails in STOP mode stops its stream and fails the context: from then on every submission to a
/// stream of the context and every synchronisation of one reports that task's error, until the
/// context is destroyed or its device reset.
#[derive(Debug)]
pub(crate) struct CtxFailure {
    pub(crate) stop: AtomicBool,
    /// Whether `error` is set (read without the lock on every submission).
    pub(crate) failed: AtomicBool,
    /// The failed task's stream and error.
    error: Mutex<Option<(usize, Fail)>>,
}

impl Default for CtxFailure {
    fn default() -> CtxFailure {
        CtxFailure {
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            error: Mutex::new(Rank::ContextFailure, None),
        }
    }
}

impl CtxFailure {
    pub(crate) fn stop_mode(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Stores the first failure in STOP mode.
    pub(crate) fn fail(&self, stream: usize, f: &Fail) {
        let mut e = self.error.lock();
        if e.is_none() {
            *e = Some((stream, f.clone()));
            self.failed.store(true, Ordering::Release);
        }
    }

    /// The stored failure itself, if a task failed in STOP mode.
    pub(crate) fn stored(&self) -> Option<Fail> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        self.error.lock().as_ref().map(|(_, f)| f.clone())
    }

    /// The stored failure, as the error of a call on stream `me`.
    #[inline]
    pub(crate) fn check(&self, me: usize) -> R {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &*self.error.lock() {
            Some((stream, f)) if *stream == me => Err(Fail {
                code: f.code,
                msg: format!(
                    "a task on stream {me:#x} failed (STOP failure mode: every submission and \
                     synchronisation in its context reports it until the context is destroyed \
                     or its device reset): {}",
                    f.msg
                ),
            }),
            Some((stream, f)) => Err(Fail {
                code: f.code,
                msg: format!(
                    "stream {me:#x} belongs to a context in STOP failure mode in which a task \
                     failed; every submission and synchronisation in the context reports it \
                     until the context is destroyed or its device reset; the task, on stream \
                     {stream:#x}: {}",
                    f.msg
                ),
            }),
            None => Ok(()),
        }
    }
}
