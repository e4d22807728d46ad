//! Executions of model runtime instances: the steps of a [`Plan`] run stream by stream, each
//! model stream on a thread of its own — head streams from the start, the others when a step
//! activates them — with labels and stream switches deciding where a stream continues.
//!
//! Event records and waits: in a captured model (straight-line steps), each execution issues
//! its records when it is queued and a wait waits for the event's latest record issued before
//! that, as on a stream; a wait on an `ACL_EVENT_EXTERNAL` event, and every wait in a built
//! model, looks at the device's flag instead: it waits until the event is recorded and not reset
//! since (models reset what they wait for, as the runtime's samples do).

use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use crate::base::wait;
use crate::engine::trace::{self, Lane, Task};
use crate::engine::work::Cx;
use crate::event::Event;
use crate::memory::{self, Side, access};
use crate::model::{Kind, Model, Plan, Step};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Scope;

/// `ACL_EVENT_EXTERNAL`: an event meant to order a captured model with work outside it.
const EXTERNAL: u32 = 0x20;

/// Stack size of the thread of a model stream started during an execution.
const STREAM_STACK: usize = 1 << 20;

/// One execution of a model, queued or running.
pub(crate) struct Execution {
    model: Arc<Model>,
    plan: Arc<Plan>,
    /// Captured models: the record sequence (records) or the target (waits) of each (stream,
    /// step), fixed when the execution was queued.
    pre: HashMap<(usize, usize), u64>,
}

impl std::fmt::Debug for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("model", &self.model.handle)
            .finish_non_exhaustive()
    }
}

impl Execution {
    /// An execution of `model`'s frozen steps, its records issued now (captured models).
    pub(crate) fn new(model: Arc<Model>, plan: Arc<Plan>) -> Arc<Execution> {
        let mut pre = HashMap::new();
        if plan.kind == Kind::Captured {
            for (i, s) in plan.streams.iter().enumerate() {
                for (p, step) in s.steps.iter().enumerate() {
                    match step {
                        Step::Record(ev) => {
                            pre.insert((i, p), ev.begin_record());
                        }
                        Step::Wait(ev) if ev.flags & EXTERNAL == 0 => {
                            pre.insert((i, p), ev.wait_target());
                        }
                        _ => {}
                    }
                }
            }
        }
        Arc::new(Execution { model, plan, pre })
    }

    /// The number of streams of the frozen plan and of the steps on them.
    pub(crate) fn size(&self) -> (usize, usize) {
        let steps = self.plan.streams.iter().map(|s| s.steps.len()).sum();
        (self.plan.streams.len(), steps)
    }

    /// Runs the execution on the calling thread, on no stream (`aclmdlRIExecute`).
    pub(crate) fn run_alone(&self) -> R {
        static NO_STREAM: AtomicBool = AtomicBool::new(false);
        self.run(&NO_STREAM)
    }

    /// Runs the execution on the calling thread (and threads for the other streams it starts);
    /// returns the first task error, 507023 when the model was aborted. `outer` is the
    /// cancellation flag of the stream the execution runs on.
    pub(crate) fn run(&self, outer: &AtomicBool) -> R {
        let _one = self.model.exec_lock.lock();
        let cancel = Arc::new(AtomicBool::new(false));
        self.model.started(&cancel);
        let run = Run {
            exec: self,
            cancel: &cancel,
            outer,
            error: Mutex::new(Rank::ModelRun, None),
            started: Mutex::new(Rank::ModelRun, vec![false; self.plan.streams.len()]),
            reached: Mutex::new(Rank::ModelRun, HashSet::new()),
        };
        let heads: Vec<usize> = (0..self.plan.streams.len())
            .filter(|i| self.plan.streams[*i].head)
            .collect();
        std::thread::scope(|sc| {
            for &i in heads.iter().skip(1) {
                run.start(sc, i, 0);
            }
            if let Some(&first) = heads.first()
                && run.claim(first)
            {
                run.stream(sc, first, 0);
            }
        });
        self.model.stopped(&cancel);
        // Records the execution did not reach (it failed or was aborted) still complete, so
        // that nothing waits for them forever.
        let reached = run.reached.into_inner();
        for (key, seq) in &self.pre {
            if let Step::Record(ev) = &self.plan.streams[key.0].steps[key.1]
                && !reached.contains(key)
            {
                ev.complete(*seq);
            }
        }
        match run.error.into_inner() {
            Some(f) => Err(f),
            None if cancel.load(Ordering::Acquire) => fail(
                RT_MODEL_ABORT_NORMAL,
                format!(
                    "the execution of model {:#x} was aborted (aclmdlRIAbort, or its stream \
                     was aborted)",
                    self.model.handle
                ),
            ),
            None => Ok(()),
        }
    }
}

