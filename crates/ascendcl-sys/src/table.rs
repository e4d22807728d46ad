//! The function table ([`AclApi`]) and the stubs that stand in for symbols a backend lacks.
//!
//! The table's definition is generated: `generated/functions.rs` invokes [`acl_functions!`] with
//! every runtime function bindgen found in the headers.

crate::missing_symbol_slot! {
    what: "",
    not_supported: "`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`",
}

/// The value a missing function's stub returns, per C return type.
pub trait Unavailable {
    /// The return value of a stub: 207000 for `aclError`, NULL for pointers, zero otherwise.
    fn unavailable() -> Self;
}

impl Unavailable for i32 {
    fn unavailable() -> Self {
        crate::FEATURE_NOT_SUPPORT
    }
}
impl Unavailable for () {
    fn unavailable() -> Self {}
}
impl Unavailable for u16 {
    fn unavailable() -> Self {
        0
    }
}
impl Unavailable for u32 {
    fn unavailable() -> Self {
        0
    }
}
impl Unavailable for u64 {
    fn unavailable() -> Self {
        0
    }
}
impl Unavailable for usize {
    fn unavailable() -> Self {
        0
    }
}
impl Unavailable for f32 {
    fn unavailable() -> Self {
        f32::NAN
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

/// Expands to the return type of a function, `()` when the declaration has none.
#[doc(hidden)]
#[macro_export]
macro_rules! __acl_ret {
    () => {
        ()
    };
    ($t:ty) => {
        $t
    };
}

/// Builds [`AclApi`], its stubs, its loader and (with `link`) its `extern` block from the list of
/// runtime functions in `generated/functions.rs`.
#[doc(hidden)]
#[macro_export]
macro_rules! acl_functions {
    ($($functions:tt)*) => {
        $crate::function_table! {
            table: AclApi,
            header: "acl/acl_rt.h",
            library: "an AscendCL runtime library",
            not_supported: "`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`",
            unavailable: $crate::Unavailable,
            record: $crate::table::record_missing,
            functions: $($functions)*
        }

        /// Hands the list of runtime functions to another macro: `acl_function_list!(m)`
        /// expands to `m! { unsafe extern "C" { pub fn name(arg: Type, ..) -> Ret; .. } }`,
        /// the same list `AclApi` is built from. Backends use it to generate what must cover
        /// every function (stubs, exported symbols) without a second list of names. The types
        /// must be in scope where `m` expands (`use ascendcl_sys::*`).
        #[doc(hidden)]
        #[macro_export]
        macro_rules! acl_function_list {
            ($callback:ident) => {
                $callback! { $($functions)* }
            };
        }
    };
}

/// Builds a function table from a list of C functions, for this crate and for the other `-sys`
/// crates of the workspace (`hccl-sys`), so that every table has the same shape.
///
/// Expands, in the invoking module, to: the table struct (`table`, a field per function named
/// after it, with its exact C signature); `NAMES`; `unresolved()`, a table of stubs that return
/// `unavailable`'s value and report their name to `record`; `from_library()`, the run-time
/// resolver; with the invoking crate's `link` feature, `linked()` and the `linked` module of
/// `extern` declarations. The signatures' types are looked up in the invoking module.
#[doc(hidden)]
#[macro_export]
macro_rules! function_table {
    (
        table: $Api:ident,
        header: $header:literal,
        library: $library:literal,
        not_supported: $not_supported:literal,
        unavailable: $Unavailable:path,
        record: $record:path,
        functions: unsafe extern "C" {
            $( pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
        }
    ) => {
        #[doc = concat!("Every function of `", $header, "`, as function pointers filled by a backend.")]
        ///
        /// Fields are named after the C functions and have their exact C signatures. Calling one is
        /// `unsafe`: the caller upholds the C function's contract.
        #[derive(Clone, Copy)]
        pub struct $Api {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                pub $name: unsafe extern "C" fn($($arg: $ty),*) $(-> $ret)?,
            )*
        }

        impl std::fmt::Debug for $Api {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($Api)).field("functions", &Self::NAMES.len()).finish()
            }
        }

        impl $Api {
            /// Names of every function in the table, in table order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            #[doc = concat!("A table in which every function is a stub that reports itself missing (",
                $not_supported, ", NULL or zero, see [`Unavailable`]).")]
            ///
            /// In-process backends start from this and fill the functions they implement.
            pub fn unresolved() -> Self {
                Self { $( $name: stubs::$name, )* }
            }

            /// Resolves every function from a loaded library. Symbols the library lacks keep their
            /// stubs and are returned by name.
            ///
            /// # Safety
            #[doc = concat!("`lib` must be ", $library, " whose exported functions have the")]
            /// signatures of these headers, and it must stay loaded while the table is used.
            pub unsafe fn from_library(lib: &libloading::Library) -> (Self, Vec<&'static str>) {
                let mut api = Self::unresolved();
                let mut missing = Vec::new();
                $(
                    // SAFETY: the caller guarantees the symbol has the declared C signature.
                    match unsafe {
                        lib.get::<unsafe extern "C" fn($($ty),*) $(-> $ret)?>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    } {
                        Ok(sym) => api.$name = *sym,
                        Err(_) => missing.push(stringify!($name)),
                    }
                )*
                (api, missing)
            }

            /// Resolves, from a companion library, the functions named in `missing` (what
            /// [`from_library`](Self::from_library) could not find in the main one); returns
            /// those the companion lacks too.
            ///
            /// # Safety
            /// As for [`from_library`](Self::from_library), for `lib`.
            pub unsafe fn resolve_missing(
                &mut self,
                lib: &libloading::Library,
                missing: Vec<&'static str>,
            ) -> Vec<&'static str> {
                let wanted: std::collections::HashSet<&str> = missing.iter().copied().collect();
                let mut still = Vec::new();
                $(
                    if wanted.contains(stringify!($name)) {
                        // SAFETY: the caller guarantees the symbol has the declared C signature.
                        match unsafe {
                            lib.get::<unsafe extern "C" fn($($ty),*) $(-> $ret)?>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        } {
                            Ok(sym) => self.$name = *sym,
                            Err(_) => still.push(stringify!($name)),
                        }
                    }
                )*
                still
            }

            /// The table of the library linked at build time (feature `link`).
            #[cfg(feature = "link")]
            pub fn linked() -> Self {
                Self { $( $name: linked::$name, )* }
            }
        }

        #[allow(unused_variables, clippy::missing_safety_doc)]
        mod stubs {
            #[allow(unused_imports)]
            use super::*;
            $(
                pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                    $record(stringify!($name));
                    <$crate::__acl_ret!($($ret)?) as $Unavailable>::unavailable()
                }
            )*
        }

        /// The functions as `extern` declarations, linked at build time.
        #[cfg(feature = "link")]
        pub mod linked {
            #[allow(unused_imports)]
            use super::*;
            unsafe extern "C" {
                $(
                    #[doc = concat!("`", stringify!($name), "`")]
                    pub fn $name($($arg: $ty),*) $(-> $ret)?;
                )*
            }
        }
    };
}

use crate::generated::*;
include!("generated/functions.rs");
