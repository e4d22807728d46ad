//! Model runtime instances (`aclmdlRI`): models captured from a stream (`aclmdlRICaptureBegin`
//! … `aclmdlRICaptureEnd`) and models built on bound persistent streams (`aclmdlRIBuildBegin`,
//! `aclmdlRIBindStream`, … `aclmdlRIBuildEnd`). Both record steps instead of running them; the
//! recorded steps are frozen into a [`Plan`] that each execution (`crate::model::exec`) runs.
//! Task groups of a capture (`aclmdlRICaptureTaskGrp*`) are slots whose tasks an update
//! (`aclmdlRICaptureTaskUpdate*`) overwrites.

pub(crate) mod debug_json;
pub(crate) mod exec;
pub(crate) mod label;
mod recording;
pub(crate) mod work;

pub(crate) use recording::{
    Recording, bound_model, capturing, record_step, set_recording, updating,
};

use crate::base::error::*;
use crate::base::hub::{self, Kind as HubKind, Resource, registry};
use crate::base::lock::{Condvar, Mutex, Rank, wait_until};
use crate::engine::stream::Stream;
use crate::engine::work::{Side, Work};
use crate::event::Event;
use crate::model::label::LabelList;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `ACL_MODEL_STREAM_FLAG_HEAD`: the stream runs from the start of each execution.
pub(crate) const STREAM_FLAG_HEAD: u32 = 0;
/// `ACL_MODEL_STREAM_FLAG_DEFAULT`: the stream runs only when activated.
pub(crate) const STREAM_FLAG_DEFAULT: u32 = 0x7FFF_FFFF;

