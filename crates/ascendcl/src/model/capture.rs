//! Stream capture into a model (`aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`), task groups
//! (`aclmdlRICaptureTaskGrp*`) and their updates (`aclmdlRICaptureTaskUpdate*`).

use super::ops::Target;
use super::{Kept, Model, ModelKind, Parts, Resident, Slot};
use crate::builtin::{ReduceElem, ReduceKind};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::{DeviceBuffer, DeviceRepr};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::cell::{Cell, RefCell};

raw_enum! {
    /// Which other threads' calls a capture refuses (`aclmdlRICaptureMode`): the runtime
    /// forbids "unsafe" calls (synchronous copies and memsets, copies that fall back to
    /// synchronous) according to it.
    pub enum CaptureMode: sys::aclmdlRICaptureMode {
        /// `ACL_MODEL_RI_CAPTURE_MODE_GLOBAL`: unsafe calls are refused on every thread that has
        /// not relaxed its own mode.
        Global = sys::ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
        /// `ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL`: refused on the capturing thread only.
        ThreadLocal = sys::ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
        /// `ACL_MODEL_RI_CAPTURE_MODE_RELAXED`: not refused.
        Relaxed = sys::ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    }
}

raw_enum! {
    /// The capture state of a stream (`aclmdlRICaptureStatus`, [`Recorder::status`]).
    pub enum CaptureStatus: sys::aclmdlRICaptureStatus {
        /// `ACL_MODEL_RI_CAPTURE_STATUS_NONE`
        None = sys::ACL_MODEL_RI_CAPTURE_STATUS_NONE,
        /// `ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE`
        Active = sys::ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
        /// `ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED`
        Invalidated = sys::ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
    }
}

impl CaptureMode {
    /// Sets the calling thread's capture mode and returns the previous one
    /// (`aclmdlRICaptureThreadExchangeMode`): which "unsafe" calls (synchronous copies and
    /// memsets) the runtime lets this thread make while a capture is going on. Calling it again
    /// with the returned mode restores it.
    pub fn exchange_for_thread(mode: CaptureMode) -> Result<CaptureMode> {
        let mut m: sys::aclmdlRICaptureMode = mode.into();
        // SAFETY: one valid in/out pointer; the mode only changes which calls the runtime
        // refuses on this thread.
        unsafe { raw::aclmdlRICaptureThreadExchangeMode(&mut m) }?;
        CaptureMode::try_from(m)
    }
}

/// Records tasks into a model: the handle a [`Model::capture`] or [`Model::update`] closure
/// works through. Every operation names buffers of the model by [`Slot`].
pub struct Recorder<'a> {
    target: Target<'a>,
    /// Capture (task groups allowed) or update.
    capturing: bool,
    group_open: Cell<bool>,
    model: u64,
    generation: u64,
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("capturing", &self.capturing)
            .finish_non_exhaustive()
    }
}

/// An updatable part of a captured model ([`Recorder::task_group`]); [`Model::update`] replaces
/// its tasks.
#[derive(Debug)]
pub struct TaskGroup {
    raw: sys::aclrtTaskGrp,
    model: u64,
    generation: u64,
}

// SAFETY: the group handle is a plain value, used only by the model that made it (checked).
unsafe impl Send for TaskGroup {}
// SAFETY: as above; `&TaskGroup` gives no access to the handle.
unsafe impl Sync for TaskGroup {}

