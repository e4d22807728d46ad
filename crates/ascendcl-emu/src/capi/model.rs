//! Model runtime instances (`aclmdlRI*`): stream capture, task groups and their updates, models
//! built on bound persistent streams, executions, abort and destruction, stream activation and
//! switching inside models.

use super::*;
use crate::device::soc;
use crate::memory;
use crate::model::Recording;
use crate::model::exec::Execution;
use crate::model::{self, Kind};
use crate::model::{STREAM_FLAG_DEFAULT, STREAM_FLAG_HEAD, Step};

/// 207000 on SoCs without model runtime instances.
pub(super) fn models() -> R {
    soc::require(|f| f.models, "model runtime instances (aclmdlRI*)")
}

/// Stream flags an execution stream may not have: persistent (model streams), AI CPU
/// scheduling, device use only.
const NOT_EXEC: u32 = ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

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
        let s = crate::stream::get(handle(stream))?;
        if mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED {
            return fail(RT_PARAM_INVALID, format!("mode {mode} is not GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)"));
        }
        crate::stream::check_context(&s)?;
        if s.is_default {
            return fail(RT_FEATURE_NOT_SUPPORT, "the default stream cannot capture");
        }
        if crate::model::bound_model(&s).is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model", s.handle));
        }
        if crate::model::capturing(&s).is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is already capturing", s.handle));
        }
        crate::model::set_recording(&s, Some(Recording::Capture(model::create_captured(&s))));
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
        let s = crate::stream::get(handle(stream))?;
        let Some(m) = crate::model::capturing(&s) else {
            return fail(RT_STREAM_NOT_CAPTURED, format!("stream {:#x} is not capturing", s.handle));
        };
        crate::model::set_recording(&s, None);
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
        let s = crate::stream::get(handle(stream))?;
        let m = crate::model::capturing(&s);
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
        *m = crate::model::exchange_capture_mode(*m);
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
        let s = crate::stream::get(handle(stream))?;
        if crate::model::bound_model(&s).is_some() {
            return fail(RT_PARAM_INVALID, format!("stream {:#x} is bound to a model; execute on another stream", s.handle));
        }
        if crate::model::capturing(&s).is_some() {
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
        crate::stream::check_context(&s)?;
        s.submit(Execution::new(m, plan))
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
        let s = crate::stream::get(handle(stream))?;
        let Some(m) = crate::model::capturing(&s) else {
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
        let s = crate::stream::get(handle(stream))?;
        let Some(m) = crate::model::capturing(&s) else {
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
        let s = crate::stream::get(handle(stream))?;
        let g = model::group(handle(handle_))?;
        if crate::model::capturing(&s).is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if crate::model::bound_model(&s).is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model (an update needs a plain stream)", s.handle));
        }
        if crate::model::updating(&s).is_some() {
            return fail(RT_TASK_GROUP_STATUS, format!("stream {:#x} is already updating a task group", s.handle));
        }
        crate::model::set_recording(&s, Some(Recording::Update(model::Update::new(g))));
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
        let s = crate::stream::get(handle(stream))?;
        if crate::model::capturing(&s).is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if crate::model::bound_model(&s).is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is bound to a model", s.handle));
        }
        let Some(u) = crate::model::updating(&s) else {
            return fail(RT_TASK_GROUP_STATUS, format!("stream {:#x} has no task update begun (aclmdlRICaptureTaskUpdateBegin)", s.handle));
        };
        crate::model::set_recording(&s, None);
        let steps = u.finish()?;
        s.enqueue(crate::model::work::UpdateGroup(Arc::clone(&u.group), Arc::new(steps)))
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

/// 207000 on SoCs whose runtime lacks stream activation and switching (A3, IPV350).
fn stream_switch() -> R {
    soc::require(
        |f| f.stream_switch,
        "stream activation and switching in models",
    )
}

acl! {
    /// `aclmdlRIBuildBegin`: a new model to build in the current context; `flag` must be 0.
    fn aclmdlRIBuildBegin(modelRI: *mut aclmdlRI, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(modelRI, "modelRI") }?;
        models()?;
        if flag != 0 {
            return fail(RT_PARAM_INVALID, format!("flag {flag} is reserved and must be 0"));
        }
        let (_, ctx) = crate::device::context::current_ids()?;
        out.set(as_ptr(model::create_built(ctx).handle));
        Ok(())
    }
}

