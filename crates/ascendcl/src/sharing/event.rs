//! IPC events: [`Event::ipc_handle`] names an event created with [`EventFlags::IPC`] by an
//! [`IpcEventHandle`]; another process opens it ([`Device::open_ipc_event`]) and waits for,
//! queries or synchronises with the records made here.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::raw;
use ascendcl_sys as sys;
use std::fmt;

/// The handle of an IPC event (`aclrtIpcEventHandle`, 64 bytes): any process may open it
/// (the runtime exports IPC events with pid validation disabled). Passed as its bytes or as
/// text (128 hexadecimal digits).
///
/// ```
/// let h = ascendcl::IpcEventHandle::from_bytes([7; 64]);
/// let text = h.to_string();
/// assert_eq!(text.len(), 128);
/// assert_eq!(text.parse::<ascendcl::IpcEventHandle>()?, h);
/// assert_eq!(h.to_bytes(), [7; 64]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcEventHandle([u8; 64]);

impl IpcEventHandle {
    /// A handle received from the process that made it.
    pub const fn from_bytes(bytes: [u8; 64]) -> IpcEventHandle {
        IpcEventHandle(bytes)
    }

    /// The bytes, to send to another process.
    pub const fn to_bytes(self) -> [u8; 64] {
        self.0
    }

    fn to_raw(self) -> sys::aclrtIpcEventHandle {
        let mut h = sys::aclrtIpcEventHandle { reserved: [0; 64] };
        for (d, s) in h.reserved.iter_mut().zip(self.0) {
            *d = s as std::ffi::c_char;
        }
        h
    }
}

impl fmt::Debug for IpcEventHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IpcEventHandle({self})")
    }
}

/// 128 lowercase hexadecimal digits.
impl fmt::Display for IpcEventHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for IpcEventHandle {
    type Err = Error;
    fn from_str(s: &str) -> Result<IpcEventHandle> {
        let bad = || {
            Error::argument(
                "IpcEventHandle::from_str",
                "an IPC event handle is 128 hexadecimal digits",
            )
        };
        let s = s.trim();
        if s.len() != 128 || !s.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 64];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(IpcEventHandle(out))
    }
}

impl Event {
    /// The handle other processes open this event by (`aclrtIpcGetEventHandle`). The event
    /// must have been created with [`EventFlags::IPC`](crate::EventFlags::IPC) (the runtime
    /// refuses others).
    pub fn ipc_handle(&self) -> Result<IpcEventHandle> {
        self.device().ensure_current()?;
        let mut h = sys::aclrtIpcEventHandle { reserved: [0; 64] };
        // SAFETY: the event is live while `self` is; a valid out-pointer.
        unsafe { raw::aclrtIpcGetEventHandle(self.as_raw(), &mut h) }?;
        let mut out = [0u8; 64];
        for (d, s) in out.iter_mut().zip(h.reserved) {
            *d = s as u8;
        }
        Ok(IpcEventHandle(out))
    }
}

impl Device {
    /// Opens an IPC event of another process on this device (`aclrtIpcOpenEventHandle`): the
    /// returned [`Event`] completes with the records made in that process; streams wait for it
    /// ([`Stream::wait_event`](crate::Stream::wait_event)), the host synchronises with it or
    /// queries it. Destroyed with `aclrtDestroyEvent` when its last handle goes.
    pub fn open_ipc_event(&self, handle: &IpcEventHandle) -> Result<Event> {
        self.ensure_current()?;
        let mut raw: sys::aclrtEvent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the handle is plain bytes the runtime parses.
        unsafe { raw::aclrtIpcOpenEventHandle(handle.to_raw(), &mut raw) }?;
        Ok(Event::from_raw(raw, self))
    }
}