impl Recorder<'_> {
    /// Records a copy between two buffers of the model (`aclrtMemcpyAsync`): device or pinned
    /// host memory, equal lengths.
    pub fn copy<D, S>(&self, dst: Slot<D>, src: Slot<S>) -> Result<()>
    where
        D: Resident,
        S: Resident<Elem = D::Elem>,
    {
        self.target.copy(dst, src)
    }

    /// Records setting every byte of a device buffer of the model (`aclrtMemsetAsync`).
    pub fn fill_bytes<T: DeviceRepr>(&self, dst: Slot<DeviceBuffer<T>>, value: u8) -> Result<()> {
        self.target.fill_bytes(dst, value)
    }

    /// Records `dst[i] = kind(dst[i], src[i])` (`aclrtReduceAsync`).
    pub fn reduce<T: ReduceElem>(
        &self,
        dst: Slot<DeviceBuffer<T>>,
        src: Slot<DeviceBuffer<T>>,
        kind: ReduceKind,
    ) -> Result<()> {
        self.target.reduce(dst, src, kind)
    }

    /// Records a write of one 64-bit word (`aclrtValueWrite`).
    pub fn write_value(&self, dst: Slot<DeviceBuffer<u64>>, value: u64) -> Result<()> {
        self.target.write_value(dst, value)
    }

    /// Records a record of `event` (`aclrtRecordEvent`); the model keeps the event alive.
    pub fn record_event(&self, event: &Event) -> Result<()> {
        self.target.record_event(event)
    }

    /// Records a wait for `event` (`aclrtStreamWaitEvent`); the model keeps the event alive.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.target.wait_event(event)
    }

    /// Records a reset of `event` (`aclrtResetEvent`); the model keeps the event alive.
    pub fn reset_event(&self, event: &Event) -> Result<()> {
        self.target.reset_event(event)
    }

    /// The capture state of the recording stream (`aclmdlRICaptureGetInfo`).
    pub fn status(&self) -> Result<CaptureStatus> {
        let mut st: sys::aclmdlRICaptureStatus = 0;
        self.target.stream.make_current()?;
        // SAFETY: the stream is live; one out-pointer, the other NULL (allowed).
        unsafe {
            raw::aclmdlRICaptureGetInfo(self.target.stream.as_raw(), &mut st, std::ptr::null_mut())
        }?;
        CaptureStatus::try_from(st)
    }

    /// Records the tasks `f` issues as a task group (`aclmdlRICaptureTaskGrpBegin` /
    /// `...GrpEnd`), whose tasks [`Model::update`] can later replace. Groups do not nest, and
    /// exist in captures only.
    pub fn task_group(&self, f: impl FnOnce(&Self) -> Result<()>) -> Result<TaskGroup> {
        const API: &str = "aclmdlRICaptureTaskGrpBegin";
        if !self.capturing {
            return Err(Error::argument(
                API,
                "task groups are made while capturing, not updating",
            ));
        }
        if self.group_open.replace(true) {
            return Err(Error::argument(API, "task groups do not nest"));
        }
        let s = self.target.stream;
        let r = s.make_current().and_then(|()| {
            // SAFETY: the stream is live and capturing.
            unsafe { raw::aclmdlRICaptureTaskGrpBegin(s.as_raw()) }
        });
        if let Err(e) = r {
            self.group_open.set(false);
            return Err(e);
        }
        let body = f(self);
        let mut grp: sys::aclrtTaskGrp = std::ptr::null_mut();
        // SAFETY: as above; one out-pointer. The group is closed whatever `f` returned.
        let end = unsafe { raw::aclmdlRICaptureTaskGrpEnd(s.as_raw(), &mut grp) };
        self.group_open.set(false);
        body?;
        end?;
        Ok(TaskGroup {
            raw: grp,
            model: self.model,
            generation: self.generation,
        })
    }
}

/// Ends a capture if its closure unwinds (and destroys what it captured).
struct EndCapture {
    stream: sys::aclrtStream,
    armed: bool,
}

impl Drop for EndCapture {
    fn drop(&mut self) {
        if self.armed {
            let mut ri: sys::aclmdlRI = std::ptr::null_mut();
            // SAFETY: the stream is live (the capture borrows it) and capturing.
            if unsafe { raw::aclmdlRICaptureEnd(self.stream, &mut ri) }.is_ok() && !ri.is_null() {
                // SAFETY: the instance was just made and is used by nobody.
                let _ = unsafe { raw::aclmdlRIDestroy(ri) };
            }
        }
    }
}

/// Ends an update if its closure unwinds.
struct EndUpdate {
    stream: sys::aclrtStream,
    armed: bool,
}

impl Drop for EndUpdate {
    fn drop(&mut self) {
        if self.armed {
            // SAFETY: the stream is live (the update borrows it) and updating; the tasks it
            // recorded name buffers of the model only.
            let _ = unsafe { raw::aclmdlRICaptureTaskUpdateEnd(self.stream) };
        }
    }
}

/// Refuses a stream that other handles share.
fn exclusive(api: &'static str, stream: &Stream) -> Result<()> {
    match stream.other_handles() {
        0 => Ok(()),
        others => Err(Error::StreamNotExclusive { api, others }),
    }
}

/// Refuses a stream of another device than the model's.
fn same_device(api: &'static str, parts: &Parts, stream: &Stream) -> Result<()> {
    if stream.device_id() != parts.device().id() {
        return Err(Error::argument(
            api,
            "the stream belongs to another device than the model",
        ));
    }
    Ok(())
}

