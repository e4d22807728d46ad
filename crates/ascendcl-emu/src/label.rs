//! Labels (`aclrtCreateLabel`) and label lists (`aclrtCreateLabelList`): positions in the
//! streams of a built model that `aclrtSwitchLabelByIndex` continues at.

use crate::error::*;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

/// Labels per process (the documented limit).
const MAX_LABELS: usize = 65535;
/// Labels per list.
pub(crate) const MAX_LIST: u32 = 65535;

/// A label.
#[derive(Debug)]
pub(crate) struct Label {
    pub handle: usize,
    /// The context it was created in.
    pub ctx: usize,
    /// Where it is set: (model, stream).
    set: Mutex<Option<(usize, usize)>>,
    /// The label lists that hold it.
    lists: AtomicUsize,
}

/// A label list.
#[derive(Debug)]
pub(crate) struct LabelList {
    pub handle: usize,
    pub ctx: usize,
    /// The labels, in list order.
    pub labels: Vec<usize>,
}

#[derive(Default)]
struct Registry {
    labels: HashMap<usize, Arc<Label>>,
    lists: HashMap<usize, Arc<LabelList>>,
}

static REG: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

/// `aclrtCreateLabel` in context `ctx`.
pub(crate) fn create(ctx: usize) -> R<usize> {
    let mut r = lock(&REG);
    if r.labels.len() >= MAX_LABELS {
        return fail(
            RT_RESOURCE_ALLOC_FAIL,
            format!("the process already has {MAX_LABELS} labels"),
        );
    }
    let h = crate::state::new_handle();
    r.labels.insert(
        h,
        Arc::new(Label {
            handle: h,
            ctx,
            set: Mutex::new(None),
            lists: AtomicUsize::new(0),
        }),
    );
    Ok(h)
}

/// Resolves a label handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Label>> {
    lock(&REG).labels.get(&h).cloned().ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a live label"),
    })
}

/// Resolves a label list handle (107017 for anything else).
pub(crate) fn get_list(h: usize) -> R<Arc<LabelList>> {
    lock(&REG).lists.get(&h).cloned().ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a live label list"),
    })
}

/// Fails with 507031 unless the label belongs to context `ctx`.
pub(crate) fn check_context(l: &Label, ctx: usize) -> R {
    if l.ctx != ctx {
        return fail(
            RT_LABEL_CONTEXT,
            format!(
                "label {:#x} belongs to context {:#x}, not to the current context {ctx:#x}",
                l.handle, l.ctx
            ),
        );
    }
    Ok(())
}

/// `aclrtDestroyLabel`.
pub(crate) fn destroy(h: usize, ctx: usize) -> R {
    let l = get(h)?;
    check_context(&l, ctx)?;
    lock(&REG).labels.remove(&h);
    Ok(())
}

/// `aclrtCreateLabelList`: every handle must be a live label (107017).
pub(crate) fn create_list(labels: Vec<usize>, ctx: usize) -> R<usize> {
    let mut r = lock(&REG);
    let mut held = Vec::with_capacity(labels.len());
    for h in &labels {
        match r.labels.get(h) {
            Some(l) => held.push(Arc::clone(l)),
            None => {
                return fail(
                    RT_INVALID_HANDLE,
                    format!("labels[] holds {h:#x}, which is not a live label"),
                );
            }
        }
    }
    for l in &held {
        l.lists.fetch_add(1, Ordering::AcqRel);
    }
    let h = crate::state::new_handle();
    r.lists.insert(
        h,
        Arc::new(LabelList {
            handle: h,
            ctx,
            labels,
        }),
    );
    Ok(h)
}

/// `aclrtDestroyLabelList`.
pub(crate) fn destroy_list(h: usize) -> R {
    let mut r = lock(&REG);
    let Some(list) = r.lists.remove(&h) else {
        return fail(
            RT_INVALID_HANDLE,
            format!("{h:#x} is not a live label list"),
        );
    };
    for l in &list.labels {
        if let Some(l) = r.labels.get(l) {
            l.lists.fetch_sub(1, Ordering::AcqRel);
        }
    }
    Ok(())
}

/// `aclrtSetLabel`'s last checks: a label is set once (507000), and only after a label list
/// holds it (507000: the list gives the label its place on the device).
pub(crate) fn set(l: &Label, model: usize, stream: usize) -> R {
    let mut set = lock(&l.set);
    if let Some((m, s)) = *set {
        return fail(
            RT_INTERNAL_ERROR,
            format!(
                "label {:#x} is already set (on stream {s:#x} of model {m:#x}); a label marks \
                 one position",
                l.handle
            ),
        );
    }
    if l.lists.load(Ordering::Acquire) == 0 {
        return fail(
            RT_INTERNAL_ERROR,
            format!(
                "label {:#x} is in no label list (aclrtCreateLabelList first: the list gives \
                 the label its place on the device)",
                l.handle
            ),
        );
    }
    *set = Some((model, stream));
    Ok(())
}

/// Forgets where labels were set on a stream unbound from `model`.
pub(crate) fn forget_stream(model: usize, stream: usize) {
    for l in lock(&REG).labels.values() {
        let mut s = lock(&l.set);
        if *s == Some((model, stream)) {
            *s = None;
        }
    }
}

/// Forgets where labels were set in a destroyed model.
pub(crate) fn forget_model(model: usize) {
    for l in lock(&REG).labels.values() {
        let mut s = lock(&l.set);
        if s.is_some_and(|(m, _)| m == model) {
            *s = None;
        }
    }
}
