//! The event tasks of a stream: a record (the event completes, timestamped, when the stream gets
//! there), a wait for a record, a reset. Records and waits still run after a STOP-mode failure
//! discards the rest of the stream, and a discarded record completes, so that nothing waits for
//! an event forever.

use super::{Event, EventWait};
use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use std::sync::Arc;

/// `aclrtRecordEvent`: a record of the event, with its sequence number (issued when queued).
#[derive(Debug)]
pub(crate) struct Record(pub Arc<Event>, pub u64);

impl Work for Record {
    fn run(&self, _: &Cx<'_>) -> R {
        self.0.complete(self.1);
        Ok(())
    }

    fn discard(&self) {
        self.0.complete(self.1);
    }

    fn describe(&self) -> Task {
        Task::new("event record", "event").num("event", u64::from(self.0.id))
    }

    fn runs_after_failure(&self) -> bool {
        true
    }
}

/// `aclrtStreamWaitEvent[WithTimeout]`: later work of the stream waits for the record.
pub(crate) struct Wait(pub EventWait);

impl Work for Wait {
    /// A wait for what may never come: not drained.
    fn gate(&self) -> bool {
        true
    }

    fn run(&self, cx: &Cx<'_>) -> R {
        self.0.run(cx.cancel)
    }

    fn describe(&self) -> Task {
        Task::new("event wait", "wait").num("event", u64::from(self.0.event.id))
    }

    fn runs_after_failure(&self) -> bool {
        true
    }
}

/// `aclrtResetEvent`: the event returns to "not recorded" when the stream gets there.
#[derive(Debug)]
pub(crate) struct Reset(pub Arc<Event>);

impl Work for Reset {
    fn run(&self, _: &Cx<'_>) -> R {
        self.0.reset();
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("event reset", "event").num("event", u64::from(self.0.id))
    }
}
