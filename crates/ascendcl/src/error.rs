//! Errors: one type for every failure, keeping the runtime's own words.
//!
//! A failing runtime call becomes [`Error::Acl`], which carries the C function's name, the numeric
//! `aclError`, its symbolic name from the headers' error tables ([`error_name`]) and the text of
//! `aclGetRecentErrMsg`, read on the failing thread right after the failure. A call that the active
//! backend does not provide becomes [`Error::MissingSymbol`]; a backend that cannot be loaded
//! becomes [`Error::Load`]; arguments that Rust rejects before any FFI call become
//! [`Error::Argument`]. [`Error::code`] gives the code as an [`AclError`], to compare with its
//! named constants (`e.code() == Some(AclError::MEMORY_ALLOCATION)`). An error of a crate built on
//! this one (a kernel launcher's, `hccl`'s) travels whole as [`Error::Layered`], so `?` works in
//! either direction ([`IntoAclError`]).

use ascendcl_sys::{self as sys, AclError};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure this crate reports.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A runtime call returned a non-zero `aclError`.
    #[error(
        "{api} failed: {} ({code}){}",
        name.unwrap_or("unknown aclError"),
        Msg { message, api, name: *name, code: *code }
    )]
    Acl {
        /// The C function that failed, e.g. `aclrtMalloc`.
        api: &'static str,
        /// The numeric `aclError`.
        code: i32,
        /// The symbolic name of `code` (`ACL_ERROR_RT_MEMORY_ALLOCATION`), when the headers
        /// define it.
        name: Option<&'static str>,
        /// What `aclGetRecentErrMsg` said on the failing thread right after the failure.
        message: Option<String>,
    },
    /// The active backend does not provide a function (for example an older CANN).
    #[error(
        "{api} failed: the active backend does not provide {symbol} \
         (ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000))"
    )]
    MissingSymbol {
        /// The operation that needed it.
        api: &'static str,
        /// The missing C symbol.
        symbol: &'static str,
    },
    /// No backend could be chosen or loaded (the error lists every library path tried).
    #[error(transparent)]
    Load(#[from] sys::LoadError),
    /// An argument rejected in Rust before any runtime call.
    #[error("{api}: invalid argument: {reason}")]
    Argument {
        /// The operation that rejected it.
        api: &'static str,
        /// Why.
        reason: Cow<'static, str>,
    },
    /// A raw value does not name any variant of a Rust enum or flag set.
    #[error("{value:#x} is not a valid {what}")]
    UnknownValue {
        /// The Rust type the value was converted to.
        what: &'static str,
        /// The raw value.
        value: u64,
    },
    /// A host function launched on a stream panicked; reported by the stream's next
    /// synchronisation or by the function's [`HostFnHandle`](crate::HostFnHandle).
    #[error("a host function launched on a stream panicked: {message}")]
    HostFnPanicked {
        /// The panic payload, when it was a string.
        message: String,
    },
    /// A host function never ran: its stream was destroyed with
    /// [`Stream::destroy_force`](crate::Stream::destroy_force) or aborted with
    /// [`Stream::abort`](crate::Stream::abort) before reaching it, and the closure was dropped
    /// instead. Reported by its [`HostFnHandle`](crate::HostFnHandle).
    #[error(
        "a host function was discarded: its stream was force-destroyed or aborted before it ran"
    )]
    HostFnDiscarded,
    /// Work of a scope or a submission was discarded before it ran: one of its streams was
    /// aborted ([`Stream::abort`](crate::Stream::abort)) meanwhile. Reported once every stream
    /// of the scope is idle (so the buffers it borrowed are no longer used).
    #[error(
        "{what}: a stream it enqueued work on was aborted (Stream::abort) meanwhile, so some of \
         that work may have been discarded without running"
    )]
    Aborted {
        /// What lost its work (`Stream::scope`, `Submission`).
        what: &'static str,
    },
    /// A failure on one stream of a scope or submission over several streams: which one it
    /// was, and the failure.
    #[error("stream {lane} of the scope (id {}): {source}", OptId(*stream_id))]
    OnStream {
        /// The stream's place among the scope's streams (0 for the first).
        lane: usize,
        /// The stream's id (`aclrtStreamGetId`), when the runtime gave it.
        stream_id: Option<i32>,
        /// What failed there.
        #[source]
        source: Box<Error>,
    },
    /// A closure registered as a runtime callback (a stream-state or exception callback)
    /// panicked; the panic was caught at the FFI boundary and is reported here.
    #[error("a {what} panicked: {message}")]
    CallbackPanicked {
        /// Which kind of callback.
        what: &'static str,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The runtime reports that the device does not support the operation
    /// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, or the function missing from the backend) where this
    /// crate knows it to be a property of the hardware, not a failure: for example stream
    /// configuration handles ([`StreamConfigHandle`](crate::StreamConfigHandle)), which no Atlas
    /// product supports. [`Error::is_not_supported`] is true for it.
    #[error(
        "{api} is not supported on this device (ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)){}",
        Msg { message, api, name: AclError::FEATURE_NOT_SUPPORT.name(), code: AclError::FEATURE_NOT_SUPPORT.code() }
    )]
    NotSupported {
        /// The C function the device does not support.
        api: &'static str,
        /// What the runtime said about it (`aclGetRecentErrMsg`), when it said something.
        message: Option<String>,
    },
    /// A release that needs the only handle on a resource was asked of one that other handles
    /// share (for example [`Device::reset_force`](crate::Device::reset_force) while a buffer
    /// holds the device). Nothing was released.
    #[error(
        "{api} refused: {others} other handle(s) share this {what}, and a forced release needs \
         the only one (nothing was released)"
    )]
    Shared {
        /// The release that was refused.
        api: &'static str,
        /// What the handle owns (`device`, `stream`).
        what: &'static str,
        /// How many other handles were alive when it was refused.
        others: usize,
    },
    /// A call that records work into a model runtime instance (capture, a task-group update,
    /// binding a stream to a built model) was given a stream that other handles share: work
    /// they enqueue meanwhile would be recorded into the model with pointers the model does not
    /// own. Nothing was done.
    #[error(
        "{api} refused: {others} other handle(s) share this stream, and recording into a model \
         needs the only one (nothing was done)"
    )]
    StreamNotExclusive {
        /// The call that was refused.
        api: &'static str,
        /// How many other handles were alive.
        others: usize,
    },
    /// An error of a crate built on this one (a kernel launcher's error, an `hccl::Error`),
    /// carried whole where this crate's [`Error`] is expected, for example by `?` inside a
    /// [`Stream::scope`](crate::Stream::scope) closure. Shown as the error itself;
    /// [`Error::downcast_ref`] gives it back, and `hccl` turns its own errors carried this way
    /// back into themselves.
    #[error(transparent)]
    Layered(Arc<dyn std::error::Error + Send + Sync + 'static>),
}

