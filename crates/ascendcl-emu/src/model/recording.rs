//! What a stream records into instead of running its work: a model capturing it, a built model it
//! is bound to, or a task group update in progress — the model concept's [`Recorder`] on the
//! engine's stream, and the helpers that find it again.

use super::{Model, Step, Update};
use crate::base::error::*;
use crate::engine::record::Recorder;
use crate::engine::stream::Stream;
use crate::engine::work::Work;
use std::any::Any;
use std::sync::Arc;

/// Where a stream's submissions go instead of its queue.
#[derive(Clone)]
pub(crate) enum Recording {
    /// Captured into a model (`aclmdlRICaptureBegin`).
    Capture(Arc<Model>),
    /// Recorded on the stream's part of a built model (`aclmdlRIBindStream`).
    Bound(Arc<Model>),
    /// The replacement tasks of a task group (`aclmdlRICaptureTaskUpdateBegin`).
    Update(Arc<Update>),
}

impl Recording {
    /// Records `step` where the recording says (a bound stream of a finished build refuses it).
    fn push(&self, stream: usize, step: Step) -> R {
        match self {
            Recording::Capture(m) => {
                m.push_captured(step);
                Ok(())
            }
            Recording::Bound(m) => m.push_bound(stream, step),
            Recording::Update(u) => {
                u.push(step);
                Ok(())
            }
        }
    }
}

impl Recorder for Recording {
    fn record(&self, stream: usize, work: Arc<dyn Work>) -> R {
        self.push(stream, Step::Work(work))
    }

    fn capturing(&self) -> bool {
        matches!(self, Recording::Capture(_))
    }

    fn refuses_destroy(&self, stream: usize) -> Option<Fail> {
        match self {
            Recording::Bound(m) => Some(Fail {
                code: RT_STREAM_MODEL,
                msg: format!(
                    "stream {stream:#x} is bound to model {:#x} (aclmdlRIUnbindStream or \
                     aclmdlRIDestroy first)",
                    m.handle
                ),
            }),
            _ => None,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The stream's recording, if it records.
fn recording(s: &Stream) -> Option<Recording> {
    s.recorder()
        .and_then(|r| r.as_any().downcast_ref::<Recording>().cloned())
}

/// The model the stream is capturing into, if any.
pub(crate) fn capturing(s: &Stream) -> Option<Arc<Model>> {
    match recording(s) {
        Some(Recording::Capture(m)) => Some(m),
        _ => None,
    }
}

/// The built model the stream is bound to, if any.
pub(crate) fn bound_model(s: &Stream) -> Option<Arc<Model>> {
    match recording(s) {
        Some(Recording::Bound(m)) => Some(m),
        _ => None,
    }
}

/// The task group update in progress on the stream, if any.
pub(crate) fn updating(s: &Stream) -> Option<Arc<Update>> {
    match recording(s) {
        Some(Recording::Update(u)) => Some(u),
        _ => None,
    }
}

/// Starts or ends the stream's recording.
pub(crate) fn set_recording(s: &Stream, rec: Option<Recording>) {
    s.set_recorder(rec.map(|r| Arc::new(r) as Arc<dyn Recorder>));
}

/// Records a step when the stream records (under the stream's lock); None when it does not (the
/// caller queues the work).
pub(crate) fn record_step(s: &Stream, step: impl FnOnce() -> Step) -> Option<R> {
    s.with_recorder(|r| {
        r.as_any()
            .downcast_ref::<Recording>()
            .map(|rec| rec.push(s.handle, step()))
    })
    .flatten()
}
