//! Stream capture into a model runtime instance, task groups and their updates, and the
//! execution and destruction of models (`aclmdlRI*`).

use super::*;
use crate::model::{self, Kind};
use crate::model_exec::Execution;
use crate::soc;
use crate::stream::Recording;
use std::cell::Cell;

/// 207000 on SoCs without model runtime instances.
pub(super) fn models() -> R {
    soc::require(|f| f.models, "model runtime instances (aclmdlRI*)")
}

/// Stream flags an execution stream may not have: persistent (model streams), AI CPU
/// scheduling, device use only.
const NOT_EXEC: u32 = ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

thread_local! {
    /// The calling thread's capture interaction mode (`aclmdlRICaptureThreadExchangeMode`).
    static MODE: Cell<aclmdlRICaptureMode> = const { Cell::new(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) };
}

acl! {
    /// `aclmdlRICaptureBegin`: the stream's later submissions (copies, memsets, host
    /// functions, event records and waits, value writes and waits, notifies, built-in tasks)
    /// are recorded into a new model instead of run. The default stream cannot capture
    /// (207000); a stream already capturing is 107027.
    fn aclmdlRICaptureBegin(stream: aclrtStream, mode: aclmdlRICaptureMode) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL (the default stream cannot capture)");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        if mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED {
            return fail(RT_PARAM_INVALID, format!("mode {mode} is not GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)"));
        }
        state::check_stream_context(&s)?;
        if s.is_default {
            return fail(RT_FEATURE_NOT_SUPPORT, "the default stream cannot capture");
        }
        if s.bound_model().is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model", s.handle));
        }
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is already capturing", s.handle));
        }
        s.set_recording(Some(Recording::Capture(model::create_captured(s.handle, s.ctx))));
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureEnd`: ends the capture and returns the model (107029 when the stream is
    /// not capturing; 107033 when a task group is still open, which ends the capture and
    /// discards the model).
    fn aclmdlRICaptureEnd(stream: aclrtStream, modelRI: *mut aclmdlRI) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        if modelRI.is_null() {
            return fail(RT_PARAM_INVALID, "modelRI is NULL");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        let Some(m) = s.capturing() else {
            return fail(RT_STREAM_NOT_CAPTURED, format!("stream {:#x} is not capturing", s.handle));
        };
        s.set_recording(None);
        if let Err(f) = m.end_capture() {
            let _ = model::destroy(m.handle);
            return Err(f);
        }
        // SAFETY: checked non-NULL above; valid for one write (C contract).
        unsafe { modelRI.write(as_ptr(m.handle)) };
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureGetInfo`: `ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE` and the model while the
    /// stream captures, `..._NONE` otherwise (either output may be NULL, not both).
    fn aclmdlRICaptureGetInfo(stream: aclrtStream, status: *mut aclmdlRICaptureStatus, modelRI: *mut aclmdlRI) {
        if stream.is_null() || (status.is_null() && modelRI.is_null()) {
            return fail(INVALID_PARAM, "stream is NULL, or both outputs are");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        let m = s.capturing();
        if !status.is_null() {
            let st = if m.is_some() { ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE } else { ACL_MODEL_RI_CAPTURE_STATUS_NONE };
            // SAFETY: non-NULL and valid for one write (C contract).
            unsafe { status.write(st) };
        }
        if !modelRI.is_null()
            && let Some(m) = m
        {
            // SAFETY: non-NULL and valid for one write (C contract).
            unsafe { modelRI.write(as_ptr(m.handle)) };
        }
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureThreadExchangeMode`: swaps the calling thread's capture mode with
    /// `*mode` (recorded; the emulator does not refuse calls by mode).
    fn aclmdlRICaptureThreadExchangeMode(mode: *mut aclmdlRICaptureMode) {
        if mode.is_null() {
            return fail(INVALID_PARAM, "mode is NULL");
        }
        models()?;
        // SAFETY: non-NULL and valid for reads and writes (C contract).
        let m = unsafe { &mut *mode };
        if *m > ACL_MODEL_RI_CAPTURE_MODE_RELAXED {
            return fail(RT_PARAM_INVALID, format!("mode {} is not 0, 1 or 2", *m));
        }
        *m = MODE.with(|t| t.replace(*m));
        Ok(())
    }
}

acl! {
    /// `aclmdlRIExecuteAsync`: queues one execution of the model on `stream`, as one task: the
    /// frozen steps run when the stream gets there (a captured model's event records are issued
    /// now). The execution stream may not be a model's stream (107000), capture (107027) or be
    /// persistent, AI CPU or device-use-only (107000); a model still capturing is 107026, a
    /// built model whose build has not ended 107000.
    fn aclmdlRIExecuteAsync(modelRI: aclmdlRI, stream: aclrtStream) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        models()?;
        let m = model::get(handle(modelRI))?;
        let s = state::stream(handle(stream))?;
        if s.bound_model().is_some() {
            return fail(RT_PARAM_INVALID, format!("stream {:#x} is bound to a model; execute on another stream", s.handle));
        }
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if s.flags & NOT_EXEC != 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("stream {:#x} has flags {:#x}: a persistent, AI CPU or device-use-only stream cannot execute a model", s.handle, s.flags),
            );
        }
        if m.capturing() {
            return fail(RT_MODEL_CAPTURED, format!("model {:#x} is still being captured", m.handle));
        }
        let Some(plan) = m.plan() else {
            return fail(RT_PARAM_INVALID, format!("the build of model {:#x} has not ended (aclmdlRIBuildEnd)", m.handle));
        };
        state::check_stream_context(&s)?;
        s.enqueue(Task::Model(Execution::new(m, plan)))
    }
}

acl! {
    /// `aclmdlRIDestroy`: destroys a model whose capture ended (107026 while capturing); waits up
    /// to 10 s for its running executions (107037 after); unbinds a built model's streams.
    /// Executions already queued keep their own reference to the steps.
    fn aclmdlRIDestroy(modelRI: aclmdlRI) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        models()?;
        model::destroy(handle(modelRI))
    }
}

acl! {
    /// `aclmdlRICaptureTaskGrpBegin`: the tasks the capturing stream records next form a task
    /// group, which an update may overwrite (107029 when the stream is not capturing, 107033 when
    /// a group is open already).
    fn aclmdlRICaptureTaskGrpBegin(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        let Some(m) = s.capturing() else {
            return fail(RT_STREAM_NOT_CAPTURED, format!("stream {:#x} is not capturing", s.handle));
        };
        m.begin_group()
    }
}

acl! {
    /// `aclmdlRICaptureTaskGrpEnd`: closes the task group and returns its handle (107029 when the
    /// stream is not capturing, 107033 when no group is open).
    fn aclmdlRICaptureTaskGrpEnd(stream: aclrtStream, handle_: *mut aclrtTaskGrp) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle_, "handle") }?;
        models()?;
        let s = state::stream(handle(stream))?;
        let Some(m) = s.capturing() else {
            return fail(RT_STREAM_NOT_CAPTURED, format!("stream {:#x} is not capturing", s.handle));
        };
        out.set(as_ptr(m.end_group()?));
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureTaskUpdateBegin`: the tasks issued on `stream` next (a stream that is not
    /// capturing, 107027, and not a model's, 107005) replace the tasks of the group, once
    /// `aclmdlRICaptureTaskUpdateEnd` has queued the update and the stream reaches it.
    fn aclmdlRICaptureTaskUpdateBegin(stream: aclrtStream, handle_: aclrtTaskGrp) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        if handle_.is_null() {
            return fail(INVALID_PARAM, "handle is NULL");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        let g = model::group(handle(handle_))?;
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if s.bound_model().is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model (an update needs a plain stream)", s.handle));
        }
        if s.updating().is_some() {
            return fail(RT_TASK_GROUP_STATUS, format!("stream {:#x} is already updating a task group", s.handle));
        }
        s.set_recording(Some(Recording::Update(model::Update::new(g))));
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureTaskUpdateEnd`: queues the update on the stream; the group's tasks are
    /// replaced when the stream reaches it (asynchronous, as documented). The replacement must
    /// have the group's number and kinds of tasks (107040); a stream with no update begun is
    /// 107033.
    fn aclmdlRICaptureTaskUpdateEnd(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        models()?;
        let s = state::stream(handle(stream))?;
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if s.bound_model().is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model", s.handle));
        }
        let Some(u) = s.updating() else {
            return fail(RT_TASK_GROUP_STATUS, format!("stream {:#x} has no task update begun (aclmdlRICaptureTaskUpdateBegin)", s.handle));
        };
        s.set_recording(None);
        let steps = u.finish()?;
        s.enqueue(Task::UpdateGroup(Arc::clone(&u.group), Arc::new(steps)))
    }
}

/// The model of a C handle that must be a built model (107000 for a captured one).
pub(super) fn built(ri: aclmdlRI) -> R<Arc<model::Model>> {
    let m = model::get(handle(ri))?;
    if m.kind != Kind::Built {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "model {:#x} was made by capture; this needs a built model (aclmdlRIBuildBegin)",
                m.handle
            ),
        );
    }
    Ok(m)
}