impl Model {
    /// Captures the work `f` records on `stream` into the model's instance
    /// (`aclmdlRICaptureBegin`, `aclmdlRICaptureEnd`): nothing runs now; each execution runs
    /// it. The stream must be the only handle on its stream ([`Error::StreamNotExclusive`]
    /// otherwise: work enqueued through another handle meanwhile would be captured too), and the
    /// model must have no instance yet. When `f` fails (or panics) the capture still ends and
    /// what it recorded is discarded.
    pub fn capture<R>(
        &mut self,
        stream: &mut Stream,
        mode: CaptureMode,
        f: impl FnOnce(&Recorder<'_>) -> Result<R>,
    ) -> Result<R> {
        const API: &str = "aclmdlRICaptureBegin";
        self.vacant(API)?;
        same_device(API, &self.parts, stream)?;
        exclusive(API, stream)?;
        stream.make_current()?;
        // SAFETY: the stream is live and only this call uses it until the capture ends.
        unsafe { raw::aclmdlRICaptureBegin(stream.as_raw(), mode.into()) }?;
        let mut guard = EndCapture {
            stream: stream.as_raw(),
            armed: true,
        };
        let kept = RefCell::new(Kept::default());
        let recorder = Recorder {
            target: Target {
                parts: &self.parts,
                stream,
                kept: &kept,
            },
            capturing: true,
            group_open: Cell::new(false),
            model: self.parts.id,
            generation: self.generation + 1,
        };
        let body = f(&recorder);
        guard.armed = false;
        let mut ri: sys::aclmdlRI = std::ptr::null_mut();
        let _ = stream.make_current();
        // SAFETY: the stream is live and capturing; one out-pointer.
        let end = unsafe { raw::aclmdlRICaptureEnd(stream.as_raw(), &mut ri) };
        match (body, end) {
            (Ok(v), Ok(())) => {
                self.install(ri, ModelKind::Captured, kept.into_inner());
                Ok(v)
            }
            (body, end) => {
                if end.is_ok() && !ri.is_null() {
                    // SAFETY: the instance was just made and is used by nobody.
                    crate::drop_errors::report(unsafe { raw::aclmdlRIDestroy(ri) });
                }
                Err(body.err().or(end.err()).expect("one of them failed"))
            }
        }
    }

    /// Replaces the tasks of a task group of the captured instance with those `f` records on
    /// `stream` (`aclmdlRICaptureTaskUpdateBegin` / `...UpdateEnd`: the same number and kinds of
    /// tasks, else the runtime refuses). The update runs on `stream`; this returns once the
    /// stream has run it (`aclrtSynchronizeStream`, with [`Stream::scope`]'s guarantees), so
    /// the next execution uses the new tasks. The stream must be the only handle on its stream.
    pub fn update(
        &mut self,
        stream: &mut Stream,
        group: &TaskGroup,
        f: impl FnOnce(&Recorder<'_>) -> Result<()>,
    ) -> Result<()> {
        const API: &str = "aclmdlRICaptureTaskUpdateBegin";
        self.instance(API)?;
        if group.model != self.parts.id || group.generation != self.generation {
            return Err(Error::argument(
                API,
                "the task group belongs to another model or to an earlier instance",
            ));
        }
        same_device(API, &self.parts, stream)?;
        exclusive(API, stream)?;
        let kept = RefCell::new(Kept::default());
        let parts = &self.parts;
        let generation = self.generation;
        let s: &Stream = stream;
        let r = s.scope(|_| {
            s.make_current()?;
            // SAFETY: both handles are live; only this call uses the stream until it ends.
            unsafe { raw::aclmdlRICaptureTaskUpdateBegin(s.as_raw(), group.raw) }?;
            let mut guard = EndUpdate {
                stream: s.as_raw(),
                armed: true,
            };
            let recorder = Recorder {
                target: Target {
                    parts,
                    stream: s,
                    kept: &kept,
                },
                capturing: false,
                group_open: Cell::new(false),
                model: parts.id,
                generation,
            };
            let body = f(&recorder);
            guard.armed = false;
            // SAFETY: the stream is live and updating.
            let end = unsafe { raw::aclmdlRICaptureTaskUpdateEnd(s.as_raw()) };
            body.and(end)
        });
        // Events the new tasks name live as long as the instance.
        if let Some(inst) = self.instance.as_mut() {
            inst.kept.events.append(&mut kept.into_inner().events);
        }
        r
    }
}