/// The state of one running execution.
struct Run<'a> {
    exec: &'a Execution,
    cancel: &'a AtomicBool,
    outer: &'a AtomicBool,
    error: Mutex<Option<Fail>>,
    /// Which streams have been started in this execution (a stream runs once).
    started: Mutex<Vec<bool>>,
    /// The pre-issued records reached.
    reached: Mutex<HashSet<(usize, usize)>>,
}

impl<'a> Run<'a> {
    fn stopping(&self) -> bool {
        if self.outer.load(Ordering::Acquire) {
            self.cancel.store(true, Ordering::Release);
        }
        self.cancel.load(Ordering::Acquire)
    }

    /// Keeps the first error and stops the other streams.
    fn fail(&self, f: Fail) {
        self.error.lock().get_or_insert(f);
        self.cancel.store(true, Ordering::Release);
    }

    /// Marks stream `i` started; false when it already was.
    fn claim(&self, i: usize) -> bool {
        !std::mem::replace(&mut self.started.lock()[i], true)
    }

    /// Starts stream `i` at step `pc` on a thread of its own (unless it has run already).
    fn start<'s>(&'s self, sc: &'s Scope<'s, '_>, i: usize, pc: usize)
    where
        'a: 's,
    {
        if !self.claim(i) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name(format!("acl-emu-model-{:x}", self.exec.model.handle))
            .stack_size(STREAM_STACK)
            .spawn_scoped(sc, move || self.stream(sc, i, pc));
        if let Err(e) = spawned {
            self.fail(Fail {
                code: RT_INTERNAL_ERROR,
                msg: format!("cannot start a thread for a model stream: {e}"),
            });
        }
    }

    /// Runs stream `i` from step `pc` until its end, an end task, a jump to another stream or
    /// a failure.
    fn stream<'s>(&'s self, sc: &'s Scope<'s, '_>, i: usize, mut pc: usize)
    where
        'a: 's,
    {
        let plan = &*self.exec.plan;
        let steps = &plan.streams[i].steps;
        while pc < steps.len() {
            if self.stopping() {
                return;
            }
            match &steps[pc] {
                Step::Group(g) => {
                    for s in g.steps() {
                        if let Err(f) = self.simple(&s, i, None) {
                            return self.fail(f);
                        }
                        if self.stopping() {
                            return;
                        }
                    }
                }
                Step::Label(_) => {}
                Step::End => return,
                Step::Activate(h) => {
                    if let Some(j) = plan.stream_index(*h) {
                        self.start(sc, j, 0);
                    }
                }
                Step::SwitchByIndex {
                    ptr,
                    side,
                    count,
                    list,
                } => {
                    let target = match pick_label(*ptr, *side, *count, list) {
                        Ok(l) => l,
                        Err(f) => return self.fail(f),
                    };
                    let Some(&(j, p)) = plan.labels.get(&target) else {
                        return self.fail(Fail {
                            code: RT_INTERNAL_ERROR,
                            msg: format!(
                                "the switch picked label {target:#x}, which is not set in model \
                                 {:#x}",
                                self.exec.model.handle
                            ),
                        });
                    };
                    if j == i {
                        pc = p;
                        continue;
                    }
                    // Execution continues at the label's stream; this stream stops.
                    self.start(sc, j, p);
                    return;
                }
                Step::SwitchStream {
                    left,
                    right,
                    sides,
                    cond,
                    wide,
                    target,
                } => match compare(*left, *right, *sides, *cond, *wide) {
                    Ok(true) => {
                        if let Some(j) = plan.stream_index(*target) {
                            self.start(sc, j, 0);
                        }
                        return;
                    }
                    Ok(false) => {}
                    Err(f) => return self.fail(f),
                },
                s => {
                    if let Err(f) = self.simple(s, i, Some((i, pc))) {
                        return self.fail(f);
                    }
                }
            }
            pc += 1;
        }
    }

