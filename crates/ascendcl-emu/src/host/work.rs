//! The host work of a stream: a host function run on the stream's worker (`aclrtLaunchHostFunc`),
//! and a callback handed to the thread subscribed to the stream (`aclrtLaunchCallback`, and host
//! functions of a stream subscribed with `aclrtSubscribeHostFunc`), which a blocking callback's
//! stream waits for.

use super::report::{Done, ReportQueue};
use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use std::ffi::c_void;
use std::sync::Arc;

/// A C host function (`aclrtHostFunc`, `aclrtCallback`).
pub(crate) type HostFn = unsafe extern "C" fn(*mut c_void);

/// `aclrtLaunchHostFunc` on the stream's worker thread.
#[derive(Debug)]
pub(crate) struct HostFunc(pub HostFn, pub usize);

impl Work for HostFunc {
    /// A wait for what may never come: not drained.
    fn gate(&self) -> bool {
        true
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: the caller of aclrtLaunchHostFunc provided a function and argument that are
        // valid to call from a runtime thread.
        unsafe { (self.0)(self.1 as *mut c_void) };
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("host function", "host")
    }
}

/// A callback handed to the subscribed thread; with `block`, the stream waits until it ran (or
/// the stream is cancelled).
#[derive(Debug)]
pub(crate) struct Callback {
    pub f: HostFn,
    pub arg: usize,
    pub block: bool,
    pub queue: Arc<ReportQueue>,
    pub stream: usize,
}

impl Work for Callback {
    /// A wait for what may never come: not drained.
    fn gate(&self) -> bool {
        true
    }

    fn run(&self, cx: &Cx<'_>) -> R {
        let done = self.block.then(|| Arc::new(Done::default()));
        self.queue.push(self.f, self.arg, self.stream, done.clone());
        if let Some(d) = done {
            d.wait(cx.cancel);
        }
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("callback", "host").text("blocking", if self.block { "yes" } else { "no" })
    }
}
