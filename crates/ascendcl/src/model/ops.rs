//! The tasks a model records, on the stream that records them (a capturing stream, a stream
//! updating a task group, a bound stream): each names buffers the model owns, by slot.

use super::{Kept, Parts, Resident, Slot};
use crate::builtin::{ReduceElem, ReduceKind};
use crate::copy::{self, RawRegion};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::{DeviceBuffer, DeviceRepr};
use crate::raw;
use crate::stream::Stream;
use std::cell::RefCell;

/// Where recorded tasks go, and what the instance will keep alive.
pub(crate) struct Target<'a> {
    pub parts: &'a Parts,
    pub stream: &'a Stream,
    pub kept: &'a RefCell<Kept>,
}

/// Fails unless `r` is memory of the stream's device (or pinned host memory, when `host_ok`).
fn on_device<T>(
    api: &'static str,
    what: &str,
    r: &RawRegion<T>,
    dev: i32,
    host_ok: bool,
) -> Result<()> {
    match r.location().device() {
        Some(d) if d == dev => Ok(()),
        Some(_) => Err(Error::argument(
            api,
            format!("the {what} is memory of another device than the stream's"),
        )),
        None if host_ok => Ok(()),
        None => Err(Error::argument(
            api,
            format!("the {what} must be device memory"),
        )),
    }
}

impl Target<'_> {
    /// `aclrtMemcpyAsync` between two buffers of the model.
    pub(crate) fn copy<D, S>(&self, dst: Slot<D>, src: Slot<S>) -> Result<()>
    where
        D: Resident,
        S: Resident<Elem = D::Elem>,
    {
        const API: &str = "aclrtMemcpyAsync";
        let d = self.parts.get(API, dst)?.resident_region();
        let s = self.parts.get(API, src)?.resident_region();
        let dev = self.stream.device_id();
        on_device(API, "destination", &d, dev, true)?;
        on_device(API, "source", &s, dev, true)?;
        self.stream.make_current()?;
        // SAFETY: both regions belong to buffers the model owns and keeps in place for as long
        // as its instance exists; executions borrow the model exclusively until they have
        // ended, and the stream records (does not run) the copy.
        unsafe { copy::copy_regions_async(d, s, self.stream.as_raw(), false) }
    }

    /// `aclrtMemsetAsync` of a device buffer of the model.
    pub(crate) fn fill_bytes<T: DeviceRepr>(
        &self,
        dst: Slot<DeviceBuffer<T>>,
        value: u8,
    ) -> Result<()> {
        const API: &str = "aclrtMemsetAsync";
        let d = self.parts.get(API, dst)?.resident_region();
        on_device(API, "destination", &d, self.stream.device_id(), false)?;
        if d.bytes() == 0 {
            return Ok(());
        }
        self.stream.make_current()?;
        // SAFETY: as for `copy`.
        unsafe {
            raw::aclrtMemsetAsync(
                d.ptr().cast(),
                d.bytes(),
                i32::from(value),
                d.bytes(),
                self.stream.as_raw(),
            )
        }
    }

    /// `aclrtReduceAsync`: `dst[i] = kind(dst[i], src[i])`.
    pub(crate) fn reduce<T: ReduceElem>(
        &self,
        dst: Slot<DeviceBuffer<T>>,
        src: Slot<DeviceBuffer<T>>,
        kind: ReduceKind,
    ) -> Result<()> {
        const API: &str = "aclrtReduceAsync";
        let d = self.parts.get(API, dst)?.resident_region();
        let s = self.parts.get(API, src)?.resident_region();
        let dev = self.stream.device_id();
        on_device(API, "destination", &d, dev, false)?;
        on_device(API, "source", &s, dev, false)?;
        if d.len() != s.len() {
            return Err(Error::argument(
                API,
                format!("lengths differ: {} and {}", d.len(), s.len()),
            ));
        }
        if d.is_empty() {
            return Ok(());
        }
        self.stream.make_current()?;
        // SAFETY: as for `copy`; `bytes` is the common size of both regions.
        unsafe {
            raw::aclrtReduceAsync(
                d.ptr().cast(),
                s.ptr().cast_const().cast(),
                d.bytes() as u64,
                kind.into(),
                T::DATA_TYPE,
                self.stream.as_raw(),
                std::ptr::null_mut(),
            )
        }
    }

    /// `aclrtValueWrite` of a one-word device buffer of the model.
    pub(crate) fn write_value(&self, dst: Slot<DeviceBuffer<u64>>, value: u64) -> Result<()> {
        const API: &str = "aclrtValueWrite";
        let d = self.parts.get(API, dst)?.resident_region();
        on_device(API, "word", &d, self.stream.device_id(), false)?;
        if d.len() != 1 {
            return Err(Error::argument(API, "the buffer must hold exactly one u64"));
        }
        self.stream.make_current()?;
        // SAFETY: as for `copy`.
        unsafe { raw::aclrtValueWrite(d.ptr().cast(), value, 0, self.stream.as_raw()) }
    }

    /// `aclrtRecordEvent`; the instance keeps the event alive.
    pub(crate) fn record_event(&self, event: &Event) -> Result<()> {
        self.with_event(event, |e, s| {
            // SAFETY: both handles are live; the instance keeps the event.
            unsafe { raw::aclrtRecordEvent(e, s) }
        })
    }

    /// `aclrtStreamWaitEvent`; the instance keeps the event alive.
    pub(crate) fn wait_event(&self, event: &Event) -> Result<()> {
        self.with_event(event, |e, s| {
            // SAFETY: as above.
            unsafe { raw::aclrtStreamWaitEvent(s, e) }
        })
    }

    /// `aclrtResetEvent`; the instance keeps the event alive.
    pub(crate) fn reset_event(&self, event: &Event) -> Result<()> {
        self.with_event(event, |e, s| {
            // SAFETY: as above.
            unsafe { raw::aclrtResetEvent(e, s) }
        })
    }

    fn with_event(
        &self,
        event: &Event,
        call: impl FnOnce(ascendcl_sys::aclrtEvent, ascendcl_sys::aclrtStream) -> Result<()>,
    ) -> Result<()> {
        // The model's tasks record and reset the event at every execution, outside the calls a
        // scope can see: no scope takes a wait for it as an order any more.
        event.distrust();
        self.stream.make_current()?;
        call(event.as_raw(), self.stream.as_raw())?;
        self.kept.borrow_mut().events.push(event.clone());
        Ok(())
    }
}
