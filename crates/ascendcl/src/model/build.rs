//! Built models: persistent streams bound to a model record the tasks issued on them
//! (`aclmdlRIBuildBegin`, `aclmdlRIBindStream`, `aclmdlRIEndTask`, `aclmdlRIBuildEnd`), with
//! in-model control flow: stream activation (`aclrtActiveStream`), conditional stream switches
//! (`aclrtSwitchStream`) and label switches (`aclrtSetLabel`, `aclrtSwitchLabelByIndex`).

use super::label::{Label, LabelList};
use super::ops::Target;
use super::{Kept, Model, ModelKind, Parts, Resident, Slot};
use crate::builtin::{ReduceElem, ReduceKind};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::{DeviceBuffer, DeviceRepr};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::stream::{Stream, StreamFlags};
use ascendcl_sys as sys;
use std::cell::RefCell;

/// `ACL_MODEL_STREAM_FLAG_HEAD`.
const FLAG_HEAD: u32 = 0;
/// `ACL_MODEL_STREAM_FLAG_DEFAULT`.
const FLAG_DEFAULT: u32 = 0x7FFF_FFFF;

/// When a bound stream runs in an execution (`aclmdlRIBindStream`'s flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamRole {
    /// `ACL_MODEL_STREAM_FLAG_HEAD`: from the start of every execution.
    Head,
    /// `ACL_MODEL_STREAM_FLAG_DEFAULT`: only when another stream of the model activates it
    /// ([`Builder::activate`], [`Builder::switch_stream`]) or a label switch continues on it.
    OnActivation,
}

raw_enum! {
    /// The comparison of [`Builder::switch_stream`] (`aclrtCondition`): `left OP right`.
    pub enum Condition: sys::aclrtCondition {
        /// `ACL_RT_EQUAL`
        Equal = sys::ACL_RT_EQUAL,
        /// `ACL_RT_NOT_EQUAL`
        NotEqual = sys::ACL_RT_NOT_EQUAL,
        /// `ACL_RT_GREATER`
        Greater = sys::ACL_RT_GREATER,
        /// `ACL_RT_GREATER_OR_EQUAL`
        GreaterOrEqual = sys::ACL_RT_GREATER_OR_EQUAL,
        /// `ACL_RT_LESS`
        Less = sys::ACL_RT_LESS,
        /// `ACL_RT_LESS_OR_EQUAL`
        LessOrEqual = sys::ACL_RT_LESS_OR_EQUAL,
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// A value type [`Builder::switch_stream`] compares: `i32` or `i64`. Sealed.
pub trait SwitchValue: DeviceRepr + sealed::Sealed {
    /// The runtime's name for it (`aclrtCompareDataType`).
    const DATA_TYPE: sys::aclrtCompareDataType;
}
impl SwitchValue for i32 {
    const DATA_TYPE: sys::aclrtCompareDataType = sys::ACL_RT_SWITCH_INT32;
}
impl SwitchValue for i64 {
    const DATA_TYPE: sys::aclrtCompareDataType = sys::ACL_RT_SWITCH_INT64;
}

/// A stream bound to the model being built ([`Builder::bind`]); valid in that build only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundStream {
    model: u64,
    generation: u64,
    index: usize,
}

/// Records the tasks of a built model: the handle a [`Model::build`] closure works through.
/// Every task goes to one of the bound streams and names buffers of the model by [`Slot`].
pub struct Builder<'a> {
    parts: &'a Parts,
    raw: sys::aclmdlRI,
    generation: u64,
    kept: RefCell<Kept>,
}

impl std::fmt::Debug for Builder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("streams", &self.kept.borrow().streams.len())
            .finish_non_exhaustive()
    }
}

