//! A model's stream work: one execution of a model (`aclmdlRIExecuteAsync`), and the update of a
//! task group's tasks, which takes effect when its stream gets there
//! (`aclmdlRICaptureTaskUpdateEnd`).

use super::exec::Execution;
use super::{Step, TaskGroup};
use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use std::sync::Arc;

impl Work for Execution {
    fn run(&self, cx: &Cx<'_>) -> R {
        Execution::run(self, cx.cancel)
    }

    fn describe(&self) -> Task {
        let (streams, steps) = self.size();
        Task::new("model execute", "model")
            .num("streams", streams as u64)
            .num("steps", steps as u64)
    }
}

/// The group's tasks are replaced when the stream gets here.
pub(crate) struct UpdateGroup(pub Arc<TaskGroup>, pub Arc<Vec<Step>>);

impl Work for UpdateGroup {
    fn run(&self, _: &Cx<'_>) -> R {
        self.0.replace(self.1.as_ref().clone());
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("task group update", "model")
    }
}