    /// The lane of model stream `i` in a trace: the stream the steps were recorded on (an
    /// unknown lane, device and stream -1, when that stream is gone).
    fn lane(&self, i: usize) -> Lane {
        crate::stream::get(self.exec.plan.streams[i].handle).map_or(
            Lane {
                device: -1,
                stream: -1,
            },
            |s| Lane {
                device: s.device,
                stream: s.id,
            },
        )
    }

    /// Runs a task, an event record or an event wait of model stream `i`; `key` is the step's
    /// place in the plan (None inside a task group).
    fn simple(&self, s: &Step, i: usize, key: Option<(usize, usize)>) -> R {
        let pre = key.and_then(|k| self.exec.pre.get(&k).copied());
        match s {
            Step::Work(w) => trace::run(
                &**w,
                &Cx {
                    cancel: self.cancel,
                },
                || self.lane(i),
            ),
            Step::Record(ev) => {
                let start = trace::is_on().then(std::time::Instant::now);
                let seq = pre.unwrap_or_else(|| ev.begin_record());
                ev.complete(seq);
                if let Some(k) = key {
                    self.reached.lock().insert(k);
                }
                if let Some(t) = start {
                    let task = Task::new("event record", "event").num("event", u64::from(ev.id));
                    trace::report(self.lane(i), task, t, std::time::Instant::now());
                }
                Ok(())
            }
            Step::Wait(ev) => {
                let start = trace::is_on().then(std::time::Instant::now);
                self.wait(ev, pre);
                if let Some(t) = start {
                    let task = Task::new("event wait", "wait").num("event", u64::from(ev.id));
                    trace::report(self.lane(i), task, t, std::time::Instant::now());
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Waits for record `target` of the event, or (None) for its flag.
    fn wait(&self, ev: &Event, target: Option<u64>) {
        let _ = wait::poll_until(self.cancel, || {
            if self.outer.load(Ordering::Acquire) {
                self.cancel.store(true, Ordering::Release);
            }
            match target {
                Some(seq) => ev.reached(seq),
                None => ev.is_set(),
            }
        });
    }
}

/// Reads a value of device memory that a model step names; 507000 when the memory was freed.
fn live(side: Side, what: &str, addr: usize) -> R {
    if !memory::read().still_live(side) {
        return fail(
            RT_INTERNAL_ERROR,
            format!(
                "the {what} at {addr:#x} was freed before the model ran (a model uses the \
                 memory named when it was built)"
            ),
        );
    }
    Ok(())
}

/// The label `aclrtSwitchLabelByIndex` continues at: the u32 index at `ptr`, the last of the
/// first `count` labels when the index is not below `count`.
fn pick_label(
    ptr: usize,
    side: Side,
    count: u32,
    list: &crate::model::label::LabelList,
) -> R<usize> {
    live(side, "branch index", ptr)?;
    // SAFETY: validated as 4 bytes of device memory when the step was recorded, and still live.
    let idx = u32::from_ne_bytes(unsafe { access::read_array(ptr, side) });
    let k = idx.min(count.saturating_sub(1)) as usize;
    list.labels.get(k).copied().ok_or_else(|| Fail {
        code: RT_INTERNAL_ERROR,
        msg: format!("label list {:#x} has no label {k}", list.handle),
    })
}

/// `aclrtSwitchStream`'s condition on two int32 (or, `wide`, int64) values of device memory:
/// EQUAL 0, NOT_EQUAL 1, GREATER 2, GREATER_OR_EQUAL 3, LESS 4, LESS_OR_EQUAL 5.
fn compare(left: usize, right: usize, sides: [Side; 2], cond: u32, wide: bool) -> R<bool> {
    live(sides[0], "left value", left)?;
    live(sides[1], "right value", right)?;
    // SAFETY: validated as 4 (or 8) bytes of device memory when recorded, and still live.
    let (a, b) = unsafe {
        if wide {
            (
                i64::from_ne_bytes(access::read_array(left, sides[0])),
                i64::from_ne_bytes(access::read_array(right, sides[1])),
            )
        } else {
            (
                i64::from(i32::from_ne_bytes(access::read_array(left, sides[0]))),
                i64::from(i32::from_ne_bytes(access::read_array(right, sides[1]))),
            )
        }
    };
    Ok(match cond {
        0 => a == b,
        1 => a != b,
        2 => a > b,
        3 => a >= b,
        4 => a < b,
        _ => a <= b,
    })
}
