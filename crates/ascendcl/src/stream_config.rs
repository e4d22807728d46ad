//! A stream's configuration as one value ([`StreamConfig`], [`Stream::config`]) and the
//! runtime's stream configuration handles ([`StreamConfigHandle`]), which the runtime declares
//! but supports on no Atlas product: on those every step is [`Error::NotSupported`].

use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::stream::{Owner, Stream, StreamFlags};
use ascendcl_sys::{self as sys, AclError};
use std::ffi::c_void;
use std::ptr::NonNull;

/// What a stream was created with, and its id: the answers of `aclrtStreamGetId`,
/// `aclrtStreamGetFlags` and `aclrtStreamGetPriority` ([`Stream::config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamConfig {
    /// The stream's id ([`Stream::id`]), as exception reports name it.
    pub id: i32,
    /// The creation flags; bits this crate does not name are kept.
    pub flags: StreamFlags,
    /// The priority, 0 (the highest) to 7.
    pub priority: u32,
}

impl Stream {
    /// The stream's id, flags and priority in one value (`aclrtStreamGetId`,
    /// `aclrtStreamGetFlags`, `aclrtStreamGetPriority`).
    pub fn config(&self) -> Result<StreamConfig> {
        Ok(StreamConfig {
            id: self.id()?,
            flags: self.flags()?,
            priority: self.priority()?,
        })
    }
}

/// A stream configuration object (`aclrtCreateStreamConfigHandle`; destroyed with
/// `aclrtDestroyStreamConfigHandle` on drop): flags and a priority set one by one
/// (`aclrtSetStreamConfigOpt`), then a stream made from it (`aclrtCreateStreamV2`).
///
/// The runtime's documentation marks these functions as supported on no Atlas product (Atlas
/// 350, A3, A2, 200I/500 A2, inference and training series): there [`StreamConfigHandle::new`]
/// fails with [`Error::NotSupported`], and
/// [`Device::create_stream_with`](crate::Device::create_stream_with) is the way to a configured
/// stream. Should a runtime support them, the rest of this type works as documented; each step
/// that the runtime refuses as unsupported is [`Error::NotSupported`] as well.
///
/// | operation | C function |
/// |---|---|
/// | [`StreamConfigHandle::new`] | `aclrtCreateStreamConfigHandle` |
/// | [`StreamConfigHandle::set_flags`], [`StreamConfigHandle::set_priority`] | `aclrtSetStreamConfigOpt` |
/// | [`StreamConfigHandle::create_stream`] | `aclrtCreateStreamV2` |
/// | drop, [`StreamConfigHandle::destroy`] | `aclrtDestroyStreamConfigHandle` |
#[derive(Debug)]
pub struct StreamConfigHandle {
    /// None once destroyed explicitly.
    raw: Option<NonNull<sys::aclrtStreamConfigHandle>>,
    device: Device,
}

// SAFETY: the handle is a plain object the runtime accepts from any thread; every call makes the
// device's context current first, and setting options needs `&mut self`.
unsafe impl Send for StreamConfigHandle {}
// SAFETY: `&self` methods only read the handle (stream creation); mutation needs `&mut self`.
unsafe impl Sync for StreamConfigHandle {}

impl StreamConfigHandle {
    /// Creates a configuration object for streams of `device` (`aclrtCreateStreamConfigHandle`).
    /// Where the runtime does not support it (every Atlas product, by its documentation) this
    /// is [`Error::NotSupported`].
    pub fn new(device: &Device) -> Result<StreamConfigHandle> {
        const API: &str = "aclrtCreateStreamConfigHandle";
        device.ensure_current()?;
        let p = raw::aclrtCreateStreamConfigHandle();
        if let Some(raw) = NonNull::new(p) {
            return Ok(StreamConfigHandle {
                raw: Some(raw),
                device: device.clone(),
            });
        }
        if let Some(symbol) = sys::take_missing_symbol() {
            return Err(Error::MissingSymbol { api: API, symbol }.into_not_supported());
        }
        // A NULL return sets the thread's last error.
        let code = crate::exception::last_error().unwrap_or(AclError::FAILURE);
        Err(crate::error::failure(API, code.code()).into_not_supported())
    }

    fn raw(&self) -> *mut sys::aclrtStreamConfigHandle {
        self.raw.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    fn set(&mut self, attr: sys::aclrtStreamConfigAttr, value: u32) -> Result<()> {
        self.device.ensure_current()?;
        // SAFETY: the handle is live and exclusively borrowed; the value is read during the call.
        unsafe {
            raw::aclrtSetStreamConfigOpt(
                self.raw(),
                attr,
                std::ptr::from_ref(&value).cast::<c_void>(),
                std::mem::size_of::<u32>(),
            )
        }
        .map_err(Error::into_not_supported)
    }

    /// Sets the flags of the streams made from this object (`aclrtSetStreamConfigOpt`,
    /// `ACL_RT_STREAM_FLAG`).
    pub fn set_flags(&mut self, flags: StreamFlags) -> Result<()> {
        self.set(sys::ACL_RT_STREAM_FLAG, flags.bits())
    }

    /// Sets the priority (0, the highest, to 7) of the streams made from this object
    /// (`aclrtSetStreamConfigOpt`, `ACL_RT_STREAM_PRIORITY`).
    pub fn set_priority(&mut self, priority: u32) -> Result<()> {
        self.set(sys::ACL_RT_STREAM_PRIORITY, priority)
    }

    /// A stream of the device with this configuration (`aclrtCreateStreamV2`).
    pub fn create_stream(&self) -> Result<Stream> {
        self.device.ensure_current()?;
        let mut s: sys::aclrtStream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the handle is live while `self` is.
        unsafe { raw::aclrtCreateStreamV2(&mut s, self.raw()) }
            .map_err(Error::into_not_supported)?;
        Ok(Stream::adopt(Owner::from(&self.device), s))
    }

    fn destroy_inner(&mut self) -> Result<()> {
        let Some(p) = self.raw else {
            return Ok(());
        };
        self.device.ensure_current()?;
        // SAFETY: the handle is live and owned by `self`; on success it is never used again.
        unsafe { raw::aclrtDestroyStreamConfigHandle(p.as_ptr()) }
            .map_err(Error::into_not_supported)?;
        self.raw = None;
        Ok(())
    }

    /// Destroys the object (`aclrtDestroyStreamConfigHandle`); streams made from it are not
    /// affected. On failure it comes back with the error.
    pub fn destroy(mut self) -> ReleaseResult<(), Self> {
        match self.destroy_inner() {
            Ok(()) => Ok(()),
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl Drop for StreamConfigHandle {
    fn drop(&mut self) {
        let r = self.destroy_inner();
        crate::drop_errors::report(r);
    }
}
