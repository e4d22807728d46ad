//! Labels (`aclrtCreateLabel`) and label lists (`aclrtCreateLabelList`): positions in the
//! streams of a built model that `aclrtSwitchLabelByIndex` continues at.

use crate::base::error::*;
use crate::base::hub::{self, Kind, Resource, registry};
use crate::base::lock::{Mutex, Rank};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    /// The labels themselves (each counts the lists that hold it).
    held: Vec<Arc<Label>>,
}

impl Resource for Label {
    const KIND: Kind = Kind::Label;

    fn handle(&self) -> usize {
        self.handle
    }
}

impl Resource for LabelList {
    const KIND: Kind = Kind::LabelList;

    fn handle(&self) -> usize {
        self.handle
    }
}

/// `aclrtCreateLabel` in context `ctx`.
pub(crate) fn create(ctx: usize) -> R<usize> {
    let l = registry::<Label>()
        .insert_within_total(MAX_LABELS, || {
            Arc::new(Label {
                handle: hub::new_handle(),
                ctx,
                set: Mutex::new(Rank::Label, None),
                lists: AtomicUsize::new(0),
            })
        })
        .map_err(|_| Fail {
            code: RT_RESOURCE_ALLOC_FAIL,
            msg: format!("the process already has {MAX_LABELS} labels"),
        })?;
    Ok(l.handle)
}

/// Resolves a label handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Label>> {
    registry::<Label>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("{h:#x} is not a live label"),
    })
}

/// Resolves a label list handle (107017 for anything else).
pub(crate) fn get_list(h: usize) -> R<Arc<LabelList>> {
    registry::<LabelList>().get(h).ok_or_else(|| Fail {
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
    registry::<Label>().remove(h);
    Ok(())
}

/// `aclrtCreateLabelList`: every handle must be a live label (107017).
pub(crate) fn create_list(labels: Vec<usize>, ctx: usize) -> R<usize> {
    let mut held = Vec::with_capacity(labels.len());
    for h in &labels {
        match registry::<Label>().get(*h) {
            Some(l) => held.push(l),
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
    let h = hub::new_handle();
    registry::<LabelList>().insert(Arc::new(LabelList {
        handle: h,
        ctx,
        labels,
        held,
    }));
    Ok(h)
}

/// `aclrtDestroyLabelList`.
pub(crate) fn destroy_list(h: usize) -> R {
    let Some(list) = registry::<LabelList>().remove(h) else {
        return fail(
            RT_INVALID_HANDLE,
            format!("{h:#x} is not a live label list"),
        );
    };
    for l in &list.held {
        l.lists.fetch_sub(1, Ordering::AcqRel);
    }
    Ok(())
}

/// `aclrtSetLabel`'s last checks: a label is set once (507000), and only after a label list
/// holds it (507000: the list gives the label its place on the device).
pub(crate) fn set(l: &Label, model: usize, stream: usize) -> R {
    let mut set = l.set.lock();
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
    for l in registry::<Label>().read().values() {
        let mut s = l.set.lock();
        if *s == Some((model, stream)) {
            *s = None;
        }
    }
}

/// Forgets where labels were set in a destroyed model.
pub(crate) fn forget_model(model: usize) {
    for l in registry::<Label>().read().values() {
        let mut s = l.set.lock();
        if s.is_some_and(|(m, _)| m == model) {
            *s = None;
        }
    }
}
