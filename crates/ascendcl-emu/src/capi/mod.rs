//! The C functions: thin shims that check pointer arguments, catch panics and turn results into
//! `aclError` codes (recording the message for `aclGetRecentErrMsg`).
//!
//! They are plain `extern "C"` functions with Rust (mangled) symbol names: a binary that embeds
//! the emulator defines no `acl*` symbol, so it can never interpose on a real runtime library.
//! The `ascendcl-emu-capi` crate exports them under the real names as a shared library.
#![allow(non_snake_case)]

use crate::base::config;
use crate::base::error::*;
use crate::base::faults;
use crate::memory::copy::{BatchAttr, Copy2d};
use crate::memory::{Kind, Loc, Sizing};
use ascendcl_sys::*;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

/// Runs one API call: fault injection, panic containment, error recording.
#[inline(always)]
fn guard(api: &'static str, f: impl FnOnce() -> R) -> aclError {
    // Everything, fault injection and error recording included, runs inside catch_unwind: no
    // panic may unwind into C.
    let run = move || {
        if let Some(code) = faults::check(api) {
            return injected(api, code);
        }
        finish(api, f())
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| panicked(api, p.as_ref()))
}

#[cold]
fn panicked(api: &str, payload: &(dyn std::any::Any + Send)) -> aclError {
    let why = panic_message(payload);
    catch_unwind(AssertUnwindSafe(|| {
        record(
            api,
            Fail {
                code: RT_INTERNAL_ERROR,
                msg: format!("internal error: the emulator panicked (please report it): {why}"),
            },
        )
    }))
    .unwrap_or(RT_INTERNAL_ERROR)
}

#[cold]
fn injected(api: &str, code: aclError) -> aclError {
    record(
        api,
        Fail {
            code,
            msg: "injected fault (ASCENDCL_EMU_FAULTS / ascendcl_emu::inject_fault)".to_string(),
        },
    )
}

/// An output pointer checked for NULL.
struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` is NULL or valid for one write of `T`.
    unsafe fn new(p: *mut T, name: &str) -> R<Out<T>> {
        if p.is_null() {
            return fail(INVALID_PARAM, format!("{name} is NULL"));
        }
        Ok(Out(p))
    }

    fn set(self, v: T) {
        self.put(v);
    }

    /// Writes without consuming (for an output written more than once).
    fn put(&self, v: T) {
        // SAFETY: `new`'s contract: non-NULL and valid for writes.
        unsafe { self.0.write(v) }
    }
}

macro_rules! acl {
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        ///
        /// # Safety
        /// The C function's contract: every pointer argument is NULL or valid for the access the
        /// function makes, and handles were returned by this runtime.
        pub unsafe extern "C" fn $name($($a: $t),*) -> aclError {
            guard(stringify!($name), move || -> R { $body })
        }
    };
}

fn timeout_arg(timeout: i32) -> R<Option<Duration>> {
    match timeout {
        -1 => Ok(None),
        t if t < -1 => fail(
            RT_PARAM_INVALID,
            format!("timeout {t} is invalid (-1 waits forever, otherwise milliseconds)"),
        ),
        t => Ok(Some(Duration::from_millis(t as u64))),
    }
}

fn handle<T>(p: *mut T) -> usize {
    p as usize
}

fn as_ptr(h: usize) -> *mut c_void {
    h as *mut c_void
}

mod allocator;
mod builtin;
mod context;
mod copy;
mod data_buffer;
mod device;
mod event;
mod exception;
mod host;
mod ipc;
mod kernel;
mod label;
mod lifecycle;
mod limits;
mod managed;
mod memory;
mod model;
pub mod mstx;
pub mod operators;
mod profiling;
mod stream;
mod sync;
mod tdt_channel;
mod tdt_queue;
pub(crate) mod unsupported;
mod vmm;

pub use allocator::*;
pub use builtin::*;
pub use context::*;
pub use copy::*;
pub use data_buffer::*;
pub use device::*;
pub use event::*;
pub use exception::*;
pub use host::*;
pub use ipc::*;
pub use kernel::*;
pub use label::*;
pub use lifecycle::*;
pub use limits::*;
pub use managed::*;
pub use memory::*;
pub use model::*;
pub use profiling::*;
pub use stream::*;
pub use sync::*;
pub use tdt_channel::*;
pub use tdt_queue::*;
pub use vmm::*;
