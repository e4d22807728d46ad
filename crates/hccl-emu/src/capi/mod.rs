//! The C functions of `hccl.h`: thin shims that catch panics, turn results into `HcclResult`
//! codes and leave a message for `aclGetRecentErrMsg` when a call fails.
//!
//! They are plain `extern "C"` functions with Rust (mangled) symbol names, so a binary that
//! embeds the emulator never defines `Hccl*` symbols; the `ascendcl-emu-capi` crate exports
//! them under their real names.
#![allow(non_snake_case)]

use crate::error::*;
use ascendcl_sys::aclrtStream;
use hccl_sys::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs one API call: panic containment and error recording.
#[inline(always)]
fn guard(api: &'static str, f: impl FnOnce() -> R) -> HcclResult {
    let run = move || match f() {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => record(api, &e),
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| panicked(api))
}

#[cold]
fn panicked(api: &str) -> HcclResult {
    catch_unwind(|| {
        record(
            api,
            &Fail {
                code: HCCL_E_INTERNAL,
                msg: "internal error: the emulator panicked (please report it)".to_string(),
            },
        )
    })
    .unwrap_or(HCCL_E_INTERNAL)
}

/// An output pointer checked for NULL.
struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` is NULL or valid for one write of `T`.
    unsafe fn new(p: *mut T, name: &str) -> R<Out<T>> {
        if p.is_null() {
            return fail(HCCL_E_PTR, format!("{name} is NULL"));
        }
        Ok(Out(p))
    }

    fn set(self, v: T) {
        // SAFETY: `new`'s contract: non-NULL and valid for one write.
        unsafe { self.0.write(v) }
    }
}

/// E_PTR when `p` is NULL.
fn non_null<T>(p: *const T, name: &str) -> R {
    if p.is_null() {
        return fail(HCCL_E_PTR, format!("{name} is NULL"));
    }
    Ok(())
}

macro_rules! hccl {
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        ///
        /// # Safety
        /// The C function's contract: every pointer argument is NULL or valid for the access the
        /// function makes, and handles were returned by this library or the runtime.
        pub unsafe extern "C" fn $name($($a: $t),*) -> HcclResult {
            guard(stringify!($name), move || -> R { $body })
        }
    };
}

mod coll;
mod comm;
mod group;
mod p2p;

pub use coll::*;
pub use comm::*;
pub use group::*;
pub use p2p::*;