/// Error types that convert into this crate's [`Error`] and that crates with an error type of
/// their own accept with `?` (`hccl::Error` has `From<E>` for every such `E`): this crate's
/// [`Error`] and the errors of kernel launchers (`ascendc-build`'s generated `KernelError`,
/// `ascendc_kernels::KernelError`).
///
/// A crate whose error converts into [`Error`] implements it to join in:
///
/// ```
/// #[derive(Debug)]
/// struct MyError;
/// impl std::fmt::Display for MyError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("my error")
///     }
/// }
/// impl std::error::Error for MyError {}
/// impl From<MyError> for ascendcl::Error {
///     fn from(e: MyError) -> Self {
///         ascendcl::Error::layered(e)
///     }
/// }
/// impl ascendcl::IntoAclError for MyError {}
///
/// let e: ascendcl::Error = MyError.into();
/// assert!(e.downcast_ref::<MyError>().is_some());
/// assert_eq!(e.to_string(), "my error");
/// ```
pub trait IntoAclError: Into<Error> {}

impl IntoAclError for Error {}

/// A stream id, or `unknown`.
struct OptId(Option<i32>);

impl fmt::Display for OptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => id.fmt(f),
            None => f.write_str("unknown"),
        }
    }
}

/// The runtime's message as [`Error::Acl`] shows it: without what the error already says. A
/// line that starts with `[source] <api>:` for the failing function, or ends with
/// `(<name> <code>)` / `(<name>, <code>)` for the error's own code, loses those parts; several
/// lines are joined with `; `. [`Error::runtime_message`] keeps the text as the runtime gave it.
struct Msg<'a> {
    message: &'a Option<String>,
    api: &'a str,
    name: Option<&'a str>,
    code: i32,
}

impl Msg<'_> {
    fn tidy<'m>(&self, line: &'m str) -> &'m str {
        let mut l = line.trim();
        if let Some(rest) = l.strip_prefix('[')
            && let Some((_, after)) = rest.split_once("] ")
            && let Some(after) = after.strip_prefix(self.api)
            && let Some(after) = after.strip_prefix(':')
        {
            l = after.trim_start();
        }
        if let Some(name) = self.name {
            for suffix in [
                format!("({name} {})", self.code),
                format!("({name}, {})", self.code),
            ] {
                if let Some(rest) = l.strip_suffix(suffix.as_str()) {
                    l = rest.trim_end();
                }
            }
        }
        l
    }
}

impl fmt::Display for Msg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(m) = self.message else {
            return Ok(());
        };
        let mut first = true;
        for line in m.lines().map(|l| self.tidy(l)).filter(|l| !l.is_empty()) {
            f.write_str(if first { ": " } else { "; " })?;
            f.write_str(line)?;
            first = false;
        }
        Ok(())
    }
}