acl! {
    /// `aclmdlRIBindStream`: binds a persistent stream (`ACL_STREAM_PERSISTENT`) to a model
    /// being built; the tasks issued on it are recorded into the model. `flag` is
    /// `ACL_MODEL_STREAM_FLAG_HEAD` (the stream runs from the start of each execution) or
    /// `ACL_MODEL_STREAM_FLAG_DEFAULT` (it runs only when a step activates it).
    fn aclmdlRIBindStream(modelRI: aclmdlRI, stream: aclrtStream, flag: u32) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        models()?;
        if flag != STREAM_FLAG_HEAD && flag != STREAM_FLAG_DEFAULT {
            return fail(
                RT_PARAM_INVALID,
                format!("flag {flag:#x} is not ACL_MODEL_STREAM_FLAG_HEAD (0) or ACL_MODEL_STREAM_FLAG_DEFAULT (0x7fffffff)"),
            );
        }
        let m = model::get(handle(modelRI))?;
        let s = crate::stream::get(handle(stream))?;
        if s.flags & ACL_STREAM_PERSISTENT == 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("stream {:#x} is not persistent (create it with ACL_STREAM_PERSISTENT)", s.handle),
            );
        }
        if crate::model::bound_model(&s).is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is already bound to a model", s.handle));
        }
        if m.kind != model::Kind::Built {
            return fail(RT_PARAM_INVALID, format!("model {:#x} was made by capture; streams bind to built models", m.handle));
        }
        if crate::model::capturing(&s).is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if s.flags & ACL_STREAM_DEVICE_USE_ONLY != 0 {
            return fail(RT_INTERNAL_ERROR, format!("stream {:#x} is device-use-only", s.handle));
        }
        if s.failure_mode() == 1 {
            return fail(RT_FEATURE_NOT_SUPPORT, format!("stream {:#x} is in STOP failure mode", s.handle));
        }
        if s.flags & ACL_STREAM_FAST_LAUNCH != 0 {
            return fail(RT_FEATURE_NOT_SUPPORT, format!("stream {:#x} is a fast-launch stream", s.handle));
        }
        if m.finished() {
            return fail(RT_PARAM_INVALID, format!("the build of model {:#x} has ended", m.handle));
        }
        crate::stream::check_context(&s)?;
        if s.ctx != m.ctx {
            return fail(
                RT_STREAM_CONTEXT,
                format!("stream {:#x} belongs to context {:#x}, model {:#x} to context {:#x}", s.handle, s.ctx, m.handle, m.ctx),
            );
        }
        if s.recording() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is updating a task group", s.handle));
        }
        m.bind(&s, flag == STREAM_FLAG_HEAD);
        crate::model::set_recording(&s, Some(Recording::Bound(m)));
        Ok(())
    }
}

/// The model and stream of a call on a bound stream (`aclmdlRIUnbindStream`,
/// `aclmdlRIEndTask`), checked in the runtime's order: `modelRI` not NULL, models offered, a
/// built model, a live stream that is not capturing.
fn built_and_stream(
    modelRI: aclmdlRI,
    stream: aclrtStream,
) -> R<(Arc<model::Model>, Arc<crate::engine::stream::Stream>)> {
    if modelRI.is_null() {
        return fail(INVALID_PARAM, "modelRI is NULL");
    }
    models()?;
    let m = built(modelRI)?;
    let s = crate::stream::get(handle(stream))?;
    if crate::model::capturing(&s).is_some() {
        return fail(
            RT_STREAM_CAPTURED,
            format!("stream {:#x} is capturing", s.handle),
        );
    }
    Ok((m, s))
}

