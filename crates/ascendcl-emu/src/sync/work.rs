//! The synchronisation tasks of a stream: notify records and waits, and the value writes and
//! waits of `aclrtValueWrite` / `aclrtValueWait` on a 64-bit word of device memory.

use super::notify::Notify;
use crate::base::error::*;
use crate::base::wait;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Side, Work};
use std::sync::Arc;
use std::time::Duration;

/// `aclrtRecordNotify`.
#[derive(Debug)]
pub(crate) struct NotifyRecord(pub Arc<Notify>);

impl Work for NotifyRecord {
    fn run(&self, _: &Cx<'_>) -> R {
        self.0.record();
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("notify record", "event").num("notify", u64::from(self.0.id))
    }
}

/// `aclrtWaitAndResetNotify`, with its timeout (None: forever). A cancelled stream gives up the
/// wait.
#[derive(Debug)]
pub(crate) struct NotifyWait(pub Arc<Notify>, pub Option<Duration>);

impl Work for NotifyWait {
    /// A wait for what may never come: not drained.
    fn gate(&self) -> bool {
        true
    }

    fn run(&self, cx: &Cx<'_>) -> R {
        let NotifyWait(n, timeout) = self;
        if n.wait(*timeout, cx.cancel) == wait::Outcome::TimedOut {
            return fail(
                RT_TASK_TIMEOUT,
                format!(
                    "the wait for notify {:#x} timed out after {} s without a record",
                    n.handle,
                    timeout.map_or(0, |t| t.as_secs())
                ),
            );
        }
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("notify wait", "wait").num("notify", u64::from(self.0.id))
    }
}

/// `aclrtValueWrite`: stores a 64-bit word.
#[derive(Debug)]
pub(crate) struct ValueWrite {
    pub addr: usize,
    pub value: u64,
    pub side: Side,
}

impl Work for ValueWrite {
    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: validated as 8 bytes of a live device allocation when queued.
        unsafe { crate::memory::access::store_u64(self.addr, self.side, self.value) };
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("value write", "event").num("value", self.value)
    }
}

/// `aclrtValueWait`: waits until a 64-bit word meets a condition; a cancelled stream gives up.
#[derive(Debug)]
pub(crate) struct ValueWait {
    pub addr: usize,
    pub value: u64,
    pub flag: u32,
    pub side: Side,
}

impl Work for ValueWait {
    /// A wait for what may never come: not drained.
    fn gate(&self) -> bool {
        true
    }

    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, cx: &Cx<'_>) -> R {
        wait::poll_until(cx.cancel, || {
            // SAFETY: as for ValueWrite. The allocation stays mapped (freed ranges are kept
            // reserved), so polling after a concurrent free reads harmless memory.
            let x = unsafe { crate::memory::access::load_u64(self.addr, self.side) };
            wait::value_condition(x, self.value, self.flag)
        });
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("value wait", "wait").num("value", self.value)
    }
}
