//! Model runtime instances (`aclmdlRI`): work recorded once and executed many times, by
//! capturing a stream ([`Model::capture`]) or by building on bound persistent streams
//! ([`Model::build`]), with labels, task groups and their updates.
//!
//! # Why a model owns its memory
//!
//! A recorded task keeps the raw addresses it was given and uses them at every later execution,
//! long after the call that recorded it returned. No borrow can last that long, so a [`Model`]
//! **owns** what its tasks touch: buffers are moved into it ([`Model::adopt`]) and named by
//! typed [`Slot`]s, which the recording operations take instead of references. While the model
//! holds an instance, a buffer cannot be taken back, freed or replaced; its contents are read
//! and written through the model between executions ([`Model::get`], [`Model::host_mut`],
//! [`Model::copy_from_host`]). An execution borrows the model exclusively until it has ended —
//! [`Scope::execute`] for the whole scope (which waits for its stream), [`Model::run`] for the
//! call — so the host never touches the memory while the device may. Streams that record into
//! a model must be the only handle on their stream, so that nobody else's work (with memory
//! the model does not own) is recorded with it; bound streams are moved into the model.
//! `docs/soundness.md` gives the whole argument.
//!
//! ```
//! use ascendcl::{CaptureMode, DeviceBuffer, HostBuffer, MallocPolicy, Model, ReduceKind};
//! # let rt = ascendcl::Runtime::new()?;
//! let dev = rt.device(0)?;
//! let mut stream = dev.create_stream()?;
//! let mut model = Model::new(&dev);
//! let input = model.adopt(HostBuffer::from_slice(&dev, &[1.0f32, 2.0, 3.0])?);
//! let x = model.adopt(DeviceBuffer::<f32>::zeroed(&dev, 3, MallocPolicy::HugeFirst)?);
//! let y = model.adopt(DeviceBuffer::<f32>::zeroed(&dev, 3, MallocPolicy::HugeFirst)?);
//! // Record y = x + x after copying the input in; nothing runs yet.
//! model.capture(&mut stream, CaptureMode::Global, |c| {
//!     c.copy(x, input)?;
//!     c.copy(y, x)?;
//!     c.reduce(y, x, ReduceKind::Sum)
//! })?;
//! for round in 1..=3 {
//!     model.host_mut(input)?.fill(round as f32);
//!     stream.scope(|s| s.execute(&mut model))?;
//!     assert_eq!(model.get(y)?.to_vec()?, vec![2.0 * round as f32; 3]);
//! }
//! # Ok::<(), ascendcl::Error>(())
//! ```

mod build;
mod capture;
mod label;
mod ops;

pub use build::{BoundStream, Builder, Condition, StreamRole, SwitchValue};
pub use capture::{CaptureMode, CaptureStatus, Recorder, TaskGroup};
pub use label::{Label, LabelList};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::{DeviceBuffer, DeviceRepr, HostBuffer};
use crate::raw;
use crate::scope::Scope;
use crate::stream::Stream;
use crate::{CopySource, RawRegion};
use ascendcl_sys as sys;
use std::any::Any;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

mod sealed {
    pub trait Sealed {}
}

/// Memory a model can own and its tasks can name: [`DeviceBuffer`] and (pinned) [`HostBuffer`].
/// Sealed: both keep their memory at one address for as long as they live, whatever moves the
/// handle.
pub trait Resident: sealed::Sealed + Any + Send + Sync {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory.
    #[doc(hidden)]
    fn resident_region(&self) -> RawRegion<Self::Elem>;
}

impl<T: DeviceRepr> sealed::Sealed for DeviceBuffer<T> {}
impl<T: DeviceRepr> Resident for DeviceBuffer<T> {
    type Elem = T;
    fn resident_region(&self) -> RawRegion<T> {
        self.source_region()
    }
}
impl<T: DeviceRepr> sealed::Sealed for HostBuffer<T> {}
impl<T: DeviceRepr> Resident for HostBuffer<T> {
    type Elem = T;
    fn resident_region(&self) -> RawRegion<T> {
        self.source_region()
    }
}

