//! Events: markers recorded on streams, for waiting, cross-stream ordering and timing.
//!
//! An [`Event`] is a reference-counted handle that keeps its device open.

use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use crate::stream::{Stream, timeout_ms};
use ascendcl_sys as sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

bitflags::bitflags! {
    /// Event creation flags (`ACL_EVENT_*`), for
    /// [`Device::create_event_with_flags`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct EventFlags: u32 {
        /// `ACL_EVENT_SYNC`
        const SYNC = sys::ACL_EVENT_SYNC;
        /// `ACL_EVENT_CAPTURE_STREAM_PROGRESS`
        const CAPTURE_STREAM_PROGRESS = sys::ACL_EVENT_CAPTURE_STREAM_PROGRESS;
        /// `ACL_EVENT_TIME_LINE`: the event can be timed.
        const TIME_LINE = sys::ACL_EVENT_TIME_LINE;
        /// `ACL_EVENT_DEVICE_USE_ONLY`
        const DEVICE_USE_ONLY = sys::ACL_EVENT_DEVICE_USE_ONLY;
        /// `ACL_EVENT_EXTERNAL`
        const EXTERNAL = sys::ACL_EVENT_EXTERNAL;
        /// `ACL_EVENT_IPC`
        const IPC = sys::ACL_EVENT_IPC;
    }
}

raw_enum! {
    /// Whether the streams told to wait for an event have got past their waits
    /// (`aclrtEventWaitStatus`, from [`Event::wait_status`]).
    pub enum EventWaitStatus: sys::aclrtEventWaitStatus {
        /// `ACL_EVENT_WAIT_STATUS_COMPLETE`: every wait issued for the event has finished (or
        /// none was issued).
        Complete = sys::ACL_EVENT_WAIT_STATUS_COMPLETE,
        /// `ACL_EVENT_WAIT_STATUS_NOT_READY`: a stream is still waiting, or has the wait queued.
        NotReady = sys::ACL_EVENT_WAIT_STATUS_NOT_READY,
        /// `ACL_EVENT_WAIT_STATUS_RESERVED`
        Reserved = sys::ACL_EVENT_WAIT_STATUS_RESERVED,
    }
}

/// An event (`aclrtCreateEvent[WithFlag]`; destroyed with `aclrtDestroyEvent` when its last
/// handle goes).
///
/// Cheap to clone, `Send + Sync`, `'static`; it keeps its device open. Recording, querying and
/// waiting are synchronised by the runtime, so threads may share one event.
///
/// | operation | C function |
/// |---|---|
/// | [`Device::create_event`], [`Device::create_event_with_flags`] | `aclrtCreateEvent`, `aclrtCreateEventWithFlag` |
/// | [`Event::record`] | `aclrtRecordEvent` |
/// | [`Event::reset`] | `aclrtResetEvent` |
/// | [`Event::is_complete`] | `aclrtQueryEventStatus` |
/// | [`Event::wait_status`] | `aclrtQueryEventWaitStatus` |
/// | [`Event::id`] | `aclrtGetEventId` |
/// | [`Event::timestamp`] | `aclrtEventGetTimestamp` |
/// | [`Event::synchronize`], [`Event::synchronize_timeout`] | `aclrtSynchronizeEvent[WithTimeout]` |
/// | [`Event::elapsed_since`], [`Event::elapsed`] | `aclrtEventElapsedTime` |
/// | [`Stream::wait_event`], [`Stream::wait_event_timeout`] | `aclrtStreamWaitEvent[WithTimeout]` |
/// | drop of the last handle, [`Event::destroy`] | `aclrtDestroyEvent` |
#[derive(Debug, Clone)]
pub struct Event {
    inner: Arc<EventInner>,
}

#[derive(Debug)]
struct EventInner {
    /// NULL once destroyed explicitly.
    raw: sys::aclrtEvent,
    device: Device,
    /// How many records and resets this crate has made of the event. Every record, reset and
    /// stream wait through this crate holds the lock while it calls the runtime, so a wait
    /// reads the number of the very record it waits for (what a scope needs to recognise a
    /// wait for a record it made itself: [`Event::wait_on`]).
    order: Mutex<u64>,
    /// Whether only this process records the event, and only through this crate's calls
    /// (not an IPC or external event, not recorded by a model's tasks).
    trusted: AtomicBool,
}

// SAFETY: an event handle is a plain value the runtime accepts from any thread and synchronises
// internally; every call makes the event's context current first.
unsafe impl Send for EventInner {}
// SAFETY: as above; `raw` is never mutated while shared.
unsafe impl Sync for EventInner {}

