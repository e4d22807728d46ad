//! Labels (`aclrtCreateLabel`) and label lists (`aclrtCreateLabelList`): positions in the
//! streams of a built model that a label switch continues at.

use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use ascendcl_sys as sys;
use std::sync::Arc;

/// A label of a device's default context (`aclrtCreateLabel`; destroyed with
/// `aclrtDestroyLabel` when its last handle goes). Cheap to clone; a model that sets it keeps a
/// handle. Set it in a built model with [`Builder::set_label`](crate::Builder::set_label) after
/// a [`LabelList`] holds it.
#[derive(Debug, Clone)]
pub struct Label {
    inner: Arc<LabelInner>,
}

#[derive(Debug)]
struct LabelInner {
    raw: sys::aclrtLabel,
    device: Device,
}

/// A list of labels a label switch picks from (`aclrtCreateLabelList`; destroyed with
/// `aclrtDestroyLabelList` when its last handle goes). It holds its labels; a model whose
/// switch uses it keeps a handle.
#[derive(Debug, Clone)]
pub struct LabelList {
    inner: Arc<ListInner>,
}

#[derive(Debug)]
struct ListInner {
    raw: sys::aclrtLabelList,
    labels: Vec<Label>,
    device: Device,
}

// SAFETY: label handles are plain values the runtime accepts from any thread once the label's
// context is current (every call makes it so); they are never mutated while shared.
unsafe impl Send for LabelInner {}
// SAFETY: as above.
unsafe impl Sync for LabelInner {}
// SAFETY: as for labels.
unsafe impl Send for ListInner {}
// SAFETY: as above.
unsafe impl Sync for ListInner {}

impl Label {
    /// A new label of `device`'s default context.
    pub fn new(device: &Device) -> Result<Label> {
        device.ensure_current()?;
        let mut raw: sys::aclrtLabel = std::ptr::null_mut();
        // SAFETY: one out-pointer.
        unsafe { raw::aclrtCreateLabel(&mut raw) }?;
        Ok(Label {
            inner: Arc::new(LabelInner {
                raw,
                device: device.clone(),
            }),
        })
    }

    /// The raw handle, for FFI.
    pub fn as_raw(&self) -> sys::aclrtLabel {
        self.inner.raw
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }
}

impl Drop for LabelInner {
    fn drop(&mut self) {
        let (raw, device) = (Raw(self.raw), self.device.clone());
        deferred::release(move || {
            device.ensure_current()?;
            // SAFETY: the last handle is gone; released once.
            unsafe { raw::aclrtDestroyLabel(raw.get()) }
        });
    }
}

impl LabelList {
    /// A list of `labels`, in order (at least one, all of one device).
    pub fn new(labels: &[&Label]) -> Result<LabelList> {
        const API: &str = "aclrtCreateLabelList";
        let Some(first) = labels.first() else {
            return Err(Error::argument(
                API,
                "a label list holds at least one label",
            ));
        };
        let device = first.device().clone();
        if labels.iter().any(|l| l.device().id() != device.id()) {
            return Err(Error::argument(API, "the labels belong to several devices"));
        }
        let mut raws: Vec<sys::aclrtLabel> = labels.iter().map(|l| l.as_raw()).collect();
        device.ensure_current()?;
        let mut raw: sys::aclrtLabelList = std::ptr::null_mut();
        // SAFETY: `raws` holds `len` live labels; one out-pointer.
        unsafe { raw::aclrtCreateLabelList(raws.as_mut_ptr(), raws.len(), &mut raw) }?;
        Ok(LabelList {
            inner: Arc::new(ListInner {
                raw,
                labels: labels.iter().map(|l| (*l).clone()).collect(),
                device,
            }),
        })
    }

    /// The number of labels.
    pub fn len(&self) -> usize {
        self.inner.labels.len()
    }

    /// Whether it is empty (never: a list holds at least one label).
    pub fn is_empty(&self) -> bool {
        self.inner.labels.is_empty()
    }

    /// The labels, in order.
    pub fn labels(&self) -> &[Label] {
        &self.inner.labels
    }

    /// The raw handle, for FFI.
    pub fn as_raw(&self) -> sys::aclrtLabelList {
        self.inner.raw
    }
}

impl Drop for ListInner {
    fn drop(&mut self) {
        let (raw, device) = (Raw(self.raw), self.device.clone());
        deferred::release(move || {
            device.ensure_current()?;
            // SAFETY: the last handle is gone; released once (before its labels, which this
            // list holds until after this closure was handed over).
            unsafe { raw::aclrtDestroyLabelList(raw.get()) }
        });
    }
}