/// The name of a buffer a [`Model`] owns: what recording operations take instead of a
/// reference. Copyable; valid for the model that made it only (an error elsewhere).
pub struct Slot<B> {
    model: u64,
    index: usize,
    _b: PhantomData<fn() -> B>,
}

impl<B> Clone for Slot<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Slot<B> {}

impl<B> std::fmt::Debug for Slot<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("model", &self.model)
            .field("index", &self.index)
            .finish()
    }
}

/// How a model's instance was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// By stream capture ([`Model::capture`]).
    Captured,
    /// By binding persistent streams ([`Model::build`]).
    Built,
}

/// What an instance keeps alive besides the model's buffers: the events, labels and label
/// lists its tasks name, and (built models) the bound streams.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub events: Vec<Event>,
    pub labels: Vec<Label>,
    pub lists: Vec<LabelList>,
    pub streams: Vec<Stream>,
}

/// A runtime instance and what it keeps alive.
#[derive(Debug)]
struct Instance {
    raw: sys::aclmdlRI,
    kind: ModelKind,
    kept: Kept,
}

/// The buffers of a model, which recording operations look up.
pub(crate) struct Parts {
    id: u64,
    device: Device,
    buffers: Vec<Option<Box<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("id", &self.id)
            .field("device", &self.device.id())
            .field("buffers", &self.buffers.len())
            .finish()
    }
}

impl Parts {
    /// The buffer a slot names.
    pub(crate) fn get<B: Resident>(&self, api: &'static str, slot: Slot<B>) -> Result<&B> {
        if slot.model != self.id {
            return Err(Error::argument(
                api,
                "the slot names a buffer of another model",
            ));
        }
        self.buffers
            .get(slot.index)
            .and_then(|b| b.as_ref())
            .and_then(|b| b.downcast_ref::<B>())
            .ok_or_else(|| Error::argument(api, "the slot's buffer was taken out of the model"))
    }

    fn get_mut<B: Resident>(&mut self, api: &'static str, slot: Slot<B>) -> Result<&mut B> {
        if slot.model != self.id {
            return Err(Error::argument(
                api,
                "the slot names a buffer of another model",
            ));
        }
        self.buffers
            .get_mut(slot.index)
            .and_then(|b| b.as_mut())
            .and_then(|b| b.downcast_mut::<B>())
            .ok_or_else(|| Error::argument(api, "the slot's buffer was taken out of the model"))
    }

    pub(crate) fn device(&self) -> &Device {
        &self.device
    }
}

/// Work recorded once and executed many times: a model runtime instance (`aclmdlRI`) and the
/// buffers its tasks use.
///
/// A `Model` starts empty: adopt the buffers ([`Model::adopt`]), then make its instance by
/// capturing a stream ([`Model::capture`]) or by building on bound persistent streams
/// ([`Model::build`]); execute it with [`Scope::execute`] (or [`Model::run`] for built models),
/// as often as needed. The instance is destroyed when the model is dropped or
/// [`cleared`](Model::clear); the buffers go with the model, or come back with [`Model::take`]
/// once no instance uses them.
///
/// | operation | C function |
/// |---|---|
/// | [`Model::capture`] | `aclmdlRICaptureBegin`, `aclmdlRICaptureEnd` |
/// | [`Recorder::task_group`] | `aclmdlRICaptureTaskGrpBegin`, `aclmdlRICaptureTaskGrpEnd` |
/// | [`Model::update`] | `aclmdlRICaptureTaskUpdateBegin`, `aclmdlRICaptureTaskUpdateEnd` |
/// | [`Model::build`] | `aclmdlRIBuildBegin`, `aclmdlRIBindStream`, `aclmdlRIEndTask`, `aclmdlRIBuildEnd` |
/// | [`Scope::execute`] | `aclmdlRIExecuteAsync` |
/// | [`Model::run`], [`Model::run_timeout`] | `aclmdlRIExecute`, `aclmdlRIAbort` |
/// | drop, [`Model::clear`] | `aclmdlRIUnbindStream`, `aclmdlRIDestroy` |
#[derive(Debug)]
pub struct Model {
    parts: Parts,
    instance: Option<Instance>,
    /// Moves with every new instance: task groups and bound streams of an older one are refused.
    generation: u64,
}

