//! Labels inside built models: creation, label lists, setting a label on a bound stream and the
//! switch task that continues at one of a list's labels (`aclrt*Label*`).

use super::*;
use crate::memory;
use crate::model::Step;
use crate::model::label;

acl! {
    /// `aclrtCreateLabel`: a label of the current context (at most 65535 per process, 207005
    /// beyond).
    fn aclrtCreateLabel(label_: *mut aclrtLabel) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(label_, "label") }?;
        models()?;
        let (_, ctx) = crate::device::context::current_ids()?;
        out.set(as_ptr(label::create(ctx)?));
        Ok(())
    }
}

acl! {
    /// `aclrtCreateLabelList`: a list of `num` labels (1 to 65535, else 107000), each a live
    /// label (107017).
    fn aclrtCreateLabelList(labels: *mut aclrtLabel, num: usize, labelList: *mut aclrtLabelList) {
        if labels.is_null() {
            return fail(INVALID_PARAM, "labels is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(labelList, "labelList") }?;
        models()?;
        if num == 0 || num > label::MAX_LIST as usize {
            return fail(RT_PARAM_INVALID, format!("num {num} is outside 1..=65535"));
        }
        let (_, ctx) = crate::device::context::current_ids()?;
        // SAFETY: C contract: `labels` holds `num` handles.
        let handles: Vec<usize> = unsafe { std::slice::from_raw_parts(labels, num) }
            .iter()
            .map(|l| handle(*l))
            .collect();
        out.set(as_ptr(label::create_list(handles, ctx)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyLabel`: a label of another context is 507031.
    fn aclrtDestroyLabel(label_: aclrtLabel) {
        if label_.is_null() {
            return fail(INVALID_PARAM, "label is NULL");
        }
        models()?;
        let (_, ctx) = crate::device::context::current_ids()?;
        label::destroy(handle(label_), ctx)
    }
}

acl! {
    /// `aclrtDestroyLabelList`.
    fn aclrtDestroyLabelList(labelList: aclrtLabelList) {
        if labelList.is_null() {
            return fail(INVALID_PARAM, "labelList is NULL");
        }
        models()?;
        label::destroy_list(handle(labelList))
    }
}

acl! {
    /// `aclrtSetLabel`: the label marks the position of the next task of `stream`, a stream
    /// bound to a model being built. Checks in order: a label of another context 507031, another
    /// context's stream 107003, a stream not bound to a model 107005, a label already set or in
    /// no label list 507000.
    fn aclrtSetLabel(label_: aclrtLabel, stream: aclrtStream) {
        if label_.is_null() {
            return fail(INVALID_PARAM, "label is NULL");
        }
        models()?;
        let l = label::get(handle(label_))?;
        let s = crate::stream::get(handle(stream))?;
        let (_, ctx) = crate::device::context::current_ids()?;
        label::check_context(&l, ctx)?;
        crate::stream::check_context(&s)?;
        let Some(m) = crate::model::bound_model(&s) else {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is not bound to a model (aclmdlRIBindStream)", s.handle));
        };
        if m.finished() || m.position(s.handle).is_none() {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} takes no more tasks for model {:#x}", s.handle, m.handle));
        }
        label::set(&l, m.handle, s.handle)?;
        m.push_bound(s.handle, Step::Label(l.handle))
    }
}

acl! {
    /// `aclrtSwitchLabelByIndex`: a step of `stream` (bound to a model being built) that reads
    /// the u32 index at device address `ptr` when it runs and continues at that label of the
    /// list (the label `maxValue - 1` when the index is `maxValue` or more); the label's stream
    /// goes on from there and `stream` stops. `maxValue` is 1 to the list's length (107000).
    fn aclrtSwitchLabelByIndex(ptr: *mut c_void, maxValue: u32, labelList: aclrtLabelList, stream: aclrtStream) {
        if ptr.is_null() || labelList.is_null() || stream.is_null() {
            return fail(INVALID_PARAM, "ptr, labelList or stream is NULL");
        }
        models()?;
        let list = label::get_list(handle(labelList))?;
        let s = crate::stream::get(handle(stream))?;
        let (_, ctx) = crate::device::context::current_ids()?;
        if list.ctx != ctx {
            return fail(
                RT_LABEL_CONTEXT,
                format!("label list {:#x} belongs to context {:#x}, not to the current context {ctx:#x}", list.handle, list.ctx),
            );
        }
        crate::stream::check_context(&s)?;
        let Some(m) = crate::model::bound_model(&s) else {
            return fail(RT_STREAM_MODEL, format!("stream {:#x} is not bound to a model (aclmdlRIBindStream)", s.handle));
        };
        if maxValue == 0 || maxValue as usize > list.labels.len() {
            return fail(
                RT_PARAM_INVALID,
                format!("maxValue {maxValue} is outside 1..={} (the labels of the list)", list.labels.len()),
            );
        }
        let side = memory::read().check("ptr", ptr as usize, 4)?;
        if !matches!(side.loc, Loc::Device(_)) {
            return fail(RT_PARAM_INVALID, format!("ptr {ptr:p} is not device memory (the index is read on the device)"));
        }
        m.push_bound(s.handle, Step::SwitchByIndex { ptr: ptr as usize, side, count: maxValue, list })
    }
}