impl Event {
    pub(crate) fn create(device: &Device, flags: Option<EventFlags>) -> Result<Event> {
        if flags.is_some_and(|f| f.is_empty()) {
            return Err(Error::argument(
                "aclrtCreateEventWithFlag",
                "the flags must not be empty (use Device::create_event)",
            ));
        }
        device.ensure_current()?;
        let raw = match flags {
            // SAFETY: a valid out-pointer.
            None => raw::out(|e| unsafe { raw::aclrtCreateEvent(e) }),
            // SAFETY: a valid out-pointer; the runtime validates the flags.
            Some(f) => raw::out(|e| unsafe { raw::aclrtCreateEventWithFlag(e, f.bits()) }),
        }?;
        let shared = EventFlags::IPC | EventFlags::EXTERNAL;
        let trusted = !flags.is_some_and(|f| f.intersects(shared));
        Ok(Event::owned(raw, device, trusted))
    }

    fn owned(raw: sys::aclrtEvent, device: &Device, trusted: bool) -> Event {
        Event {
            inner: Arc::new(EventInner {
                raw,
                device: device.clone(),
                order: Mutex::new(0),
                trusted: AtomicBool::new(trusted),
            }),
        }
    }

    /// Owns an event handle this crate obtained from the runtime (an opened IPC event, which
    /// another process records).
    pub(crate) fn from_raw(raw: sys::aclrtEvent, device: &Device) -> Event {
        Event::owned(raw, device, false)
    }

    fn order(&self) -> MutexGuard<'_, u64> {
        self.inner.order.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the records of this event are all this crate's own (see [`EventInner::trusted`]).
    pub(crate) fn is_trusted(&self) -> bool {
        self.inner.trusted.load(Ordering::Acquire)
    }

    /// Marks the event as recorded by something other than this crate's calls (a model's
    /// tasks record it at every execution): a scope no longer takes a wait for it as an order.
    pub(crate) fn distrust(&self) {
        self.inner.trusted.store(false, Ordering::Release);
    }

    /// Whether both handles are the same event.
    pub(crate) fn same(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Records the event on `stream`; the number of this record among the crate's records and
    /// resets of the event.
    pub(crate) fn record_on(&self, stream: &Stream) -> Result<u64> {
        stream.make_current()?;
        let mut n = self.order();
        // SAFETY: both handles are live while borrowed.
        unsafe { raw::aclrtRecordEvent(self.as_raw(), stream.as_raw()) }?;
        *n += 1;
        Ok(*n)
    }

    /// Makes `stream` wait for the event's latest record (with `timeout` in whole seconds, 0
    /// waiting for ever, when `Some`); the number of that record (see [`Event::record_on`]).
    pub(crate) fn wait_on(&self, stream: &Stream, timeout: Option<i32>) -> Result<u64> {
        stream.make_current()?;
        let n = self.order();
        match timeout {
            // SAFETY: both handles are live while borrowed.
            None => unsafe { raw::aclrtStreamWaitEvent(stream.as_raw(), self.as_raw()) }?,
            // SAFETY: as above.
            Some(secs) => unsafe {
                raw::aclrtStreamWaitEventWithTimeout(stream.as_raw(), self.as_raw(), secs)
            }?,
        }
        Ok(*n)
    }

    /// The raw `aclrtEvent`, for FFI. Recording or resetting it through raw calls while a
    /// [`Scope`](crate::Scope) may rely on a record it made of it (between the scope's
    /// [`record_event`](crate::Scope::record_event) and a [`wait_event`](crate::Scope::wait_event)
    /// on another of its streams) breaks the order the scope believes in: that is for the
    /// `unsafe` caller to rule out.
    pub fn as_raw(&self) -> sys::aclrtEvent {
        self.inner.raw
    }

    /// The device the event belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    fn ensure_current(&self) -> Result<()> {
        self.inner.device.ensure_current()
    }

    /// Records the event on `stream`: it completes when the stream's earlier work is done
    /// (`aclrtRecordEvent`).
    pub fn record(&self, stream: &Stream) -> Result<()> {
        self.record_on(stream).map(drop)
    }

    /// Resets the event on `stream` (`aclrtResetEvent`).
    pub fn reset(&self, stream: &Stream) -> Result<()> {
        stream.make_current()?;
        let mut n = self.order();
        // SAFETY: both handles are live while borrowed.
        unsafe { raw::aclrtResetEvent(self.as_raw(), stream.as_raw()) }?;
        *n += 1;
        Ok(())
    }

    /// Whether the work before the last record is done, without blocking
    /// (`aclrtQueryEventStatus`; an event never recorded, or reset since, is not complete).
    pub fn is_complete(&self) -> Result<bool> {
        self.ensure_current()?;
        // SAFETY: `raw` is live while `self` is.
        let st = raw::out(|st| unsafe { raw::aclrtQueryEventStatus(self.as_raw(), st) })?;
        match st {
            sys::ACL_EVENT_RECORDED_STATUS_COMPLETE => Ok(true),
            sys::ACL_EVENT_RECORDED_STATUS_NOT_READY => Ok(false),
            other => Err(Error::UnknownValue {
                what: "aclrtEventRecordedStatus",
                value: u64::from(other),
            }),
        }
    }

