//! Errors: HCCL's result codes as a Rust enum, and the one error type of the crate.

use std::borrow::Cow;
use std::ffi::CStr;
use std::fmt;

use hccl_sys as sys;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

macro_rules! result_codes {
    ($($variant:ident = $konst:ident, $doc:literal;)*) => {
        /// A failing `HcclResult`: one variant per code of `hccl_types.h`, and
        /// [`ResultCode::Other`] for codes newer libraries add.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ResultCode {
            $(#[doc = $doc] $variant,)*
            /// A code this version does not name (the raw value).
            Other(u32),
        }

        impl ResultCode {
            /// The code of a raw `HcclResult`; `None` for `HCCL_SUCCESS`.
            pub fn from_raw(raw: sys::HcclResult) -> Option<ResultCode> {
                match raw {
                    sys::HCCL_SUCCESS => None,
                    $(sys::$konst => Some(ResultCode::$variant),)*
                    sys::HcclResult(other) => Some(ResultCode::Other(other)),
                }
            }

            /// The raw `HcclResult`.
            pub fn raw(self) -> sys::HcclResult {
                match self {
                    $(ResultCode::$variant => sys::$konst,)*
                    ResultCode::Other(v) => sys::HcclResult(v),
                }
            }

            /// The header's name (`HCCL_E_PARA`), or `None` for [`ResultCode::Other`].
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $(ResultCode::$variant => Some(stringify!($konst)),)*
                    ResultCode::Other(_) => None,
                }
            }
        }
    };
}

result_codes! {
    Para = HCCL_E_PARA, "`HCCL_E_PARA`: an invalid argument.";
    Ptr = HCCL_E_PTR, "`HCCL_E_PTR`: a NULL pointer.";
    Memory = HCCL_E_MEMORY, "`HCCL_E_MEMORY`: memory error.";
    Internal = HCCL_E_INTERNAL, "`HCCL_E_INTERNAL`: internal error (also an invalid rank table).";
    NotSupport = HCCL_E_NOT_SUPPORT, "`HCCL_E_NOT_SUPPORT`: not supported (type and operation pair, missing function).";
    NotFound = HCCL_E_NOT_FOUND, "`HCCL_E_NOT_FOUND`: not found.";
    Unavail = HCCL_E_UNAVAIL, "`HCCL_E_UNAVAIL`: resource unavailable.";
    Syscall = HCCL_E_SYSCALL, "`HCCL_E_SYSCALL`: a system call failed.";
    Timeout = HCCL_E_TIMEOUT, "`HCCL_E_TIMEOUT`: timed out (rendezvous or execution).";
    OpenFileFailure = HCCL_E_OPEN_FILE_FAILURE, "`HCCL_E_OPEN_FILE_FAILURE`: a file could not be opened.";
    TcpConnect = HCCL_E_TCP_CONNECT, "`HCCL_E_TCP_CONNECT`: TCP connection failed.";
    RoceConnect = HCCL_E_ROCE_CONNECT, "`HCCL_E_ROCE_CONNECT`: RoCE connection failed.";
    TcpTransfer = HCCL_E_TCP_TRANSFER, "`HCCL_E_TCP_TRANSFER`: TCP transfer failed.";
    RoceTransfer = HCCL_E_ROCE_TRANSFER, "`HCCL_E_ROCE_TRANSFER`: RoCE transfer failed.";
    Runtime = HCCL_E_RUNTIME, "`HCCL_E_RUNTIME`: a runtime call failed (no current device, for example).";
    Drv = HCCL_E_DRV, "`HCCL_E_DRV`: a driver call failed.";
    Profiling = HCCL_E_PROFILING, "`HCCL_E_PROFILING`: profiling error.";
    Cce = HCCL_E_CCE, "`HCCL_E_CCE`: CCE error.";
    Network = HCCL_E_NETWORK, "`HCCL_E_NETWORK`: network error.";
    Again = HCCL_E_AGAIN, "`HCCL_E_AGAIN`: try again (destroy while operations are in flight).";
    Remote = HCCL_E_REMOTE, "`HCCL_E_REMOTE`: error on a remote rank.";
    Suspending = HCCL_E_SUSPENDING, "`HCCL_E_SUSPENDING`: the communicator is suspended.";
    OpretryFail = HCCL_E_OPRETRY_FAIL, "`HCCL_E_OPRETRY_FAIL`: operation retry failed.";
    Oom = HCCL_E_OOM, "`HCCL_E_OOM`: out of memory.";
    Reserved = HCCL_E_RESERVED, "`HCCL_E_RESERVED`: the reserved last code.";
}

impl fmt::Display for ResultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.raw().0),
            None => write!(f, "unknown HcclResult ({})", self.raw().0),
        }
    }
}

