//! Where a stream's submissions go instead of its queue: a [`Recorder`] (a model capturing the
//! stream, a built model it is bound to, a task group update), set by the model concept. The
//! engine hands the recorder each unit of work submitted while it is set and asks it whether the
//! stream may be synchronised or destroyed; what the recorder is, only the model concept knows.

use super::work::Work;
use crate::base::error::*;
use std::any::Any;
use std::sync::Arc;

/// Takes a stream's submissions instead of its queue.
pub(crate) trait Recorder: Send + Sync + 'static {
    /// Records `work`, submitted to stream `stream`.
    fn record(&self, stream: usize, work: Arc<dyn Work>) -> R;

    /// Whether the stream is capturing: it cannot be synchronised, queried or destroyed
    /// (107027).
    fn capturing(&self) -> bool;

    /// Why stream `stream` cannot be destroyed now, if it cannot (a stream bound to a model).
    fn refuses_destroy(&self, stream: usize) -> Option<Fail>;

    /// The recorder itself, for its owner to recognise.
    fn as_any(&self) -> &dyn Any;
}