    /// The event's id (`aclrtGetEventId`), a small number unique among the device's events.
    pub fn id(&self) -> Result<u32> {
        self.ensure_current()?;
        let mut id = 0u32;
        // SAFETY: the event is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtGetEventId(self.as_raw(), &mut id) }?;
        Ok(id)
    }

    /// Whether the streams made to wait for this event ([`Stream::wait_event`],
    /// [`Stream::wait_event_timeout`], a [`Scope`](crate::Scope) hand-off) have all got past
    /// their waits (`aclrtQueryEventWaitStatus`): [`EventWaitStatus::Complete`] also when no
    /// wait was issued. Events the runtime keeps no wait status for (external and IPC events)
    /// answer [`Error::NotSupported`].
    pub fn wait_status(&self) -> Result<EventWaitStatus> {
        self.ensure_current()?;
        let mut st = sys::ACL_EVENT_WAIT_STATUS_RESERVED;
        // SAFETY: the event is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtQueryEventWaitStatus(self.as_raw(), &mut st) }
            .map_err(Error::into_not_supported)?;
        EventWaitStatus::try_from(st)
    }

    /// When the stream reached the event's last record, on the device's monotonic clock
    /// (`aclrtEventGetTimestamp`, microseconds). The record must have completed; an event
    /// never recorded, or reset since, is an error.
    pub fn timestamp(&self) -> Result<Duration> {
        self.ensure_current()?;
        let mut us = 0u64;
        // SAFETY: the event is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtEventGetTimestamp(self.as_raw(), &mut us) }?;
        Ok(Duration::from_micros(us))
    }

    /// Blocks until the event completes (`aclrtSynchronizeEvent`).
    pub fn synchronize(&self) -> Result<()> {
        crate::deferred::refuse_sync_on_callback("aclrtSynchronizeEvent")?;
        self.ensure_current()?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { raw::aclrtSynchronizeEvent(self.as_raw()) }
    }

    /// As [`Event::synchronize`], giving up after `timeout` (`None`: forever) with
    /// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` (`aclrtSynchronizeEventWithTimeout`).
    pub fn synchronize_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        crate::deferred::refuse_sync_on_callback("aclrtSynchronizeEventWithTimeout")?;
        self.ensure_current()?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { raw::aclrtSynchronizeEventWithTimeout(self.as_raw(), timeout_ms(timeout)) }
    }

    /// Time between `start` and this event, both recorded and complete
    /// (`aclrtEventElapsedTime`, milliseconds converted to a `Duration`).
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        Event::elapsed(start, self)
    }

    /// Time from `start` to `end` (`aclrtEventElapsedTime`). A negative or non-finite answer is
    /// an error.
    pub fn elapsed(start: &Event, end: &Event) -> Result<Duration> {
        end.ensure_current()?;
        // SAFETY: both handles are live while borrowed.
        let ms =
            raw::out(|ms| unsafe { raw::aclrtEventElapsedTime(ms, start.as_raw(), end.as_raw()) })?;
        Duration::try_from_secs_f64(f64::from(ms) / 1000.0).map_err(|_| {
            Error::argument(
                "aclrtEventElapsedTime",
                format!("the runtime reported {ms} ms, not a duration"),
            )
        })
    }

    /// Releases this handle. When it was the last one, the event is destroyed now
    /// (`aclrtDestroyEvent`); on failure it is still alive and comes back with the error
    /// ([`ReleaseError`]): retry, or drop it. Otherwise this returns `Ok` and the last handle
    /// destroys it.
    pub fn destroy(self) -> ReleaseResult<(), Self> {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(_shared) => return Ok(()),
        };
        let destroyed = inner.device.ensure_current().and_then(|()| {
            // SAFETY: `raw` is live and owned by this, the only handle; on success it is never
            // used again (cleared below).
            unsafe { raw::aclrtDestroyEvent(inner.raw) }
        });
        match destroyed {
            Ok(()) => {
                inner.raw = std::ptr::null_mut();
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(
                e,
                Event {
                    inner: Arc::new(inner),
                },
            )),
        }
    }
}

impl Drop for EventInner {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let (raw, device) = (Raw(self.raw), self.device.clone());
        deferred::release(move || {
            let _ = device.ensure_current();
            // SAFETY: the event was owned by the last handle, which is gone; released once.
            unsafe { raw::aclrtDestroyEvent(raw.get()) }
        });
    }
}
