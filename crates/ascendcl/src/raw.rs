//! The checked raw layer: one function per C function of the runtime table ([`sys::AclApi`]),
//! generated from the same list, with the C name and the C arguments, whose status is a
//! [`Result`].
//!
//! Use it where the safe types do not reach (the functions `docs/api-map.md` lists as not
//! wrapped) or next to them with their raw handles ([`Stream::as_raw`](crate::Stream::as_raw),
//! [`DeviceBuffer::as_mut_ptr`](crate::DeviceBuffer::as_mut_ptr), ...). [`NAMES`] lists the
//! functions, in table order; it equals [`sys::AclApi::NAMES`].
//!
//! ```
//! use ascendcl::{AclError, Runtime, raw};
//!
//! let rt = Runtime::new()?; // installs a backend and calls aclInit
//! let device = rt.device(0)?;
//! let mut count = 0u32;
//! // SAFETY: a valid out-pointer.
//! unsafe { raw::aclrtGetDeviceCount(&mut count) }?;
//! assert!(count >= 1);
//! // A failure names the function and carries the code, its name and the runtime's message.
//! // SAFETY: a plain value; the runtime refuses it before anything changes.
//! let e = unsafe { raw::aclrtSetDevice(i32::MAX) }.unwrap_err();
//! assert_eq!(e.api(), Some("aclrtSetDevice"));
//! assert_eq!(e.code(), Some(AclError::INVALID_DEVICEID));
//! # drop(device);
//! # Ok::<(), ascendcl::Error>(())
//! ```
//!
//! # Return values
//!
//! * A function that returns `aclError` returns [`Result<()>`](crate::Result): `Ok` for
//!   `ACL_SUCCESS`, otherwise the same [`Error`](crate::Error) the safe types report:
//!   [`Error::Acl`](crate::Error::Acl) with the C function's name, the code and the text of
//!   `aclGetRecentErrMsg` read on the calling thread right after the failure, or
//!   [`Error::MissingSymbol`](crate::Error::MissingSymbol) when the backend lacks the function.
//!   The success path costs one compare more than the bare table call. Out-parameters are the
//!   caller's: they hold what the runtime wrote only when the call returned `Ok`.
//! * [`aclrtGetLastError`] and [`aclrtPeekAtLastError`] return the thread's last error as an
//!   [`AclError`] value: reporting a code is their result, not their failure.
//! * Every other function returns its C value unchanged (pointers, handles, sizes, `float`
//!   conversions). The C documentation says what a NULL or a zero means; a function the backend
//!   lacks returns NULL or zero and leaves its name for [`sys::take_missing_symbol`].
//!
//! # Safety rule
//!
//! A function is `unsafe` unless both of these hold, so that no arguments make it undefined
//! behaviour and it cannot pull a resource from under a safe handle of this crate:
//!
//! * every argument is a plain value — an integer, a `float` or an enum value; no pointer, no
//!   runtime handle (handles are pointers), no callback, no struct;
//! * it does not end, replace or take over anything a safe handle owns or relies on: the
//!   runtime (`aclFinalize`), a device (`aclrtResetDevice[Force]`), the thread's current device
//!   or context (`aclrtSetDevice`, `aclrtSetGroup`, `aclrtSetTsDevice`), peer access
//!   (`aclrtDeviceDisablePeerAccess`), queued work (`aclrtDeviceTaskAbort`), the processing of
//!   callbacks and host functions (`aclrtProcessReport`, `aclrtProcessHostFunc`), device limits
//!   and system options whose effect on live resources is not documented
//!   (`aclrtSetDeviceResLimit`, `aclrtSetSysParamOpt`, ...).
//!
//! 17 functions pass both tests and are safe `fn`s: [`aclDataTypeSize`], [`aclFloat16ToFloat`],
//! [`aclFloatToFloat16`], [`aclGetRecentErrMsg`], [`aclrtGetSocName`], [`aclrtGetLastError`],
//! [`aclrtPeekAtLastError`], [`aclrtSynchronizeDevice`], [`aclrtSynchronizeDeviceWithTimeout`],
//! [`aclrtSetOpWaitTimeout`], [`aclrtSetOpExecuteTimeOut`], [`aclrtSetOpExecuteTimeOutWithMs`],
//! [`aclrtSetDeviceSatMode`], [`aclrtDeviceEnablePeerAccess`], [`aclrtCreateGroupInfo`],
//! [`aclrtCreateStreamConfigHandle`], [`aclrtAllocatorCreateDesc`] (the last three return a new
//! handle that the caller owns: dropping it leaks, which is not undefined behaviour).
//!
//! Every other function is an `unsafe fn`. Its contract is the C function's — pointers valid
//! for the sizes the C documentation states, live handles of the right kind, buffers alive and
//! untouched until asynchronous work on them completes — plus this crate's: a call must not
//! release, reset or repurpose a resource that a safe handle still owns (freeing a
//! [`DeviceBuffer`](crate::DeviceBuffer)'s memory, destroying a [`Stream`](crate::Stream)'s
//! stream, resetting a [`Device`](crate::Device)), and a call that changes the thread's current
//! device or context (`aclrtSetDevice`, `aclrtSetCurrentContext`, ...) must restore it before
//! the next call through a safe type, which remembers what it made current. A function new in
//! the headers is `unsafe` until it is added to the safe list.
//!
//! # Panics
//!
//! Every function panics when no backend is installed: create a [`Runtime`](crate::Runtime) or
//! call [`install_backend`](crate::install_backend) first.
#![allow(non_snake_case, clippy::too_many_arguments)]