impl Builder<'_> {
    /// Binds `stream` to the model (`aclmdlRIBindStream`); the model keeps it until its
    /// instance goes. It must be created with [`StreamFlags::PERSISTENT`] on the model's device
    /// and be the only handle on its stream ([`Error::StreamNotExclusive`]: work enqueued
    /// through another handle would be recorded into the model). On failure the handle is
    /// dropped.
    pub fn bind(&self, stream: Stream, role: StreamRole) -> Result<BoundStream> {
        const API: &str = "aclmdlRIBindStream";
        if stream.device_id() != self.parts.device().id() {
            return Err(Error::argument(
                API,
                "the stream belongs to another device than the model",
            ));
        }
        if !stream.flags()?.contains(StreamFlags::PERSISTENT) {
            return Err(Error::argument(
                API,
                "only persistent streams bind to a model (StreamFlags::PERSISTENT)",
            ));
        }
        match stream.other_handles() {
            0 => {}
            others => return Err(Error::StreamNotExclusive { api: API, others }),
        }
        let flag = match role {
            StreamRole::Head => FLAG_HEAD,
            StreamRole::OnActivation => FLAG_DEFAULT,
        };
        stream.make_current()?;
        // SAFETY: both handles are live; the model keeps the stream from now on.
        unsafe { raw::aclmdlRIBindStream(self.raw, stream.as_raw(), flag) }?;
        let mut kept = self.kept.borrow_mut();
        kept.streams.push(stream);
        Ok(BoundStream {
            model: self.parts.id,
            generation: self.generation,
            index: kept.streams.len() - 1,
        })
    }

    /// A handle on a bound stream (the model keeps the stream; the clone goes with the call).
    fn stream(&self, on: BoundStream) -> Result<Stream> {
        if on.model != self.parts.id || on.generation != self.generation {
            return Err(Error::argument(
                "aclmdlRIBindStream",
                "the bound stream belongs to another model or build",
            ));
        }
        Ok(self.kept.borrow().streams[on.index].clone())
    }

    fn with<R>(&self, on: BoundStream, f: impl FnOnce(&Target<'_>) -> Result<R>) -> Result<R> {
        let stream = self.stream(on)?;
        f(&Target {
            parts: self.parts,
            stream: &stream,
            kept: &self.kept,
        })
    }

    /// Records a copy between two buffers of the model on `on` (`aclrtMemcpyAsync`).
    pub fn copy<D, S>(&self, on: BoundStream, dst: Slot<D>, src: Slot<S>) -> Result<()>
    where
        D: Resident,
        S: Resident<Elem = D::Elem>,
    {
        self.with(on, |t| t.copy(dst, src))
    }

    /// Records setting every byte of a device buffer on `on` (`aclrtMemsetAsync`).
    pub fn fill_bytes<T: DeviceRepr>(
        &self,
        on: BoundStream,
        dst: Slot<DeviceBuffer<T>>,
        value: u8,
    ) -> Result<()> {
        self.with(on, |t| t.fill_bytes(dst, value))
    }

    /// Records `dst[i] = kind(dst[i], src[i])` on `on` (`aclrtReduceAsync`).
    pub fn reduce<T: ReduceElem>(
        &self,
        on: BoundStream,
        dst: Slot<DeviceBuffer<T>>,
        src: Slot<DeviceBuffer<T>>,
        kind: ReduceKind,
    ) -> Result<()> {
        self.with(on, |t| t.reduce(dst, src, kind))
    }

    /// Records a write of one 64-bit word on `on` (`aclrtValueWrite`).
    pub fn write_value(
        &self,
        on: BoundStream,
        dst: Slot<DeviceBuffer<u64>>,
        value: u64,
    ) -> Result<()> {
        self.with(on, |t| t.write_value(dst, value))
    }

    /// Records a record of `event` on `on` (`aclrtRecordEvent`).
    pub fn record_event(&self, on: BoundStream, event: &Event) -> Result<()> {
        self.with(on, |t| t.record_event(event))
    }

    /// Records a wait for `event` on `on` (`aclrtStreamWaitEvent`): inside a model the wait
    /// looks at the event's device flag, so reset it after the wait ([`Builder::reset_event`]).
    pub fn wait_event(&self, on: BoundStream, event: &Event) -> Result<()> {
        self.with(on, |t| t.wait_event(event))
    }

    /// Records a reset of `event` on `on` (`aclrtResetEvent`).
    pub fn reset_event(&self, on: BoundStream, event: &Event) -> Result<()> {
        self.with(on, |t| t.reset_event(event))
    }

    /// Records, on `on`, the start of `target` (`aclrtActiveStream`), which then runs in
    /// parallel with `on`.
    pub fn activate(&self, on: BoundStream, target: BoundStream) -> Result<()> {
        let (s, t) = (self.stream(on)?, self.stream(target)?);
        s.make_current()?;
        // SAFETY: both streams are live and bound to this model.
        unsafe { raw::aclrtActiveStream(t.as_raw(), s.as_raw()) }
    }

    /// Records, on `on`, a comparison of two device values of the model when it runs
    /// (`aclrtSwitchStream`): when `left cond right` holds, `target` starts and `on` stops;
    /// otherwise `on` goes on.
    pub fn switch_stream<T: SwitchValue>(
        &self,
        on: BoundStream,
        left: Slot<DeviceBuffer<T>>,
        cond: Condition,
        right: Slot<DeviceBuffer<T>>,
        target: BoundStream,
    ) -> Result<()> {
        const API: &str = "aclrtSwitchStream";
        let (s, t) = (self.stream(on)?, self.stream(target)?);
        let l = self.parts.get(API, left)?.resident_region();
        let r = self.parts.get(API, right)?.resident_region();
        if l.is_empty() || r.is_empty() {
            return Err(Error::argument(
                API,
                "the values must be buffers of at least one element",
            ));
        }
        s.make_current()?;
        // SAFETY: the streams are live and bound to this model; both values are device memory
        // the model owns for as long as its instance exists.
        unsafe {
            raw::aclrtSwitchStream(
                l.ptr().cast(),
                cond.into(),
                r.ptr().cast(),
                T::DATA_TYPE,
                t.as_raw(),
                std::ptr::null_mut(),
                s.as_raw(),
            )
        }
    }

    /// Marks, on `on`, the position of the next task as `label` (`aclrtSetLabel`); the model
    /// keeps the label alive. A label is set once, after a [`LabelList`] holds it.
    pub fn set_label(&self, on: BoundStream, label: &Label) -> Result<()> {
        let s = self.stream(on)?;
        s.make_current()?;
        // SAFETY: both handles are live.
        unsafe { raw::aclrtSetLabel(label.as_raw(), s.as_raw()) }?;
        self.kept.borrow_mut().labels.push(label.clone());
        Ok(())
    }

    /// Records, on `on`, a switch that reads the `u32` in `index` (first element) when it runs
    /// and continues at that label of `list` (the last one when the index is past the list);
    /// the label's stream goes on from there and `on` stops (`aclrtSwitchLabelByIndex`). The
    /// model keeps the list alive.
    pub fn switch_label(
        &self,
        on: BoundStream,
        index: Slot<DeviceBuffer<u32>>,
        list: &LabelList,
    ) -> Result<()> {
        const API: &str = "aclrtSwitchLabelByIndex";
        let s = self.stream(on)?;
        let i = self.parts.get(API, index)?.resident_region();
        if i.is_empty() {
            return Err(Error::argument(API, "the index buffer is empty"));
        }
        let count = u32::try_from(list.len())
            .map_err(|_| Error::argument(API, "the label list is too long"))?;
        s.make_current()?;
        // SAFETY: the stream and list are live; the index is device memory the model owns for
        // as long as its instance exists, which also keeps the list.
        unsafe { raw::aclrtSwitchLabelByIndex(i.ptr().cast(), count, list.as_raw(), s.as_raw()) }?;
        self.kept.borrow_mut().lists.push(list.clone());
        Ok(())
    }

    /// Marks the end of `on`'s part of the model (`aclmdlRIEndTask`); [`Model::build`] ends
    /// every bound stream this way when the closure returns, so this is needed only for an
    /// end before later tasks (a branch that stops there).
    pub fn end(&self, on: BoundStream) -> Result<()> {
        let s = self.stream(on)?;
        s.make_current()?;
        // SAFETY: both handles are live.
        unsafe { raw::aclmdlRIEndTask(self.raw, s.as_raw()) }
    }
}

