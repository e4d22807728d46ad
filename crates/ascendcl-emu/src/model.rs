//! Models captured from a stream (`aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`): the tasks
//! submitted to a capturing stream are recorded instead of run, and executing the model
//! (`aclmdlRIExecuteAsync`) queues a fresh copy of them, in order, on another stream.

use crate::error::*;
use crate::event::Event;
use crate::stream::Task;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

/// One captured step.
#[derive(Clone)]
pub(crate) enum Step {
    /// A task, cloned for each execution.
    Task(Task),
    /// An event record: a new record of the event at each execution.
    Record(Arc<Event>),
    /// A wait for the event's latest record at the time of each execution.
    Wait(Arc<Event>),
}

/// A model runtime instance made by capture.
pub(crate) struct Model {
    pub handle: usize,
    steps: Mutex<Vec<Step>>,
    capturing: AtomicBool,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Records a step (while capturing).
    pub(crate) fn push(&self, s: Step) {
        lock(&self.steps).push(s);
    }

    /// Whether capture into the model is still going on.
    pub(crate) fn capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    /// Ends the capture.
    pub(crate) fn end(&self) {
        self.capturing.store(false, Ordering::Release);
    }

    /// The tasks of one execution.
    pub(crate) fn instantiate(&self) -> Vec<Task> {
        lock(&self.steps)
            .iter()
            .map(|s| match s {
                Step::Task(t) => t.clone(),
                Step::Record(ev) => {
                    let seq = ev.begin_record();
                    Task::Record(Arc::clone(ev), seq)
                }
                Step::Wait(ev) => Task::Wait(crate::event::EventWait::latest(Arc::clone(ev), None)),
            })
            .collect()
    }
}

static MODELS: LazyLock<Mutex<HashMap<usize, Arc<Model>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// A new model, capturing.
pub(crate) fn create() -> Arc<Model> {
    let m = Arc::new(Model {
        handle: crate::state::new_handle(),
        steps: Mutex::new(Vec::new()),
        capturing: AtomicBool::new(true),
    });
    lock(&MODELS).insert(m.handle, Arc::clone(&m));
    m
}

/// Resolves a model handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Model>> {
    lock(&MODELS).get(&h).cloned().ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a live model runtime instance"),
    })
}

/// Destroys a model whose capture ended.
pub(crate) fn destroy(h: usize) -> R {
    let m = get(h)?;
    if m.capturing() {
        return fail(
            RT_MODEL_CAPTURED,
            format!("model {h:#x} is still being captured (aclmdlRICaptureEnd first)"),
        );
    }
    lock(&MODELS).remove(&h);
    Ok(())
}