// The C types of the signatures, looked up where the list expands.
use ascendcl_sys::*;
// Named explicitly: these win over anything of the same name in the glob above.
use crate::error::{Result, check};
use ascendcl_sys as sys;

/// Turns the function list of `ascendcl_sys::acl_function_list!` into [`NAMES`] and one
/// [`raw_function!`] per function. A return type is written as an optional `*const`/`*mut` and
/// a path of identifiers, which covers every C return type bindgen writes for these headers; a
/// new shape fails to compile here rather than being wrapped wrongly.
macro_rules! raw_functions {
    (unsafe extern "C" {
        $( pub fn $name:ident $args:tt $(-> $(* $ptr:ident)? $(::)? $($ret:ident)::+)? ; )*
    }) => {
        /// The name of every function of this module, in the order of [`sys::AclApi::NAMES`].
        pub const NAMES: &[&str] = &[$(stringify!($name)),*];

        $( raw_function! { $name $args [$($($ptr)?)?] [$($($ret)::+)?] } )*
    };
}

/// One wrapper. The first rules pick the functions that are safe to call (see the module docs);
/// a name not listed is `unsafe`. Then the return type chooses the body: `aclError` is checked,
/// except for the two functions whose result is an error code; anything else passes through.
macro_rules! raw_function {
    (aclDataTypeSize $($r:tt)*) => {
        raw_function! { @safety [] aclDataTypeSize $($r)* }
    };
    (aclFloat16ToFloat $($r:tt)*) => {
        raw_function! { @safety [] aclFloat16ToFloat $($r)* }
    };
    (aclFloatToFloat16 $($r:tt)*) => {
        raw_function! { @safety [] aclFloatToFloat16 $($r)* }
    };
    (aclGetRecentErrMsg $($r:tt)*) => {
        raw_function! { @safety [] aclGetRecentErrMsg $($r)* }
    };
    (aclrtGetSocName $($r:tt)*) => {
        raw_function! { @safety [] aclrtGetSocName $($r)* }
    };
    (aclrtGetLastError $($r:tt)*) => {
        raw_function! { @safety [] aclrtGetLastError $($r)* }
    };
    (aclrtPeekAtLastError $($r:tt)*) => {
        raw_function! { @safety [] aclrtPeekAtLastError $($r)* }
    };
    (aclrtSynchronizeDevice $($r:tt)*) => {
        raw_function! { @safety [] aclrtSynchronizeDevice $($r)* }
    };
    (aclrtSynchronizeDeviceWithTimeout $($r:tt)*) => {
        raw_function! { @safety [] aclrtSynchronizeDeviceWithTimeout $($r)* }
    };
    (aclrtSetOpWaitTimeout $($r:tt)*) => {
        raw_function! { @safety [] aclrtSetOpWaitTimeout $($r)* }
    };
    (aclrtSetOpExecuteTimeOut $($r:tt)*) => {
        raw_function! { @safety [] aclrtSetOpExecuteTimeOut $($r)* }
    };
    (aclrtSetOpExecuteTimeOutWithMs $($r:tt)*) => {
        raw_function! { @safety [] aclrtSetOpExecuteTimeOutWithMs $($r)* }
    };
    (aclrtSetDeviceSatMode $($r:tt)*) => {
        raw_function! { @safety [] aclrtSetDeviceSatMode $($r)* }
    };
    (aclrtDeviceEnablePeerAccess $($r:tt)*) => {
        raw_function! { @safety [] aclrtDeviceEnablePeerAccess $($r)* }
    };
    (aclrtCreateGroupInfo $($r:tt)*) => {
        raw_function! { @safety [] aclrtCreateGroupInfo $($r)* }
    };
    (aclrtCreateStreamConfigHandle $($r:tt)*) => {
        raw_function! { @safety [] aclrtCreateStreamConfigHandle $($r)* }
    };
    (aclrtAllocatorCreateDesc $($r:tt)*) => {
        raw_function! { @safety [] aclrtAllocatorCreateDesc $($r)* }
    };
    ($name:ident $($rest:tt)*) => { raw_function! { @safety [unsafe] $name $($rest)* } };

    // The thread's last error is the result of these two.
    (@safety [$($unsafe:ident)?] aclrtGetLastError $args:tt [] [aclError]) => {
        raw_function! { @last_error [$($unsafe)?] aclrtGetLastError $args }
    };
    (@safety [$($unsafe:ident)?] aclrtPeekAtLastError $args:tt [] [aclError]) => {
        raw_function! { @last_error [$($unsafe)?] aclrtPeekAtLastError $args }
    };
    (@safety [$($unsafe:ident)?] $name:ident ($($arg:ident : $ty:ty),* $(,)?) [] [aclError]) => {
        #[doc = concat!(
            "[`", stringify!($name), "`](sys::AclApi::", stringify!($name), "), checked: `Ok` ",
            "for `ACL_SUCCESS`, else the [`Error`](crate::Error) that names the function."
        )]
        ///
        /// # Errors
        /// [`Error::Acl`](crate::Error::Acl) with the code and `aclGetRecentErrMsg`;
        /// [`Error::MissingSymbol`](crate::Error::MissingSymbol) when the backend lacks the
        /// function.
        $( #[doc = raw_function!(@safety_doc $unsafe)] )?
        #[inline(always)]
        pub $($unsafe)? fn $name($($arg: $ty),*) -> Result<()> {
            // SAFETY: an `unsafe fn`'s caller upholds the C contract (module docs); a safe one
            // takes plain values only, which the runtime validates.
            check(stringify!($name), unsafe { (sys::api().$name)($($arg),*) })
        }
    };
    (@safety [$($unsafe:ident)?] $name:ident ($($arg:ident : $ty:ty),* $(,)?)
        [$($ptr:ident)?] [$($ret:ident)::*]) => {
        #[doc = concat!(
            "[`", stringify!($name), "`](sys::AclApi::", stringify!($name), "), its C result ",
            "returned unchanged (see the [module docs](self))."
        )]
        $( #[doc = raw_function!(@safety_doc $unsafe)] )?
        #[inline(always)]
        pub $($unsafe)? fn $name($($arg: $ty),*)
            -> raw_function!(@type [$($ptr)?] [$($ret)::*]) {
            // SAFETY: as for the checked functions above.
            unsafe { (sys::api().$name)($($arg),*) }
        }
    };
    (@last_error [$($unsafe:ident)?] $name:ident ($($arg:ident : $ty:ty),* $(,)?)) => {
        #[doc = concat!(
            "[`", stringify!($name), "`](sys::AclApi::", stringify!($name), "): the error code ",
            "it reports, as an [`AclError`] (`SUCCESS` when none)."
        )]
        $( #[doc = raw_function!(@safety_doc $unsafe)] )?
        #[inline(always)]
        pub $($unsafe)? fn $name($($arg: $ty),*) -> AclError {
            // SAFETY: plain value arguments, validated by the runtime.
            AclError(unsafe { (sys::api().$name)($($arg),*) })
        }
    };

    (@type [] []) => { () };
    (@type [] [$($ret:ident)::+]) => { $($ret)::+ };
    (@type [$ptr:ident] [$($ret:ident)::+]) => { *$ptr $($ret)::+ };
    (@safety_doc unsafe) => {
        "\n# Safety\nThe C function's contract and this crate's (see the [module docs](self)): \
         valid pointers, live handles, and no resource owned by a safe handle released or \
         repurposed."
    };
}