thread_local! {
    /// The calling thread's capture interaction mode (`aclmdlRICaptureThreadExchangeMode`); recorded,
    /// the emulator refuses no call by mode.
    static CAPTURE_MODE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Swaps the calling thread's capture mode with `mode`; the previous mode.
pub(crate) fn exchange_capture_mode(mode: u32) -> u32 {
    CAPTURE_MODE.with(|t| t.replace(mode))
}

/// How long destroying a model waits for its running executions before 107037.
const DESTROY_WAIT: Duration = Duration::from_secs(10);

/// One recorded step.
#[derive(Clone)]
pub(crate) enum Step {
    /// A unit of work, run by each execution.
    Work(Arc<dyn Work>),
    /// An event record: a new record of the event at each execution.
    Record(Arc<Event>),
    /// An event wait (see `crate::model::exec` for what it waits for).
    Wait(Arc<Event>),
    /// The tasks of a task group, read when the execution reaches them (an update may have
    /// replaced them).
    Group(Arc<TaskGroup>),
    /// The position of a label (`aclrtSetLabel`).
    Label(usize),
    /// `aclrtSwitchLabelByIndex`: continue at the label of the list picked by the u32 index at
    /// `ptr` (the last one of the first `count` when the index is beyond them).
    SwitchByIndex {
        ptr: usize,
        side: Side,
        count: u32,
        list: Arc<LabelList>,
    },
    /// `aclrtActiveStream`: start the bound stream (at its first step).
    Activate(usize),
    /// `aclrtSwitchStream`: when `left cond right` holds, start `target` and stop this stream.
    SwitchStream {
        left: usize,
        right: usize,
        sides: [Side; 2],
        cond: u32,
        wide: bool,
        target: usize,
    },
    /// `aclmdlRIEndTask`: the end of the stream's part of the model.
    End,
}

impl Step {
    /// Whether two steps are of the same kind (an update must keep the kinds of a group).
    fn same_kind(&self, other: &Step) -> bool {
        match (self, other) {
            (Step::Work(a), Step::Work(b)) => a.kind() == b.kind(),
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// What made the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`.
    Captured,
    /// `aclmdlRIBuildBegin` … `aclmdlRIBuildEnd`.
    Built,
}

/// The steps of one stream of a model.
#[derive(Clone)]
pub(crate) struct PlanStream {
    /// The stream the steps were recorded on.
    pub handle: usize,
    /// That stream's `aclrtStreamGetId` id.
    pub id: i32,
    /// Whether it runs from the start of an execution (else only when activated).
    pub head: bool,
    pub steps: Vec<Step>,
}

/// The frozen steps of a model: what every execution runs.
pub(crate) struct Plan {
    pub kind: Kind,
    pub streams: Vec<PlanStream>,
    /// Label handle → (index in `streams`, position in its steps).
    pub labels: HashMap<usize, (usize, usize)>,
}

impl Plan {
    /// The index of a stream of the plan.
    pub(crate) fn stream_index(&self, handle: usize) -> Option<usize> {
        self.streams.iter().position(|s| s.handle == handle)
    }
}

/// A task group: recorded tasks that an update may overwrite.
pub(crate) struct TaskGroup {
    pub handle: usize,
    steps: Mutex<Vec<Step>>,
}

impl TaskGroup {
    /// The group's current steps.
    pub(crate) fn steps(&self) -> Vec<Step> {
        self.steps.lock().clone()
    }

    /// Replaces the steps (the update task, when its stream reaches it).
    pub(crate) fn replace(&self, steps: Vec<Step>) {
        *self.steps.lock() = steps;
    }
}

/// The replacement tasks of an update in progress (`aclmdlRICaptureTaskUpdateBegin` … `End`).
pub(crate) struct Update {
    pub group: Arc<TaskGroup>,
    steps: Mutex<Vec<Step>>,
}

impl Update {
    pub(crate) fn new(group: Arc<TaskGroup>) -> Arc<Update> {
        Arc::new(Update {
            group,
            steps: Mutex::new(Rank::Update, Vec::new()),
        })
    }

    pub(crate) fn push(&self, s: Step) {
        self.steps.lock().push(s);
    }

    /// The replacement, checked against the group: the same number of tasks of the same kinds
    /// (107040 otherwise).
    pub(crate) fn finish(&self) -> R<Vec<Step>> {
        let new = std::mem::take(&mut *self.steps.lock());
        let old = self.group.steps();
        if new.len() != old.len() || new.iter().zip(&old).any(|(a, b)| !a.same_kind(b)) {
            return fail(
                RT_MODEL_UPDATE_FAILED,
                format!(
                    "the update of task group {:#x} issued {} task(s) where the group has {} \
                     (number and kinds of tasks must match the group)",
                    self.group.handle,
                    new.len(),
                    old.len()
                ),
            );
        }
        Ok(new)
    }
}

/// A stream bound to a built model (or capturing into a model).
struct Bound {
    handle: usize,
    stream: Arc<Stream>,
    head: bool,
    steps: Vec<Step>,
}

impl Bound {
    /// The stream's steps recorded so far.
    fn snapshot(&self) -> PlanStream {
        PlanStream {
            handle: self.handle,
            id: self.stream.id,
            head: self.head,
            steps: self.steps.clone(),
        }
    }
}

#[derive(Default)]
struct State {
    /// Captured: one entry, the capturing stream. Built: the bound streams, in binding order.
    streams: Vec<Bound>,
    /// The task group open on the capturing stream.
    open_group: Option<Arc<TaskGroup>>,
    /// Capture ended / build ended: the frozen steps.
    plan: Option<Arc<Plan>>,
    /// The cancellation flags of the executions running now (`aclmdlRIAbort`).
    running: Vec<Arc<AtomicBool>>,
}

/// A model runtime instance.
pub(crate) struct Model {
    pub handle: usize,
    pub kind: Kind,
    /// The context it was made in.
    pub ctx: usize,
    st: Mutex<State>,
    idle: Condvar,
    /// Executions of one model run one at a time (they share its streams and labels).
    pub(crate) exec_lock: Mutex<()>,
    capturing: AtomicBool,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("handle", &self.handle)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Records a step of the capture (into the open task group, if any).
    pub(crate) fn push_captured(&self, s: Step) {
        let mut st = self.st.lock();
        if let Some(g) = &st.open_group {
            g.steps.lock().push(s);
        } else if let Some(b) = st.streams.first_mut() {
            b.steps.push(s);
        }
    }

    /// Records a step on bound stream `stream` of a built model; after `aclmdlRIBuildEnd` the
    /// streams take no more tasks (107005).
    pub(crate) fn push_bound(&self, stream: usize, s: Step) -> R {
        let mut st = self.st.lock();
        if st.plan.is_some() {
            return fail(
                RT_STREAM_MODEL,
                format!(
                    "stream {stream:#x} is bound to model {:#x}, whose build has ended \
                     (aclmdlRIBuildEnd): it takes no more tasks",
                    self.handle
                ),
            );
        }
        match st.streams.iter_mut().find(|b| b.handle == stream) {
            Some(b) => {
                b.steps.push(s);
                Ok(())
            }
            None => fail(
                RT_STREAM_MODEL,
                format!(
                    "stream {stream:#x} is not bound to model {:#x}",
                    self.handle
                ),
            ),
        }
    }

    /// The number of steps recorded so far on bound stream `stream` (the position of the next).
    pub(crate) fn position(&self, stream: usize) -> Option<usize> {
        self.st
            .lock()
            .streams
            .iter()
            .find(|b| b.handle == stream)
            .map(|b| b.steps.len())
    }

    /// Whether capture into the model is still going on.
    pub(crate) fn capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    /// Whether the build (or capture) has ended.
    pub(crate) fn finished(&self) -> bool {
        self.st.lock().plan.is_some()
    }

    /// The frozen steps (None before the capture or build ended).
    pub(crate) fn plan(&self) -> Option<Arc<Plan>> {
        self.st.lock().plan.clone()
    }

    /// The model's streams and their steps: the frozen ones once the capture or build ended,
    /// those recorded so far before (a task group still open is not among them yet).
    pub(crate) fn streams_now(&self) -> Vec<PlanStream> {
        let st = self.st.lock();
        match &st.plan {
            Some(p) => p.streams.clone(),
            None => st.streams.iter().map(Bound::snapshot).collect(),
        }
    }

    /// Ends the capture: the steps become the plan (107033 with a task group still open).
    pub(crate) fn end_capture(&self) -> R {
        let mut st = self.st.lock();
        self.capturing.store(false, Ordering::Release);
        let open = st.open_group.take();
        let streams = std::mem::take(&mut st.streams)
            .into_iter()
            .map(|b| PlanStream {
                handle: b.handle,
                id: b.stream.id,
                head: true,
                steps: b.steps,
            })
            .collect();
        st.plan = Some(Arc::new(Plan {
            kind: Kind::Captured,
            streams,
            labels: HashMap::new(),
        }));
        if let Some(g) = open {
            return fail(
                RT_TASK_GROUP_STATUS,
                format!(
                    "task group {:#x} is still open (aclmdlRICaptureTaskGrpEnd first); the \
                     capture ended without it",
                    g.handle
                ),
            );
        }
        Ok(())
    }

    /// Opens a task group on the capture (107033 when one is open already).
    pub(crate) fn begin_group(&self) -> R {
        let mut st = self.st.lock();
        if let Some(g) = &st.open_group {
            return fail(
                RT_TASK_GROUP_STATUS,
                format!("task group {:#x} is already open on the capture", g.handle),
            );
        }
        let g = Arc::new(TaskGroup {
            handle: hub::new_handle(),
            steps: Mutex::new(Rank::TaskGroup, Vec::new()),
        });
        registry::<TaskGroup>().insert(Arc::clone(&g));
        st.open_group = Some(g);
        Ok(())
    }

    /// Closes the open task group: it becomes one step of the capture (107033 when none is
    /// open).
    pub(crate) fn end_group(&self) -> R<usize> {
        let mut st = self.st.lock();
        let Some(g) = st.open_group.take() else {
            return fail(
                RT_TASK_GROUP_STATUS,
                "no task group is open on the capture (aclmdlRICaptureTaskGrpBegin first)",
            );
        };
        let h = g.handle;
        if let Some(b) = st.streams.first_mut() {
            b.steps.push(Step::Group(g));
        }
        Ok(h)
    }

    /// Binds a stream (built models).
    pub(crate) fn bind(&self, stream: &Arc<Stream>, head: bool) {
        self.st.lock().streams.push(Bound {
            handle: stream.handle,
            stream: Arc::clone(stream),
            head,
            steps: Vec::new(),
        });
    }

    /// Unbinds a stream; whether it was bound.
    pub(crate) fn unbind(&self, stream: usize) -> bool {
        let mut st = self.st.lock();
        let n = st.streams.len();
        st.streams.retain(|b| b.handle != stream);
        let was = st.streams.len() != n;
        if was {
            drop(st);
            crate::model::label::forget_stream(self.handle, stream);
        }
        was
    }

    /// Whether `stream` is bound to the model.
    pub(crate) fn is_bound(&self, stream: usize) -> bool {
        self.st.lock().streams.iter().any(|b| b.handle == stream)
    }

    /// The bound streams.
    pub(crate) fn bound_streams(&self) -> Vec<Arc<Stream>> {
        self.st
            .lock()
            .streams
            .iter()
            .map(|b| Arc::clone(&b.stream))
            .collect()
    }

    /// Ends the build: the bound streams' steps become the plan.
    pub(crate) fn end_build(&self) -> R {
        let mut st = self.st.lock();
        if st.plan.is_some() {
            return fail(
                RT_PARAM_INVALID,
                format!("the build of model {:#x} has already ended", self.handle),
            );
        }
        let streams: Vec<PlanStream> = st.streams.iter().map(Bound::snapshot).collect();
        let mut labels = HashMap::new();
        for (i, s) in streams.iter().enumerate() {
            for (p, step) in s.steps.iter().enumerate() {
                if let Step::Label(l) = step {
                    labels.insert(*l, (i, p));
                }
            }
        }
        st.plan = Some(Arc::new(Plan {
            kind: Kind::Built,
            streams,
            labels,
        }));
        Ok(())
    }

    /// Registers a running execution (its cancellation flag).
    pub(crate) fn started(&self, cancel: &Arc<AtomicBool>) {
        self.st.lock().running.push(Arc::clone(cancel));
    }

    /// Unregisters a finished execution.
    pub(crate) fn stopped(&self, cancel: &Arc<AtomicBool>) {
        let mut st = self.st.lock();
        st.running.retain(|c| !Arc::ptr_eq(c, cancel));
        if st.running.is_empty() {
            self.idle.notify_all();
        }
    }

    /// `aclmdlRIAbort`: cancels the running executions and waits until they stopped.
    pub(crate) fn abort(&self) {
        let st = self.st.lock();
        for c in &st.running {
            c.store(true, Ordering::Release);
        }
        let _st = wait_until(&self.idle, st, None, |s| s.running.is_empty());
    }

    /// Waits up to `limit` for the running executions; whether none is left.
    fn wait_idle(&self, limit: Duration) -> bool {
        let st = self.st.lock();
        wait_until(&self.idle, st, Some(Instant::now() + limit), |s| {
            s.running.is_empty()
        })
        .1
    }
}

impl Resource for Model {
    const KIND: HubKind = HubKind::Model;

    fn handle(&self) -> usize {
        self.handle
    }
}

impl Resource for TaskGroup {
    const KIND: HubKind = HubKind::TaskGroup;

    fn handle(&self) -> usize {
        self.handle
    }
}

fn insert(kind: Kind, ctx: usize, streams: Vec<Bound>) -> Arc<Model> {
    let m = Arc::new(Model {
        handle: hub::new_handle(),
        kind,
        ctx,
        st: Mutex::new(
            Rank::ModelState,
            State {
                streams,
                ..State::default()
            },
        ),
        idle: Condvar::new(),
        exec_lock: Mutex::new(Rank::ModelExecution, ()),
        capturing: AtomicBool::new(kind == Kind::Captured),
    });
    registry::<Model>().insert(Arc::clone(&m));
    m
}

/// A new model capturing from `stream`, in the stream's context.
pub(crate) fn create_captured(stream: &Arc<Stream>) -> Arc<Model> {
    insert(
        Kind::Captured,
        stream.ctx,
        vec![Bound {
            handle: stream.handle,
            stream: Arc::clone(stream),
            head: true,
            steps: Vec::new(),
        }],
    )
}

/// A new model to build (`aclmdlRIBuildBegin`) in context `ctx`.
pub(crate) fn create_built(ctx: usize) -> Arc<Model> {
    insert(Kind::Built, ctx, Vec::new())
}

/// Resolves a model handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Model>> {
    registry::<Model>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a live model runtime instance"),
    })
}