// SAFETY: the instance handle is a plain value the runtime accepts from any thread (with the
// model's context made current first); it is used only through `&mut Model` or by an execution
// that borrows the model exclusively. The buffers and kept handles are `Send + Sync`.
unsafe impl Send for Instance {}
// SAFETY: as above; `&Model` gives no access to the instance handle.
unsafe impl Sync for Instance {}

static NEXT_MODEL: AtomicU64 = AtomicU64::new(1);

impl Model {
    /// An empty model on `device`: no buffers, no instance.
    pub fn new(device: &Device) -> Model {
        Model {
            parts: Parts {
                id: NEXT_MODEL.fetch_add(1, Ordering::Relaxed),
                device: device.clone(),
                buffers: Vec::new(),
            },
            instance: None,
            generation: 0,
        }
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.parts.device
    }

    /// Moves `buf` into the model; the slot names it to recording operations and accessors.
    pub fn adopt<B: Resident>(&mut self, buf: B) -> Slot<B> {
        self.parts.buffers.push(Some(Box::new(buf)));
        Slot {
            model: self.parts.id,
            index: self.parts.buffers.len() - 1,
            _b: PhantomData,
        }
    }

    /// The buffer a slot names, for reading (a copy to the host, a scope's source). Nothing
    /// executes the model while it is borrowed.
    pub fn get<B: Resident>(&self, slot: Slot<B>) -> Result<&B> {
        self.parts.get("Model::get", slot)
    }

    /// The contents of a pinned host buffer, for writing between executions (the buffer itself
    /// stays where the recorded tasks expect it).
    pub fn host_mut<T: DeviceRepr>(&mut self, slot: Slot<HostBuffer<T>>) -> Result<&mut [T]> {
        Ok(&mut self.parts.get_mut("Model::host_mut", slot)?[..])
    }

    /// Writes the contents of a device buffer from the host (`aclrtMemcpy`).
    pub fn copy_from_host<T: DeviceRepr>(
        &mut self,
        slot: Slot<DeviceBuffer<T>>,
        src: &[T],
    ) -> Result<()> {
        self.parts
            .get_mut("Model::copy_from_host", slot)?
            .copy_from_host(src)
    }

    /// Takes a buffer back out of the model; refused while an instance (whose tasks may name
    /// it) exists: [`Model::clear`] first.
    pub fn take<B: Resident>(&mut self, slot: Slot<B>) -> Result<B> {
        if self.instance.is_some() {
            return Err(Error::argument(
                "Model::take",
                "the model's instance may use the buffer; clear the model first",
            ));
        }
        self.parts.get::<B>("Model::take", slot)?;
        let b = self.parts.buffers[slot.index].take().expect("checked");
        Ok(*b.downcast::<B>().expect("checked"))
    }

    /// How the instance was made; `None` while the model has none.
    pub fn kind(&self) -> Option<ModelKind> {
        self.instance.as_ref().map(|i| i.kind)
    }

    /// The instance's raw handle (NULL while the model has none), for FFI that only reads it.
    pub fn as_raw(&self) -> sys::aclmdlRI {
        self.instance
            .as_ref()
            .map_or(std::ptr::null_mut(), |i| i.raw)
    }

    /// Destroys the instance (`aclmdlRIUnbindStream` for each bound stream, `aclmdlRIDestroy`),
    /// keeping the buffers; the model can then record a new instance or give its buffers back.
    /// The bound streams of a built model are released with it.
    pub fn clear(&mut self) -> Result<()> {
        let Some(inst) = self.instance.take() else {
            return Ok(());
        };
        let r = destroy(&self.parts.device, &inst);
        if r.is_err() {
            // The instance may still exist: keep it (and what it uses) for a later attempt.
            self.instance = Some(inst);
        }
        r
    }

    /// Refuses to record a second instance over the first.
    fn vacant(&self, api: &'static str) -> Result<()> {
        if self.instance.is_some() {
            return Err(Error::argument(
                api,
                "the model already holds an instance; clear it first",
            ));
        }
        Ok(())
    }