impl Error {
    /// The `aclError` of a runtime failure ([`AclError::FEATURE_NOT_SUPPORT`] for a missing
    /// symbol); `None` for failures that are not runtime codes. Compare with the named constants:
    ///
    /// ```
    /// # use ascendcl::{AclError, Error};
    /// # fn alloc() -> ascendcl::Result<()> {
    /// #     Err(Error::Acl { api: "aclrtMalloc", code: 207001, name: None, message: None })
    /// # }
    /// match alloc() {
    ///     Err(e) if e.code() == Some(AclError::MEMORY_ALLOCATION) => { /* free some memory */ }
    ///     other => other?,
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn code(&self) -> Option<AclError> {
        match self {
            Error::Acl { code, .. } => Some(AclError(*code)),
            Error::MissingSymbol { .. } | Error::NotSupported { .. } => {
                Some(AclError::FEATURE_NOT_SUPPORT)
            }
            Error::OnStream { source, .. } => source.code(),
            _ => None,
        }
    }

    /// The failure itself: for [`Error::OnStream`], the error on that stream; any other error
    /// unchanged.
    pub fn on_stream_source(&self) -> &Error {
        match self {
            Error::OnStream { source, .. } => source.on_stream_source(),
            other => other,
        }
    }

    /// Whether the runtime said that the operation is not supported here: [`Error::NotSupported`],
    /// a function the backend lacks ([`Error::MissingSymbol`]), or any call that returned
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000).
    pub fn is_not_supported(&self) -> bool {
        self.code() == Some(AclError::FEATURE_NOT_SUPPORT)
    }

    /// The same failure as [`Error::NotSupported`] when the runtime said the operation is not
    /// supported ([`Error::is_not_supported`]); any other error unchanged.
    pub(crate) fn into_not_supported(self) -> Error {
        match self {
            Error::Acl {
                api, code, message, ..
            } if AclError(code) == AclError::FEATURE_NOT_SUPPORT => {
                Error::NotSupported { api, message }
            }
            Error::MissingSymbol { api, .. } => Error::NotSupported { api, message: None },
            other => other,
        }
    }

    /// The symbolic name of [`Error::code`], e.g. `ACL_ERROR_RT_CONTEXT_NULL`.
    pub fn code_name(&self) -> Option<&'static str> {
        self.code().and_then(AclError::name)
    }

    /// The runtime's message (`aclGetRecentErrMsg`) captured with the failure.
    pub fn runtime_message(&self) -> Option<&str> {
        match self {
            Error::Acl { message, .. } => message.as_deref(),
            Error::OnStream { source, .. } => source.runtime_message(),
            _ => None,
        }
    }

    /// The C function (or Rust operation) that failed.
    pub fn api(&self) -> Option<&'static str> {
        match self {
            Error::Acl { api, .. }
            | Error::MissingSymbol { api, .. }
            | Error::NotSupported { api, .. }
            | Error::Argument { api, .. }
            | Error::Shared { api, .. }
            | Error::StreamNotExclusive { api, .. } => Some(api),
            Error::OnStream { source, .. } => source.api(),
            _ => None,
        }
    }

    /// `e` carried whole as [`Error::Layered`].
    pub fn layered(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Layered(Arc::new(e))
    }

    /// The error of another crate carried as [`Error::Layered`] (also on one stream of a scope,
    /// [`Error::OnStream`]), when it is a `T`.
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        match self.on_stream_source() {
            Error::Layered(e) => e.downcast_ref::<T>(),
            _ => None,
        }
    }

    pub(crate) fn argument(api: &'static str, reason: impl Into<Cow<'static, str>>) -> Self {
        Error::Argument {
            api,
            reason: reason.into(),
        }
    }
}

/// The symbolic name of an `aclError`, from every error table of the AscendCL headers
/// (`ACL_ERROR_*`, `ACL_ERROR_RT_*`, `ACL_ERROR_GE_*`, ...). `0` is `ACL_SUCCESS`. The same as
/// [`AclError::name`].
pub fn error_name(code: i32) -> Option<&'static str> {
    AclError(code).name()
}

/// The numeric code of a symbolic error name (the inverse of [`error_name`]; see also
/// [`AclError::from_name`]).
pub fn error_code(name: &str) -> Option<i32> {
    AclError::from_name(name).map(AclError::code)
}

/// Every code of the headers' error tables with its symbolic name, sorted by code (the same as
/// [`AclError::all`]).
pub fn error_codes() -> &'static [(AclError, &'static str)] {
    AclError::all()
}

