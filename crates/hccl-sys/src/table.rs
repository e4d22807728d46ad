//! The function table ([`HcclApi`]) and the stubs that stand in for symbols a backend lacks.
//!
//! The table's definition is generated: `generated/functions.rs` invokes [`hccl_functions!`] with
//! every function bindgen found in `hccl.h`; the macro hands them to `ascendcl-sys`'s
//! `function_table!`, so `HcclApi` has the same shape as `AclApi`.

ascendcl_sys::missing_symbol_slot! {
    what: "HCCL ",
    not_supported: "`HCCL_E_NOT_SUPPORT`",
}

/// The value a missing function's stub returns, per C return type.
pub trait Unavailable {
    /// The return value of a stub: `HCCL_E_NOT_SUPPORT` for `HcclResult`, NULL for pointers,
    /// zero for `HcclGetCommConfigCapability`'s `uint32_t` ("no configuration field supported").
    fn unavailable() -> Self;
}

impl Unavailable for crate::HcclResult {
    fn unavailable() -> Self {
        crate::HCCL_E_NOT_SUPPORT
    }
}
impl Unavailable for u32 {
    fn unavailable() -> Self {
        0
    }
}
impl<T> Unavailable for *const T {
    fn unavailable() -> Self {
        std::ptr::null()
    }
}
impl<T> Unavailable for *mut T {
    fn unavailable() -> Self {
        std::ptr::null_mut()
    }
}

/// Builds [`HcclApi`], its stubs, its loader and (with `link`) its `extern` block from the list of
/// functions in `generated/functions.rs`.
#[doc(hidden)]
#[macro_export]
macro_rules! hccl_functions {
    ($($functions:tt)*) => {
        ::ascendcl_sys::function_table! {
            table: HcclApi,
            header: "hccl/hccl.h",
            library: "an HCCL library",
            not_supported: "`HCCL_E_NOT_SUPPORT`",
            unavailable: $crate::Unavailable,
            record: $crate::table::record_missing,
            functions: $($functions)*
        }

        /// Hands the list of HCCL functions to another macro: `hccl_function_list!(m)` expands
        /// to `m! { unsafe extern "C" { pub fn name(arg: Type, ..) -> Ret; .. } }`, the same
        /// list `HcclApi` is built from. Backends use it to generate what must cover every
        /// function (exported symbols) without a second list of names. The types must be in
        /// scope where `m` expands (`use hccl_sys::*; use ascendcl_sys::*`).
        #[doc(hidden)]
        #[macro_export]
        macro_rules! hccl_function_list {
            ($callback:ident) => {
                $callback! { $($functions)* }
            };
        }
    };
}

use crate::generated::*;
use ascendcl_sys::generated::*;
include!("generated/functions.rs");