acl! {
    /// `aclmdlRIUnbindStream`: the stream leaves the model and runs its tasks again (107005
    /// when it is not bound to this model).
    fn aclmdlRIUnbindStream(modelRI: aclmdlRI, stream: aclrtStream) {
        let (m, s) = built_and_stream(modelRI, stream)?;
        if !m.unbind(s.handle) {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is not bound to model {:#x}", s.handle, m.handle));
        }
        crate::model::set_recording(&s, None);
        Ok(())
    }
}

acl! {
    /// `aclmdlRIEndTask`: marks the end of the stream's part of the model (an execution of the
    /// stream stops there).
    fn aclmdlRIEndTask(modelRI: aclmdlRI, stream: aclrtStream) {
        let (m, s) = built_and_stream(modelRI, stream)?;
        m.push_bound(s.handle, Step::End)
    }
}

acl! {
    /// `aclmdlRIBuildEnd`: ends the build: the bound streams' recorded steps become what every
    /// execution runs, and the streams take no more tasks. `reserve` must be NULL.
    fn aclmdlRIBuildEnd(modelRI: aclmdlRI, reserve: *mut c_void) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        if !reserve.is_null() {
            return fail(INVALID_PARAM, "reserve is a reserved parameter and must be NULL");
        }
        models()?;
        built(modelRI)?.end_build()
    }
}

acl! {
    /// `aclmdlRIExecute`: runs a built model and returns when it ends; `timeout` -1 waits
    /// forever, > 0 milliseconds (507046 on expiry: the execution goes on), 0 or < -1 is
    /// 107000.
    fn aclmdlRIExecute(modelRI: aclmdlRI, timeout: i32) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        models()?;
        if timeout == 0 || timeout < -1 {
            return fail(RT_PARAM_INVALID, format!("timeout {timeout} is invalid (-1 waits forever, otherwise milliseconds > 0)"));
        }
        let m = built(modelRI)?;
        let Some(plan) = m.plan() else {
            return fail(RT_PARAM_INVALID, format!("the build of model {:#x} has not ended (aclmdlRIBuildEnd)", m.handle));
        };
        let exec = Execution::new(m, plan);
        if timeout == -1 {
            return exec.run_alone();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("acl-emu-model-execute".to_string())
            .spawn(move || {
                let _ = tx.send(exec.run_alone());
            })
            .map_err(|e| Fail { code: RT_INTERNAL_ERROR, msg: format!("cannot start the execution: {e}") })?;
        match rx.recv_timeout(Duration::from_millis(timeout as u64)) {
            Ok(r) => r,
            Err(_) => fail(
                RT_STREAM_SYNC_TIMEOUT,
                format!("model {modelRI:p} was still running after {timeout} ms (the execution goes on)"),
            ),
        }
    }
}

acl! {
    /// `aclmdlRIAbort`: stops the running executions of a built model and returns once they
    /// have stopped (their result is 507023); not supported for captured models (207000).
    fn aclmdlRIAbort(modelRI: aclmdlRI) {
        models()?;
        if modelRI.is_null() {
            return fail(RT_PARAM_INVALID, "modelRI is NULL");
        }
        let m = model::get(handle(modelRI))?;
        if m.kind != model::Kind::Built {
            return fail(RT_FEATURE_NOT_SUPPORT, format!("model {:#x} was made by capture; aclmdlRIAbort is not supported for captured models", m.handle));
        }
        m.abort();
        Ok(())
    }
}

/// The model both streams are bound to (107005 otherwise).
fn same_model(
    a: &crate::engine::stream::Stream,
    s: &crate::engine::stream::Stream,
) -> R<Arc<model::Model>> {
    let Some(m) = crate::model::bound_model(s) else {
        return fail(
            RT_STREAM_MODEL,
            format!("stream {:#x} is not bound to a model", s.handle),
        );
    };
    if !m.is_bound(a.handle) {
        return fail(
            RT_STREAM_MODEL,
            format!(
                "stream {:#x} is not bound to model {:#x} (the model of stream {:#x})",
                a.handle, m.handle, s.handle
            ),
        );
    }
    Ok(m)
}

