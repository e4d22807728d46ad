//! Events: markers recorded on streams, for waiting, cross-stream ordering and timing.

use crate::context;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::release::{ReleaseError, ReleaseResult};
use crate::result;
use crate::stream::{Stream, timeout_ms};
use ascendcl_sys as sys;
use std::marker::PhantomData;
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

/// An event (`aclrtCreateEvent[WithFlag]` … `aclrtDestroyEvent`).
///
/// | operation | C function |
/// |---|---|
/// | [`Device::create_event`], [`Device::create_event_with_flags`] | `aclrtCreateEvent`, `aclrtCreateEventWithFlag` |
/// | [`Event::record`] | `aclrtRecordEvent` |
/// | [`Event::reset`] | `aclrtResetEvent` |
/// | [`Event::is_complete`] | `aclrtQueryEventStatus` |
/// | [`Event::synchronize`], [`Event::synchronize_timeout`] | `aclrtSynchronizeEvent[WithTimeout]` |
/// | [`Event::elapsed_since`], [`Event::elapsed`] | `aclrtEventElapsedTime` |
/// | [`Stream::wait_event`] | `aclrtStreamWaitEvent` |
/// | drop, [`Event::destroy`] | `aclrtDestroyEvent` |
#[derive(Debug)]
pub struct Event<'d> {
    raw: sys::aclrtEvent,
    ctx: sys::aclrtContext,
    _device: PhantomData<&'d Device<'d>>,
}

impl<'d> Event<'d> {
    pub(crate) fn create(device: &'d Device<'_>, flags: Option<EventFlags>) -> Result<Event<'d>> {
        if flags.is_some_and(|f| f.is_empty()) {
            return Err(Error::argument(
                "aclrtCreateEventWithFlag",
                "the flags must not be empty (use Device::create_event)",
            ));
        }
        device.ensure_current()?;
        let raw = result::event::create(flags.map(|f| f.bits()))?;
        Ok(Event {
            raw,
            ctx: device.raw_context(),
            _device: PhantomData,
        })
    }

    /// The raw `aclrtEvent`, for FFI.
    pub fn as_raw(&self) -> sys::aclrtEvent {
        self.raw
    }

    /// Records the event on `stream`: it completes when the stream's earlier work is done
    /// (`aclrtRecordEvent`).
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        stream.make_current()?;
        // SAFETY: both handles are live while borrowed.
        unsafe { result::event::record(self.raw, stream.as_raw()) }
    }

    /// Resets the event on `stream` (`aclrtResetEvent`).
    pub fn reset(&self, stream: &Stream<'_>) -> Result<()> {
        stream.make_current()?;
        // SAFETY: both handles are live while borrowed.
        unsafe { result::event::reset(self.raw, stream.as_raw()) }
    }

    /// Whether the work before the last record is done, without blocking
    /// (`aclrtQueryEventStatus`; an event never recorded counts as complete).
    pub fn is_complete(&self) -> Result<bool> {
        // SAFETY: `raw` is live while `self` is.
        let st = unsafe { result::event::query_status(self.raw) }?;
        match st {
            sys::ACL_EVENT_RECORDED_STATUS_COMPLETE => Ok(true),
            sys::ACL_EVENT_RECORDED_STATUS_NOT_READY => Ok(false),
            other => Err(Error::UnknownValue {
                what: "aclrtEventRecordedStatus",
                value: u64::from(other),
            }),
        }
    }

    /// Blocks until the event completes (`aclrtSynchronizeEvent`).
    pub fn synchronize(&self) -> Result<()> {
        context::ensure_current(self.ctx)?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { result::event::synchronize(self.raw) }
    }

    /// As [`Event::synchronize`], giving up after `timeout` (`None`: forever) with
    /// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` (`aclrtSynchronizeEventWithTimeout`).
    pub fn synchronize_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        context::ensure_current(self.ctx)?;
        // SAFETY: `raw` is live while `self` is.
        unsafe { result::event::synchronize_timeout(self.raw, timeout_ms(timeout)) }
    }

    /// Time between `start` and this event, both recorded and complete
    /// (`aclrtEventElapsedTime`, milliseconds converted to a `Duration`).
    pub fn elapsed_since(&self, start: &Event<'_>) -> Result<Duration> {
        Event::elapsed(start, self)
    }

    /// Time from `start` to `end` (`aclrtEventElapsedTime`). A negative or non-finite answer is
    /// an error.
    pub fn elapsed(start: &Event<'_>, end: &Event<'_>) -> Result<Duration> {
        // SAFETY: both handles are live while borrowed.
        let ms = unsafe { result::event::elapsed_ms(start.raw, end.raw) }?;
        Duration::try_from_secs_f64(f64::from(ms) / 1000.0).map_err(|_| {
            Error::argument(
                "aclrtEventElapsedTime",
                format!("the runtime reported {ms} ms, not a duration"),
            )
        })
    }

    /// Destroys the event (`aclrtDestroyEvent`). On failure the event is still alive and comes
    /// back with the error ([`ReleaseError`]): retry, or drop it.
    pub fn destroy(self) -> ReleaseResult<(), Self> {
        // SAFETY: `raw` is live and owned; on success it is never used again (forgotten below).
        match unsafe { result::event::destroy(self.raw) } {
            Ok(()) => {
                std::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and owned; released once.
        crate::drop_errors::report(unsafe { result::event::destroy(self.raw) });
    }
}