/// Turns a status into a `Result`. The success path is one compare; the failure path (cold) reads
/// the missing-symbol record and `aclGetRecentErrMsg` on this thread.
#[inline(always)]
pub(crate) fn check(api: &'static str, code: sys::aclError) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(failure(api, code))
    }
}

#[cold]
#[inline(never)]
pub(crate) fn failure(api: &'static str, code: sys::aclError) -> Error {
    let e = if code == sys::FEATURE_NOT_SUPPORT
        && let Some(symbol) = sys::take_missing_symbol()
    {
        Error::MissingSymbol { api, symbol }
    } else {
        Error::Acl {
            api,
            code,
            name: error_name(code),
            message: recent_err_msg(),
        }
    };
    crate::trace::event!(WARN, api, code, error = %e, "runtime call failed");
    e
}

/// `aclGetRecentErrMsg`, copied out; `None` when empty or when no backend is installed. Read on
/// the table directly: the checked layer builds its errors with it.
pub(crate) fn recent_err_msg() -> Option<String> {
    // An error built before a backend was installed has no message.
    let api = sys::try_api()?;
    // SAFETY: no arguments.
    let p = unsafe { (api.aclGetRecentErrMsg)() };
    // A backend without aclGetRecentErrMsg answers NULL through a stub that records the symbol
    // as missing: drop that record so it is not blamed on a later failure.
    let _ = sys::take_missing_symbol();
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a NUL-terminated string owned by the runtime's thread-local storage,
    // valid until the next call on this thread; copied before any other call.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .trim()
        .to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name lookups agree with the generated table of `ascendcl-sys` (whose own tests check
    /// it against the bindings' constants).
    #[test]
    fn lookups_agree_with_the_typed_codes() {
        assert_eq!(error_name(0), Some("ACL_SUCCESS"));
        assert_eq!(
            error_name(AclError::PARAM_INVALID.code()),
            Some("ACL_ERROR_RT_PARAM_INVALID")
        );
        assert_eq!(error_code("ACL_ERROR_REPEAT_INITIALIZE"), Some(100002));
        assert_eq!(error_code("ACL_ERROR"), None);
        assert_eq!(error_codes().len(), AclError::all().len());
        for &(code, name) in error_codes() {
            assert_eq!(error_name(code.code()), Some(name));
        }
    }

    #[test]
    fn display_format() {
        let e = Error::Acl {
            api: "aclrtMalloc",
            code: AclError::MEMORY_ALLOCATION.code(),
            name: error_name(AclError::MEMORY_ALLOCATION.code()),
            message: Some("out of memory".into()),
        };
        assert_eq!(
            e.to_string(),
            "aclrtMalloc failed: ACL_ERROR_RT_MEMORY_ALLOCATION (207001): out of memory"
        );
        assert_eq!(e.code_name(), Some("ACL_ERROR_RT_MEMORY_ALLOCATION"));
        assert_eq!(error_code("ACL_ERROR_RT_MEMORY_ALLOCATION"), Some(207001));
        let e = Error::Acl {
            api: "aclrtFree",
            code: 1,
            name: None,
            message: None,
        };
        assert_eq!(e.to_string(), "aclrtFree failed: unknown aclError (1)");
    }

    #[test]
    fn display_does_not_repeat_the_function_or_the_code() {
        let e = |message: &str| Error::Acl {
            api: "aclrtSetDevice",
            code: AclError::INVALID_DEVICEID.code(),
            name: error_name(AclError::INVALID_DEVICEID.code()),
            message: Some(message.into()),
        };
        let shown = e(
            "[ascendcl-emu] aclrtSetDevice: device id 99 is outside [0, 2) \
                       (ACL_ERROR_RT_INVALID_DEVICEID 107001)",
        )
        .to_string();
        assert_eq!(
            shown,
            "aclrtSetDevice failed: ACL_ERROR_RT_INVALID_DEVICEID (107001): device id 99 is \
             outside [0, 2)"
        );
        assert_eq!(shown.matches("107001").count(), 1, "{shown}");
        assert_eq!(shown.matches("aclrtSetDevice").count(), 1, "{shown}");
        // Other functions, other codes and the runtime's own wording are kept; lines are joined.
        assert_eq!(
            e("EE1001: [aclrtMalloc] first\n[x] aclrtFree: second (ACL_ERROR_RT_MEMORY_FREE 207002)")
                .to_string(),
            "aclrtSetDevice failed: ACL_ERROR_RT_INVALID_DEVICEID (107001): EE1001: \
             [aclrtMalloc] first; [x] aclrtFree: second (ACL_ERROR_RT_MEMORY_FREE 207002)"
        );
        // The raw text stays available.
        assert!(
            e("[t] aclrtSetDevice: x (ACL_ERROR_RT_INVALID_DEVICEID 107001)")
                .runtime_message()
                .unwrap()
                .ends_with("107001)")
        );
    }
}