    fn install(&mut self, raw: sys::aclmdlRI, kind: ModelKind, kept: Kept) {
        self.generation += 1;
        self.instance = Some(Instance { raw, kind, kept });
    }

    fn instance(&self, api: &'static str) -> Result<&Instance> {
        self.instance.as_ref().ok_or_else(|| {
            Error::argument(
                api,
                "the model holds no instance (capture or build it first)",
            )
        })
    }

    /// Runs a built model and returns when it has ended (`aclmdlRIExecute`, no timeout).
    /// Captured models run on a stream only ([`Scope::execute`]).
    pub fn run(&mut self) -> Result<()> {
        let inst = self.instance("aclmdlRIExecute")?;
        self.parts.device.ensure_current()?;
        // SAFETY: the instance is live and owned by this model, which is borrowed exclusively
        // for the call: nothing touches its buffers until the execution has ended.
        unsafe { raw::aclmdlRIExecute(inst.raw, -1) }
    }

    /// As [`Model::run`], giving up after `timeout` (rounded up to milliseconds). When the
    /// runtime reports a timeout the execution may still be going on: it is stopped
    /// (`aclmdlRIAbort`) before this returns the error, so the model's buffers are never handed
    /// back while the device uses them; if even the abort fails, nothing proves the execution
    /// has stopped and the process is aborted (with a message on stderr) rather than risk it.
    pub fn run_timeout(&mut self, timeout: Duration) -> Result<()> {
        let ms = crate::stream::timeout_ms(Some(timeout)).max(1);
        let inst = self.instance("aclmdlRIExecute")?;
        self.parts.device.ensure_current()?;
        // SAFETY: as in `run`.
        let r = unsafe { raw::aclmdlRIExecute(inst.raw, ms) };
        let Err(e) = r else {
            return Ok(());
        };
        let timed_out = matches!(
            e.code(),
            Some(sys::AclError::STREAM_SYNC_TIMEOUT)
                | Some(sys::AclError::TASK_TIMEOUT)
                | Some(sys::AclError::WAIT_TIMEOUT)
                | Some(sys::AclError::TIMEOUT)
                | Some(sys::AclError::MODEL_EXECUTE)
        );
        if timed_out {
            // SAFETY: the instance is live; aborting only stops its executions.
            if let Err(a) = unsafe { raw::aclmdlRIAbort(inst.raw) } {
                eprintln!(
                    "ascendcl: Model::run_timeout: the execution timed out ({e}) and could not \
                     be stopped ({a}); aborting rather than handing back memory the device may \
                     still use"
                );
                std::process::abort();
            }
        }
        Err(e)
    }
}

/// Unbinds and destroys an instance.
fn destroy(device: &Device, inst: &Instance) -> Result<()> {
    device.ensure_current()?;
    for s in &inst.kept.streams {
        // SAFETY: both handles are live; the stream was bound to this instance.
        unsafe { raw::aclmdlRIUnbindStream(inst.raw, s.as_raw()) }?;
    }
    // SAFETY: the instance is live and owned by the model; no execution runs (executions borrow
    // the model exclusively until they have ended).
    unsafe { raw::aclmdlRIDestroy(inst.raw) }
}

impl Drop for Model {
    fn drop(&mut self) {
        if let Some(inst) = self.instance.take() {
            crate::drop_errors::report(destroy(&self.parts.device, &inst));
        }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues one execution of `model` on the scope's stream (`aclmdlRIExecuteAsync`). The
    /// model is borrowed exclusively until the scope ends, when the stream — and so the
    /// execution — is done.
    pub fn execute(&self, model: &'scope mut Model) -> Result<()> {
        const API: &str = "aclmdlRIExecuteAsync";
        let inst = model.instance(API)?;
        if model.parts.device.id() != self.device_id() {
            return Err(Error::argument(
                API,
                "the model belongs to another device than the stream",
            ));
        }
        self.stream().make_current()?;
        // SAFETY: the instance is live; the model, and with it every buffer its tasks name, is
        // borrowed exclusively for 'scope, and the scope waits for the stream before 'scope
        // ends.
        unsafe { raw::aclmdlRIExecuteAsync(inst.raw, self.as_raw()) }
    }
}