/// Unbinds and destroys an instance whose build failed.
fn discard(raw: sys::aclmdlRI, kept: &Kept) {
    for s in &kept.streams {
        // SAFETY: both handles are live.
        let _ = unsafe { raw::aclmdlRIUnbindStream(raw, s.as_raw()) };
    }
    // SAFETY: the instance is used by nobody.
    crate::drop_errors::report(unsafe { raw::aclmdlRIDestroy(raw) });
}

/// Discards a build if its closure unwinds.
struct DiscardBuild<'a> {
    raw: sys::aclmdlRI,
    kept: &'a RefCell<Kept>,
    armed: bool,
}

impl Drop for DiscardBuild<'_> {
    fn drop(&mut self) {
        if self.armed {
            discard(self.raw, &self.kept.borrow());
        }
    }
}

impl Model {
    /// Builds the model's instance (`aclmdlRIBuildBegin`): `f` binds persistent streams
    /// ([`Builder::bind`]) and records tasks on them; then every bound stream is ended
    /// (`aclmdlRIEndTask`) and the build closed (`aclmdlRIBuildEnd`). Nothing runs now; each
    /// execution ([`Model::run`], [`Scope::execute`](crate::Scope::execute)) runs the tasks.
    /// When `f` fails (or panics) the instance is discarded, and with it the streams it bound.
    pub fn build<R>(&mut self, f: impl FnOnce(&Builder<'_>) -> Result<R>) -> Result<R> {
        const API: &str = "aclmdlRIBuildBegin";
        self.vacant(API)?;
        self.parts.device().ensure_current()?;
        let mut raw: sys::aclmdlRI = std::ptr::null_mut();
        // SAFETY: one out-pointer; flag 0 (reserved).
        unsafe { raw::aclmdlRIBuildBegin(&mut raw, 0) }?;
        let builder = Builder {
            parts: &self.parts,
            raw,
            generation: self.generation + 1,
            kept: RefCell::new(Kept::default()),
        };
        let mut guard = DiscardBuild {
            raw,
            kept: &builder.kept,
            armed: true,
        };
        let body = f(&builder).and_then(|v| {
            for s in &builder.kept.borrow().streams {
                s.make_current()?;
                // SAFETY: both handles are live; the stream is bound to this instance.
                unsafe { raw::aclmdlRIEndTask(raw, s.as_raw()) }?;
            }
            self.parts.device().ensure_current()?;
            // SAFETY: the instance is live; reserve NULL.
            unsafe { raw::aclmdlRIBuildEnd(raw, std::ptr::null_mut()) }?;
            Ok(v)
        });
        guard.armed = false;
        drop(guard);
        match body {
            Ok(v) => {
                let kept = builder.kept.into_inner();
                self.install(raw, ModelKind::Built, kept);
                Ok(v)
            }
            Err(e) => {
                discard(raw, &builder.kept.borrow());
                Err(e)
            }
        }
    }
}