/// Resolves a task group handle (107017 for anything else).
pub(crate) fn group(h: usize) -> R<Arc<TaskGroup>> {
    registry::<TaskGroup>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a task group of a live model"),
    })
}

/// Destroys a model: a capture still going on is 107026; running executions are awaited up to
/// 10 s (then 107037); a built model's streams are unbound. Executions already queued keep
/// their own reference to the steps.
pub(crate) fn destroy(h: usize) -> R {
    let m = get(h)?;
    if m.capturing() {
        return fail(
            RT_MODEL_CAPTURED,
            format!("model {h:#x} is still being captured (aclmdlRICaptureEnd first)"),
        );
    }
    if !m.wait_idle(DESTROY_WAIT) {
        return fail(
            RT_MODEL_RUNNING,
            format!(
                "model {h:#x} is still executing after {} s",
                DESTROY_WAIT.as_secs()
            ),
        );
    }
    if registry::<Model>().remove(h).is_none() {
        return fail(
            RT_INVALID_HANDLE,
            format!("model {h:#x} was destroyed by another call meanwhile"),
        );
    }
    for s in m.bound_streams() {
        m.unbind(s.handle);
        set_recording(&s, None);
    }
    if let Some(plan) = m.plan() {
        let groups = registry::<TaskGroup>();
        for s in &plan.streams {
            for step in &s.steps {
                if let Step::Group(g) = step {
                    groups.remove(g.handle);
                }
            }
        }
    }
    crate::model::label::forget_model(h);
    Ok(())
}
