//! What a failed explicit release gives back: the error and the handle, still owning its resource
//! ([`ReleaseError`]).

use crate::error::Error;
use std::fmt;

/// A consuming release that failed: the runtime's error, and the handle that still owns the
/// resource.
///
/// The consuming releases (`DeviceBuffer::free`, `HostBuffer::free`, `Stream::destroy[_force]`,
/// `Event::destroy`, `Context::destroy`, `HostRegistration::unregister`, `Device::reset[_force]`,
/// `Runtime::finalize`) take the handle by value. When the runtime refuses, the resource is still
/// alive, so the handle comes back inside [`ReleaseError`]: retry the release, or give up
/// explicitly. Nothing leaks by accident: a `ReleaseError` that is dropped (including through `?`,
/// which converts it into [`Error`]) drops the handle, whose `Drop` makes one more best-effort
/// release and reports a failure through [`take_drop_errors`](crate::take_drop_errors).
///
/// ```
/// use ascendcl::{DeviceBuffer, MallocPolicy};
/// # let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let buf = DeviceBuffer::<u8>::zeroed(&dev, 64, MallocPolicy::HugeFirst)?;
/// // Retry once, then report.
/// buf.free().or_else(|e| {
///     eprintln!("first attempt: {e}; retrying");
///     e.into_handle().free()
/// })?;
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub struct ReleaseError<H> {
    error: Error,
    handle: H,
}

impl<H> ReleaseError<H> {
    pub(crate) fn new(error: Error, handle: H) -> Self {
        ReleaseError { error, handle }
    }

    /// Why the release failed.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The handle, to retry the release (or to keep using the resource).
    pub fn into_handle(self) -> H {
        self.handle
    }

    /// The error and the handle.
    pub fn into_parts(self) -> (Error, H) {
        (self.error, self.handle)
    }

    /// The error, giving up on the handle: it is dropped, and its `Drop` tries the release once
    /// more (a failure goes to [`take_drop_errors`](crate::take_drop_errors)).
    pub fn into_error(self) -> Error {
        self.error
    }
}

impl<H> fmt::Debug for ReleaseError<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReleaseError")
            .field("error", &self.error)
            .field("handle", &std::any::type_name::<H>())
            .finish()
    }
}

impl<H> fmt::Display for ReleaseError<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<H> std::error::Error for ReleaseError<H> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

impl<H> From<ReleaseError<H>> for Error {
    /// Gives up on the handle (see [`ReleaseError::into_error`]).
    fn from(e: ReleaseError<H>) -> Error {
        e.into_error()
    }
}

/// The result of a consuming release: on failure, the handle comes back with the error.
pub type ReleaseResult<T, H> = std::result::Result<T, ReleaseError<H>>;