ascendcl_sys::acl_function_list!(raw_functions);

/// A C out-parameter type: plain data whose zero value is valid, so the slot can be initialised
/// before the call and read after it without `unsafe`.
pub(crate) trait OutParam: Copy {
    /// The value the slot holds before the call.
    const ZERO: Self;
}

macro_rules! out_param {
    ($($t:ty = $zero:expr),* $(,)?) => { $(impl OutParam for $t { const ZERO: Self = $zero; })* };
}
out_param!(
    u32 = 0,
    i32 = 0,
    u64 = 0,
    usize = 0,
    f32 = 0.0,
    *mut std::ffi::c_void = std::ptr::null_mut(),
    sys::aclrtPtrAttributes = sys::aclrtPtrAttributes {
        location: sys::aclrtMemLocation { id: 0, type_: 0 },
        pageSize: 0,
        rsv: [0; 4],
    },
);

/// Calls `call` (a checked function of this module) with a pointer to an out-parameter and
/// returns the value the runtime wrote, read only after the status check: the safe types'
/// `out(|p| unsafe { raw::aclrtMalloc(p, size, policy) })`.
#[inline]
pub(crate) fn out<T: OutParam>(call: impl FnOnce(*mut T) -> Result<()>) -> Result<T> {
    let mut slot = T::ZERO;
    call(&mut slot)?;
    Ok(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapped-function table of the crate docs (generated by `cargo xtask codegen`, which
    /// also checks it against every function the crate calls through this module) names real
    /// functions of the bindings, once each.
    #[test]
    fn the_api_table_names_functions_of_the_bindings_once() {
        let table: Vec<&str> = include_str!("api_table.md")
            .lines()
            .skip(2)
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        let mapped: std::collections::BTreeSet<&str> = table.iter().copied().collect();
        assert_eq!(mapped.len(), table.len(), "a function is listed twice");
        assert!(mapped.len() > 100, "{} functions", mapped.len());
        for name in &mapped {
            assert!(
                NAMES.contains(name),
                "{name} is not a function of the bindings"
            );
        }
    }

    #[test]
    fn one_wrapper_per_function_of_the_table() {
        assert_eq!(NAMES, sys::AclApi::NAMES);
        assert_eq!(NAMES.len(), 484);
    }

    /// The functions the module docs call safe are safe `fn`s (a misspelt rule would leave one
    /// `unsafe`, and the coercion to a safe function pointer would not compile), and return what
    /// the docs say.
    #[test]
    fn the_safe_functions_coerce_to_safe_fn_pointers() {
        let _: fn(aclDataType) -> usize = aclDataTypeSize;
        let _: fn(aclFloat16) -> f32 = aclFloat16ToFloat;
        let _: fn(f32) -> aclFloat16 = aclFloatToFloat16;
        let _: fn() -> *const std::os::raw::c_char = aclGetRecentErrMsg;
        let _: fn() -> *const std::os::raw::c_char = aclrtGetSocName;
        let _: fn(aclrtLastErrLevel) -> AclError = aclrtGetLastError;
        let _: fn(aclrtLastErrLevel) -> AclError = aclrtPeekAtLastError;
        let _: fn() -> Result<()> = aclrtSynchronizeDevice;
        let _: fn(i32) -> Result<()> = aclrtSynchronizeDeviceWithTimeout;
        let _: fn(u32) -> Result<()> = aclrtSetOpWaitTimeout;
        let _: fn(u32) -> Result<()> = aclrtSetOpExecuteTimeOut;
        let _: fn(u32) -> Result<()> = aclrtSetOpExecuteTimeOutWithMs;
        let _: fn(aclrtFloatOverflowMode) -> Result<()> = aclrtSetDeviceSatMode;
        let _: fn(i32, u32) -> Result<()> = aclrtDeviceEnablePeerAccess;
        let _: fn() -> *mut aclrtGroupInfo = aclrtCreateGroupInfo;
        let _: fn() -> *mut aclrtStreamConfigHandle = aclrtCreateStreamConfigHandle;
        let _: fn() -> aclrtAllocatorDesc = aclrtAllocatorCreateDesc;
        // And a few of the others, with their checked or passed-through results.
        let _: unsafe fn(*mut *mut std::ffi::c_void, usize, aclrtMemMallocPolicy) -> Result<()> =
            aclrtMalloc;
        let _: unsafe fn(i32) -> Result<()> = aclrtResetDevice;
        let _: unsafe fn() -> Result<()> = aclFinalize;
        let _: unsafe fn(*mut std::ffi::c_void, usize) -> *mut aclDataBuffer = aclCreateDataBuffer;
        let _: unsafe fn(*const aclDataBuffer) -> u32 = aclGetDataBufferSize;
        // Only `Error` is the error type here.
        let _: fn(crate::Error) = drop;
    }
}
