//! The user's own entries of a trace (msproftx): stamps carrying a message, instant marks,
//! push/pop ranges nested on one thread, start/stop ranges that may end on another thread, marks
//! put on a stream (`aclprofMarkEx`) and step timestamps. They are accepted while a session is
//! started (or the environment variable records the process), else 100043.

use super::log::{self, Entry};
use super::{State, with};
use crate::base::error::*;
use crate::engine::exception::thread_id;
use crate::engine::stream::Stream;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

/// The longest message of `aclprofMarkEx`.
const MAX_MARK_EX: usize = 127;

/// A range started by `aclprofRangeStart` and not stopped yet.
#[derive(Debug)]
pub(crate) struct Open {
    name: String,
    tid: u32,
    start: Instant,
}

thread_local! {
    /// The thread's pushed ranges (`aclprofPush`), innermost last.
    static PUSHED: RefCell<Vec<(String, Instant)>> = const { RefCell::new(Vec::new()) };
}

fn collecting(s: &State, api: &str) -> R {
    if s.collecting() {
        Ok(())
    } else {
        fail(
            PROF_NOT_RUN,
            format!("{api} comes between aclprofStart and aclprofStop"),
        )
    }
}

/// The message of stamp `h` (100000 for a stamp that is not live).
fn message(s: &State, h: usize) -> R<String> {
    s.stamps.get(&h).cloned().ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: format!("{h:#x} is not a live stamp (aclprofCreateStamp)"),
    })
}

/// `aclprofCreateStamp`.
pub(crate) fn create() -> usize {
    let h = crate::base::hub::new_handle();
    with(|s| s.stamps.insert(h, String::new()));
    h
}

/// `aclprofDestroyStamp` (an unknown stamp is ignored: the function returns nothing).
pub(crate) fn destroy(h: usize) {
    with(|s| s.stamps.remove(&h));
}

/// `aclprofSetStampTraceMessage`.
pub(crate) fn set_message(h: usize, msg: &[u8]) -> R {
    let text = String::from_utf8_lossy(msg)
        .trim_end_matches('\0')
        .to_string();
    with(|s| match s.stamps.get_mut(&h) {
        Some(m) => {
            *m = text;
            Ok(())
        }
        None => fail(
            INVALID_PARAM,
            format!("{h:#x} is not a live stamp (aclprofCreateStamp)"),
        ),
    })
}

/// `aclprofMark`: an instant with the stamp's message.
pub(crate) fn mark(h: usize) -> R {
    let at = Instant::now();
    with(|s| {
        let name = message(s, h)?;
        collecting(s, "aclprofMark")?;
        log::push(Entry::Mark {
            name,
            tid: thread_id(),
            at,
            cat: "mark",
        });
        Ok(())
    })
}

/// `aclprofPush`: a range opens on this thread.
pub(crate) fn push(h: usize) -> R {
    let at = Instant::now();
    let name = with(|s| {
        let name = message(s, h)?;
        collecting(s, "aclprofPush")?;
        Ok::<_, Fail>(name)
    })?;
    PUSHED.with(|p| p.borrow_mut().push((name, at)));
    Ok(())
}

/// `aclprofPop`: the innermost range this thread pushed closes.
pub(crate) fn pop() -> R {
    let end = Instant::now();
    with(|s| collecting(s, "aclprofPop"))?;
    let Some((name, start)) = PUSHED.with(|p| p.borrow_mut().pop()) else {
        return fail(
            INVALID_PARAM,
            "aclprofPop without an aclprofPush on this thread (push and pop pair on one thread)",
        );
    };
    log::push(Entry::Range {
        name,
        tid: thread_id(),
        start,
        end,
        kind: "push",
    });
    Ok(())
}

/// `aclprofRangeStart`: a range opens; its id (unique in the process) is returned.
pub(crate) fn range_start(h: usize) -> R<u32> {
    let start = Instant::now();
    with(|s| {
        let name = message(s, h)?;
        collecting(s, "aclprofRangeStart")?;
        s.next_range = s.next_range.wrapping_add(1).max(1);
        let id = s.next_range;
        s.ranges.insert(
            id,
            Open {
                name,
                tid: thread_id(),
                start,
            },
        );
        Ok(id)
    })
}

/// `aclprofRangeStop`: the range closes (on any thread).
pub(crate) fn range_stop(id: u32) -> R {
    let end = Instant::now();
    with(|s| {
        let Some(o) = s.ranges.remove(&id) else {
            return fail(
                INVALID_PARAM,
                format!("range {id} is not open (aclprofRangeStart)"),
            );
        };
        log::push(Entry::Range {
            name: o.name,
            tid: o.tid,
            start: o.start,
            end,
            kind: "range",
        });
        Ok(())
    })
}

/// The marker task `aclprofMarkEx` (and an mstx mark with a stream) puts on a stream.
pub(crate) struct Marker(pub(crate) String);

impl Work for Marker {
    fn run(&self, _: &Cx<'_>) -> R {
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new(self.0.clone(), "mark")
    }
}

/// `aclprofMarkEx`: an instant on the host and a marker task on `stream` (the default stream
/// of the current context when None was given and one is current).
pub(crate) fn mark_ex(msg: &[u8], stream: Option<Arc<Stream>>) -> R {
    if msg.len() > MAX_MARK_EX {
        return fail(
            INVALID_PARAM,
            format!("the message is {} bytes (at most {MAX_MARK_EX})", msg.len()),
        );
    }
    let name = String::from_utf8_lossy(msg)
        .trim_end_matches('\0')
        .to_string();
    let at = Instant::now();
    with(|s| collecting(s, "aclprofMarkEx"))?;
    if let Some(st) = stream {
        st.enqueue(Marker(name.clone()))?;
    }
    log::push(Entry::Mark {
        name,
        tid: thread_id(),
        at,
        cat: "mark",
    });
    Ok(())
}

/// `aclprofCreateStepInfo`.
pub(crate) fn create_step() -> usize {
    let h = crate::base::hub::new_handle();
    with(|s| s.steps.insert(h, Default::default()));
    h
}

/// `aclprofDestroyStepInfo` (an unknown one is ignored).
pub(crate) fn destroy_step(h: usize) {
    with(|s| s.steps.remove(&h));
}

/// `aclprofGetStepTimestamp`: an instant `step start` or `step end`; each tag once per step
/// info.
pub(crate) fn step_timestamp(h: usize, tag: u32) -> R {
    let at = Instant::now();
    let name = match tag {
        ascendcl_sys::ACL_STEP_START => "step start",
        ascendcl_sys::ACL_STEP_END => "step end",
        t => {
            return fail(
                INVALID_PARAM,
                format!("tag {t} is neither ACL_STEP_START (0) nor ACL_STEP_END (1)"),
            );
        }
    };
    with(|s| {
        collecting(s, "aclprofGetStepTimestamp")?;
        let Some(tags) = s.steps.get_mut(&h) else {
            return fail(
                INVALID_PARAM,
                format!("{h:#x} is not a live step info (aclprofCreateStepInfo)"),
            );
        };
        if !tags.insert(tag) {
            return fail(
                INVALID_PARAM,
                format!("the step info was already stamped with {name} (each tag once)"),
            );
        }
        log::push(Entry::Mark {
            name: name.to_string(),
            tid: thread_id(),
            at,
            cat: "step",
        });
        Ok(())
    })
}
