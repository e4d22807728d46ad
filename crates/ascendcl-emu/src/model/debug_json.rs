//! `aclmdlRIDebugJsonPrint`: a model's streams and their tasks as a JSON array of trace events
//! (the form chrome://tracing reads), one event per task, in stream order and task order.

use super::{Model, PlanStream, Step};
use crate::base::error::*;
use crate::engine::trace::Arg;
use serde_json::{Map, Value, json};
use std::path::Path;

/// The nominal length of every task in the trace (tasks are laid end to end on their stream).
const TASK_US: u64 = 1;

/// A task's kind and name, and its values.
fn task_of(step: &Step) -> (&'static str, String, Map<String, Value>) {
    let mut args = Map::new();
    let (kind, name) = match step {
        Step::Work(w) => {
            let t = w.describe();
            for (k, v) in &t.args {
                let v = match v {
                    Arg::U(n) => json!(n),
                    Arg::S(s) => json!(s),
                };
                args.insert((*k).to_string(), v);
            }
            (t.cat, t.name.into_owned())
        }
        Step::Record(e) => {
            args.insert("eventId".into(), json!(e.id));
            ("event_record", "event record".into())
        }
        Step::Wait(e) => {
            args.insert("eventId".into(), json!(e.id));
            ("event_wait", "event wait".into())
        }
        // Groups are expanded by the caller.
        Step::Group(_) => ("task_group", "task group".into()),
        Step::Label(l) => {
            args.insert("label".into(), json!(format!("{l:#x}")));
            ("label_set", "label".into())
        }
        Step::SwitchByIndex { ptr, count, .. } => {
            args.insert("index".into(), json!(format!("{ptr:#x}")));
            args.insert("labels".into(), json!(count));
            ("label_switch", "switch by index".into())
        }
        Step::Activate(s) => {
            args.insert("activeStream".into(), json!(format!("{s:#x}")));
            ("stream_active", "active stream".into())
        }
        Step::SwitchStream {
            left,
            right,
            cond,
            wide,
            target,
            ..
        } => {
            args.insert("left".into(), json!(format!("{left:#x}")));
            args.insert("right".into(), json!(format!("{right:#x}")));
            args.insert("condition".into(), json!(cond));
            args.insert(
                "dataType".into(),
                json!(if *wide { "int64" } else { "int32" }),
            );
            args.insert("trueStream".into(), json!(format!("{target:#x}")));
            ("stream_switch", "switch stream".into())
        }
        Step::End => ("model_end", "end task".into()),
    };
    (kind, name, args)
}

/// The trace events of one stream of model `model`.
fn stream_events(model: usize, pid: u32, s: &PlanStream, out: &mut Vec<Value>) {
    let mut task_id = 0u64;
    let mut push = |step: &Step, group: Option<usize>| {
        let (kind, name, mut args) = task_of(step);
        args.insert("modelId".into(), json!(format!("{model:#x}")));
        args.insert("streamId".into(), json!(s.id));
        args.insert("taskId".into(), json!(task_id));
        args.insert("taskType".into(), json!(kind));
        if let Some(g) = group {
            args.insert("taskGroup".into(), json!(format!("{g:#x}")));
        }
        out.push(json!({
            "name": name,
            "ph": "X",
            "pid": pid,
            "tid": format!("stream{}", s.id),
            "ts": task_id * TASK_US,
            "dur": TASK_US,
            "args": args,
        }));
        task_id += 1;
    };
    for step in &s.steps {
        match step {
            Step::Group(g) => {
                for inner in g.steps() {
                    push(&inner, Some(g.handle));
                }
            }
            _ => push(step, None),
        }
    }
}

/// The JSON description of the model: one trace event per task of each stream.
pub(crate) fn describe(m: &Model) -> Value {
    let pid = std::process::id();
    let mut events = Vec::new();
    for s in m.streams_now() {
        stream_events(m.handle, pid, &s, &mut events);
    }
    Value::Array(events)
}

/// Writes the description to `path` (107000 when the file cannot be created or written).
pub(crate) fn write(m: &Model, path: &Path) -> R {
    let text = serde_json::to_string_pretty(&describe(m)).map_err(|e| Fail {
        code: RT_INTERNAL_ERROR,
        msg: format!(
            "cannot encode the description of model {:#x}: {e}",
            m.handle
        ),
    })?;
    std::fs::write(path, text).map_err(|e| Fail {
        code: RT_PARAM_INVALID,
        msg: format!("cannot write {}: {e}", path.display()),
    })
}
