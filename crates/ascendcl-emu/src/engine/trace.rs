//! The engine's seam for profiling: while a sink is switched on ([`set_on`]), every unit of work
//! the engine runs is timed and handed to the sink with its lane (device and stream) and its
//! [`Task`] description; while it is off, running a unit of work costs one relaxed atomic load
//! more. The sink (the profiling concept) registers itself with [`set_sink`]; the engine knows
//! nothing of what it does with the tasks.

use super::work::{self, Cx, Work};
use crate::base::error::R;
use std::borrow::Cow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Where a task ran: the device and the stream (its `aclrtStreamGetId` id) of its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lane {
    /// The device of the stream.
    pub device: i32,
    /// The stream's id.
    pub stream: i32,
}

/// A value of a task's description.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// An unsigned number (bytes, blocks, ids).
    U(u64),
    /// A piece of text (a direction, a name).
    S(Cow<'static, str>),
}

/// What a unit of work is, for a trace: a name, a category (the kind of task: `copy`, `kernel`,
/// `host`, `event`, ...) and named values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Task {
    /// The task's name (a kernel's name, `memcpy H2D`, ...).
    pub name: Cow<'static, str>,
    /// The kind of task.
    pub cat: &'static str,
    /// Named values (bytes, blocks, event ids ...).
    pub args: Vec<(&'static str, Arg)>,
}

impl Task {
    /// A task named `name` of kind `cat`, without values.
    pub(crate) fn new(name: impl Into<Cow<'static, str>>, cat: &'static str) -> Task {
        Task {
            name: name.into(),
            cat,
            args: Vec::new(),
        }
    }

    /// Adds a number.
    pub(crate) fn num(mut self, key: &'static str, v: u64) -> Task {
        self.args.push((key, Arg::U(v)));
        self
    }

    /// Adds a piece of text.
    pub(crate) fn text(mut self, key: &'static str, v: impl Into<Cow<'static, str>>) -> Task {
        self.args.push((key, Arg::S(v.into())));
        self
    }
}

/// One timed task, as the sink receives it.
#[derive(Debug)]
pub(crate) struct Span {
    /// Where it ran.
    pub lane: Lane,
    /// What it was.
    pub task: Task,
    /// When it started and ended.
    pub start: Instant,
    pub end: Instant,
    /// Its result: 0, or the error code it failed with.
    pub code: i32,
}

/// What receives the timed tasks.
pub(crate) type Sink = fn(Span);

static SINK: OnceLock<Sink> = OnceLock::new();
static ON: AtomicBool = AtomicBool::new(false);

/// Registers the sink (the first registration wins).
pub(crate) fn set_sink(sink: Sink) {
    let _ = SINK.set(sink);
}

/// Switches the timing of tasks on or off.
pub(crate) fn set_on(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether tasks are being timed.
#[inline]
pub(crate) fn is_on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Runs `work` (as [`work::run`] does); while tracing is on, times it and hands it to the sink
/// with the lane `lane` gives.
#[inline]
pub(crate) fn run(work: &dyn Work, cx: &Cx<'_>, lane: impl FnOnce() -> Lane) -> R {
    if !is_on() {
        return work::run(work, cx);
    }
    traced(work, cx, lane())
}

#[cold]
fn traced(work: &dyn Work, cx: &Cx<'_>, lane: Lane) -> R {
    let start = Instant::now();
    let r = work::run(work, cx);
    let end = Instant::now();
    if let Some(sink) = SINK.get() {
        sink(Span {
            lane,
            task: work.describe(),
            start,
            end,
            code: r.as_ref().err().map_or(0, |f| f.code),
        });
    }
    r
}

/// Hands a task that did not go through [`run`] (a model's event records and waits) to the sink.
pub(crate) fn report(lane: Lane, task: Task, start: Instant, end: Instant) {
    if let Some(sink) = SINK.get() {
        sink(Span {
            lane,
            task,
            start,
            end,
            code: 0,
        });
    }
}

/// The last segment of a type's path (`Memset` for `…::work::Memset`).
pub(crate) fn short_name(full: &'static str) -> &'static str {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_the_path() {
        assert_eq!(short_name("a::work::Memset"), "Memset");
        assert_eq!(short_name("a::B<c::D>"), "B");
        assert_eq!(short_name("Plain"), "Plain");
    }

    #[test]
    fn a_task_keeps_its_values_in_order() {
        let t = Task::new("memcpy H2D", "copy")
            .text("direction", "H2D")
            .num("bytes", 64);
        assert_eq!(t.args[0], ("direction", Arg::S("H2D".into())));
        assert_eq!(t.args[1], ("bytes", Arg::U(64)));
    }
}