acl! {
    /// `aclrtActiveStream`: a step of `stream` that starts `activeStream` (both bound to one
    /// model); the activated stream runs in parallel with the rest.
    fn aclrtActiveStream(activeStream: aclrtStream, stream: aclrtStream) {
        if activeStream.is_null() || stream.is_null() {
            return fail(INVALID_PARAM, "activeStream or stream is NULL");
        }
        models()?;
        stream_switch()?;
        let a = crate::stream::get(handle(activeStream))?;
        let s = crate::stream::get(handle(stream))?;
        let m = same_model(&a, &s)?;
        m.push_bound(s.handle, Step::Activate(a.handle))
    }
}

acl! {
    /// `aclrtSwitchStream`: a step of `stream` that compares two int32 (`ACL_RT_SWITCH_INT32`)
    /// or int64 (`ACL_RT_SWITCH_INT64`) values of device memory when it runs; when
    /// `leftValue cond rightValue` holds, `trueStream` starts and `stream` stops, otherwise
    /// `stream` goes on. `falseStream` is reserved (NULL).
    fn aclrtSwitchStream(leftValue: *mut c_void, cond: aclrtCondition, rightValue: *mut c_void, dataType: aclrtCompareDataType, trueStream: aclrtStream, falseStream: aclrtStream, stream: aclrtStream) {
        if leftValue.is_null() || rightValue.is_null() || trueStream.is_null() || stream.is_null() {
            return fail(INVALID_PARAM, "leftValue, rightValue, trueStream or stream is NULL");
        }
        if !falseStream.is_null() {
            return fail(INVALID_PARAM, "falseStream is reserved and must be NULL");
        }
        models()?;
        stream_switch()?;
        if cond > ACL_RT_LESS_OR_EQUAL {
            return fail(RT_PARAM_INVALID, format!("cond {cond} is not an aclrtCondition (0..=5)"));
        }
        if dataType > ACL_RT_SWITCH_INT64 {
            return fail(RT_PARAM_INVALID, format!("dataType {dataType} is not ACL_RT_SWITCH_INT32 (0) or ACL_RT_SWITCH_INT64 (1)"));
        }
        let t = crate::stream::get(handle(trueStream))?;
        let s = crate::stream::get(handle(stream))?;
        let wide = dataType == ACL_RT_SWITCH_INT64;
        let width = if wide { 8 } else { 4 };
        let sides = {
            let tbl = memory::read();
            [tbl.check("leftValue", leftValue as usize, width)?, tbl.check("rightValue", rightValue as usize, width)?]
        };
        if sides.iter().any(|x| !matches!(x.loc, Loc::Device(_))) {
            return fail(RT_PARAM_INVALID, "leftValue and rightValue must be device memory");
        }
        let m = same_model(&t, &s)?;
        m.push_bound(
            s.handle,
            Step::SwitchStream { left: leftValue as usize, right: rightValue as usize, sides, cond, wide, target: t.handle },
        )
    }
}

acl! {
    /// `aclmdlRIDebugJsonPrint`: writes the model's tasks, per stream, to the file `path` as a
    /// JSON array of trace events (see the emulator guide for the fields). NULL `modelRI` or
    /// `path` is 100000; a handle that is not a live model 107017; a file that cannot be created
    /// or written 107000. `flags` (`ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY` or `..._VERBOSE`) is
    /// not checked, as in the runtime; both write the same entries here.
    fn aclmdlRIDebugJsonPrint(modelRI: aclmdlRI, path: *const c_char, flags: u32) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        if path.is_null() {
            return fail(INVALID_PARAM, "path is NULL");
        }
        let _ = flags;
        models()?;
        let m = model::get(handle(modelRI))?;
        // SAFETY: non-NULL and NUL-terminated (C contract).
        let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
        let p = std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
        crate::model::debug_json::write(&m, p)
    }
}
