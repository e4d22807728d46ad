//! Built model runtime instances: persistent streams bound to a model record the tasks issued
//! on them (`aclmdlRIBuildBegin` … `aclmdlRIBuildEnd`); synchronous execution and abort;
//! stream activation and switching inside models.

use super::*;
use crate::model::{self, STREAM_FLAG_DEFAULT, STREAM_FLAG_HEAD, Step};
use crate::model_exec::Execution;
use crate::soc;
use crate::stream::Recording;
use std::sync::atomic::AtomicBool;

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
        let (_, ctx) = state::current_ids()?;
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
        let s = state::stream(handle(stream))?;
        if s.flags & ACL_STREAM_PERSISTENT == 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("stream {:#x} is not persistent (create it with ACL_STREAM_PERSISTENT)", s.handle),
            );
        }
        if s.bound_model().is_some() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is already bound to a model", s.handle));
        }
        if m.kind != model::Kind::Built {
            return fail(RT_PARAM_INVALID, format!("model {:#x} was made by capture; streams bind to built models", m.handle));
        }
        if s.capturing().is_some() {
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
        state::check_stream_context(&s)?;
        if s.ctx != m.ctx {
            return fail(
                RT_STREAM_CONTEXT,
                format!("stream {:#x} belongs to context {:#x}, model {:#x} to context {:#x}", s.handle, s.ctx, m.handle, m.ctx),
            );
        }
        if s.recording() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is updating a task group", s.handle));
        }
        m.bind(s.handle, flag == STREAM_FLAG_HEAD);
        s.set_recording(Some(Recording::Bound(m)));
        Ok(())
    }
}

/// The model and stream of a call on a bound stream (`aclmdlRIUnbindStream`,
/// `aclmdlRIEndTask`), checked in the runtime's order: `modelRI` not NULL, models offered, a
/// built model, a live stream that is not capturing.
fn built_and_stream(
    modelRI: aclmdlRI,
    stream: aclrtStream,
) -> R<(Arc<model::Model>, Arc<crate::stream::Stream>)> {
    if modelRI.is_null() {
        return fail(INVALID_PARAM, "modelRI is NULL");
    }
    models()?;
    let m = built(modelRI)?;
    let s = state::stream(handle(stream))?;
    if s.capturing().is_some() {
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
        s.set_recording(None);
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

/// The "outer" cancellation flag of an execution that runs on no stream.
static NEVER: AtomicBool = AtomicBool::new(false);

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
            return exec.run(&NEVER);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("acl-emu-model-execute".to_string())
            .spawn(move || {
                let _ = tx.send(exec.run(&NEVER));
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
fn same_model(a: &crate::stream::Stream, s: &crate::stream::Stream) -> R<Arc<model::Model>> {
    let Some(m) = s.bound_model() else {
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
        let a = state::stream(handle(activeStream))?;
        let s = state::stream(handle(stream))?;
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
        let t = state::stream(handle(trueStream))?;
        let s = state::stream(handle(stream))?;
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