/// Every failure this crate reports.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An HCCL call returned a failing `HcclResult`.
    #[error("{api} failed: {code}{}{}", opt(description), opt(message))]
    Hccl {
        /// The C function, e.g. `HcclAllReduce`.
        api: &'static str,
        /// The code.
        code: ResultCode,
        /// What `HcclGetErrorString` says about the code.
        description: Option<String>,
        /// What `aclGetRecentErrMsg` said on the failing thread right after the failure.
        message: Option<String>,
    },
    /// A runtime (ACL) call failed, including a stream synchronisation that reports a
    /// collective that failed on the device. Every [`ascendcl::IntoAclError`] (an
    /// [`ascendcl::Error`], a kernel launcher's error) converts into it with `?`.
    #[error(transparent)]
    Acl(ascendcl::Error),
    /// An argument rejected in Rust before any HCCL call.
    #[error("{api}: invalid argument: {reason}")]
    Argument {
        /// The operation that rejected it.
        api: &'static str,
        /// Why.
        reason: Cow<'static, str>,
    },
    /// No HCCL library could be loaded for the CANN runtime.
    #[error(transparent)]
    Load(hccl_sys::LoadError),
    /// The HCCL backend does not match the ACL runtime's (or there is no runtime yet).
    #[error("HCCL backend: {0}")]
    Backend(String),
}

/// `?` on an [`ascendcl::Error`] or a kernel launcher's error (any [`ascendcl::IntoAclError`])
/// in code that returns this crate's [`Result`]: it becomes [`Error::Acl`], except an
/// [`Error`] of this crate that travelled as [`ascendcl::Error::Layered`], which comes back as
/// itself.
impl<E: ascendcl::IntoAclError> From<E> for Error {
    fn from(e: E) -> Self {
        let e: ascendcl::Error = e.into();
        match e.downcast_ref::<Error>() {
            Some(own) => own.clone(),
            None => Error::Acl(e),
        }
    }
}

/// `?` on this crate's errors in code that returns [`ascendcl::Result`] (a
/// [`Stream::scope`](ascendcl::Stream::scope) closure, for example): a runtime failure
/// ([`Error::Acl`]) is the runtime's error again, any other is carried whole as
/// [`ascendcl::Error::Layered`] (and turns back into itself with `?` into [`Error`]).
impl From<Error> for ascendcl::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Acl(e) => e,
            other => ascendcl::Error::layered(other),
        }
    }
}

fn opt(s: &Option<String>) -> String {
    match s.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => format!(": {t}"),
        _ => String::new(),
    }
}

impl Error {
    /// The HCCL code, for [`Error::Hccl`].
    pub fn code(&self) -> Option<ResultCode> {
        match self {
            Error::Hccl { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the error was raised in Rust before any HCCL call.
    pub fn is_argument(&self) -> bool {
        matches!(self, Error::Argument { .. })
    }

    pub(crate) fn argument(api: &'static str, reason: impl Into<Cow<'static, str>>) -> Error {
        Error::Argument {
            api,
            reason: reason.into(),
        }
    }
}

/// `HcclGetErrorString(code)`, when the library answers with a string.
pub fn error_string(code: ResultCode) -> Option<String> {
    let api = hccl_sys::try_api()?;
    // SAFETY: the function takes a code by value and returns NULL or a static C string.
    let p = unsafe { (api.HcclGetErrorString)(code.raw()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL: a NUL-terminated string the library keeps alive.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The runtime's last error message on this thread (`aclGetRecentErrMsg`), if any.
fn recent_message() -> Option<String> {
    let api = ascendcl::sys::try_api()?;
    // SAFETY: no arguments; returns NULL or a thread-local C string valid until the next call.
    let p = unsafe { (api.aclGetRecentErrMsg)() };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL: a NUL-terminated string, copied at once.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    (!s.trim().is_empty()).then_some(s)
}

/// Turns an `HcclResult` into `Ok` or [`Error::Hccl`].
pub(crate) fn check(api: &'static str, raw: sys::HcclResult) -> Result<()> {
    match ResultCode::from_raw(raw) {
        None => Ok(()),
        Some(code) => {
            let e = Error::Hccl {
                api,
                code,
                description: error_string(code),
                message: recent_message(),
            };
            crate::trace::event!(WARN, api, code = raw.0, error = %e, "HCCL call failed");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn returns_acl(e: Error) -> ascendcl::Result<()> {
        Err(e)?;
        Ok(())
    }

    fn returns_hccl(r: ascendcl::Result<()>) -> Result<()> {
        r?;
        Ok(())
    }

    /// `?` both ways: an HCCL failure crosses code that returns `ascendcl::Result` and comes
    /// back as itself; a runtime failure stays the runtime's error.
    #[test]
    fn question_mark_both_ways() {
        let own = Error::Hccl {
            api: "HcclAllReduce",
            code: ResultCode::Para,
            description: None,
            message: None,
        };
        let acl = returns_acl(own.clone()).unwrap_err();
        assert_eq!(acl.to_string(), own.to_string());
        assert!(acl.downcast_ref::<Error>().is_some());
        let back = returns_hccl(Err(acl)).unwrap_err();
        assert_eq!(back.code(), Some(ResultCode::Para));

        let rt = ascendcl::Error::HostFnDiscarded;
        let as_hccl = returns_hccl(Err(rt)).unwrap_err();
        assert!(matches!(
            as_hccl,
            Error::Acl(ascendcl::Error::HostFnDiscarded)
        ));
        let again = returns_acl(as_hccl).unwrap_err();
        assert!(matches!(again, ascendcl::Error::HostFnDiscarded));
    }
}
