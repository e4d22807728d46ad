//! Stream capture into a model runtime instance and its execution (`aclmdlRI*`).

use super::*;
use crate::model;
use std::cell::Cell;

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
        let s = state::stream(handle(stream))?;
        if mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED {
            return fail(RT_PARAM_INVALID, format!("mode {mode} is not GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)"));
        }
        state::check_stream_context(&s)?;
        if s.is_default {
            return fail(RT_FEATURE_NOT_SUPPORT, "the default stream cannot capture");
        }
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is already capturing", s.handle));
        }
        s.set_capture(Some(model::create()));
        Ok(())
    }
}

acl! {
    /// `aclmdlRICaptureEnd`: ends the capture and returns the model (107029 when the stream is
    /// not capturing).
    fn aclmdlRICaptureEnd(stream: aclrtStream, modelRI: *mut aclmdlRI) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        if modelRI.is_null() {
            return fail(RT_PARAM_INVALID, "modelRI is NULL");
        }
        let s = state::stream(handle(stream))?;
        let Some(m) = s.capturing() else {
            return fail(RT_STREAM_NOT_CAPTURED, format!("stream {:#x} is not capturing", s.handle));
        };
        s.set_capture(None);
        m.end();
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
    /// `aclmdlRIExecuteAsync`: queues one execution of the model on `stream`: a fresh copy of
    /// the captured steps, in captured order, as one unit (event records record anew, waits wait
    /// for the event's latest record at execution time). A model still capturing is 107026, a
    /// capturing execution stream 107027.
    fn aclmdlRIExecuteAsync(modelRI: aclmdlRI, stream: aclrtStream) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        let m = model::get(handle(modelRI))?;
        let s = state::stream(handle(stream))?;
        if s.capturing().is_some() {
            return fail(RT_STREAM_CAPTURED, format!("stream {:#x} is capturing", s.handle));
        }
        if m.capturing() {
            return fail(RT_MODEL_CAPTURED, format!("model {:#x} is still being captured", m.handle));
        }
        state::check_stream_context(&s)?;
        s.enqueue_all(m.instantiate())
    }
}

acl! {
    /// `aclmdlRIDestroy`: destroys a model whose capture ended (107026 while capturing).
    /// Executions already queued keep their own copy of the steps.
    fn aclmdlRIDestroy(modelRI: aclmdlRI) {
        if modelRI.is_null() {
            return fail(INVALID_PARAM, "modelRI is NULL");
        }
        model::destroy(handle(modelRI))
    }
}
