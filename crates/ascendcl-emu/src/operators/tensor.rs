//! The operator library's objects, each behind a handle of the hub: tensors (a view — shape,
//! strides in elements, offset — over device memory, and its storage shape), scalars (a copy of a
//! value of a data type) and executors (an operator's plan, run once by its launch).

use super::elementwise::Plan;
use crate::base::hub::{self, Kind, Resource};
use ascendcl_sys::*;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The most dimensions a tensor may have.
pub(crate) const MAX_DIMS: usize = 8;

/// A tensor: a strided view of device memory.
#[derive(Debug, Clone)]
pub(crate) struct Tensor {
    pub shape: Vec<i64>,
    /// In elements.
    pub strides: Vec<i64>,
    /// In elements.
    pub offset: i64,
    pub dtype: aclDataType,
    /// The storage shape the view lies in.
    pub storage: Vec<i64>,
    pub data: usize,
}

/// A scalar: its type and its value, widened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scalar {
    pub dtype: aclDataType,
    pub value: super::elementwise::Num,
}

/// An executor: the plan of one launch.
#[derive(Debug)]
pub(crate) struct Executor {
    pub plan: Plan,
    /// Launched already (an executor runs once).
    pub used: AtomicBool,
}

/// What a handle of the library names.
#[derive(Debug)]
pub(crate) enum Object {
    Tensor(Tensor),
    Scalar(Scalar),
    Executor(Executor),
}

/// An object with its handle.
#[derive(Debug)]
pub(crate) struct Entry {
    handle: usize,
    pub object: Object,
}

impl Resource for Entry {
    const KIND: Kind = Kind::Operator;

    fn handle(&self) -> usize {
        self.handle
    }
}

/// Registers `object`; its handle.
pub(crate) fn insert(object: Object) -> usize {
    let handle = hub::new_handle();
    hub::registry::<Entry>().insert(Arc::new(Entry { handle, object }));
    handle
}

/// The object of `h`.
pub(crate) fn get(h: usize) -> Option<Arc<Entry>> {
    hub::registry::<Entry>().get(h)
}

/// Removes the object of `h` when `keep` accepts it; whether it did.
pub(crate) fn remove_if(h: usize, keep: impl FnOnce(&Object) -> bool) -> bool {
    match get(h) {
        Some(e) if keep(&e.object) => hub::registry::<Entry>().remove(h).is_some(),
        _ => false,
    }
}

/// The tensor of `h`.
pub(crate) fn tensor(h: usize) -> Option<Tensor> {
    get(h).and_then(|e| match &e.object {
        Object::Tensor(t) => Some(t.clone()),
        _ => None,
    })
}

/// The scalar of `h`.
pub(crate) fn scalar(h: usize) -> Option<Scalar> {
    get(h).and_then(|e| match &e.object {
        Object::Scalar(s) => Some(*s),
        _ => None,
    })
}
