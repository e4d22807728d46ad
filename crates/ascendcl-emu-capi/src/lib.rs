//! The host emulator (`ascendcl-emu`) as a C shared library: `cargo xtask emu-root` installs it
//! as `lib64/libacl_rt.so` (SONAME `libacl_rt.so`) in a CANN-shaped install root.
//!
//! It exports **every** function of the AscendCL runtime headers under its real name, generated
//! from `ascendcl-sys`'s one function list. Each export forwards to the emulator's function table
//! ([`ascendcl_emu::api`]): implemented functions run the emulator, the others return
//! `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000; NULL or zero for pointer and value returns) and
//! record a message naming the function for `aclGetRecentErrMsg`. So any C program written
//! against the headers links, and a missing feature is a clear error at run time.
//!
//! It also exports every function of `hccl.h` (generated from `hccl-sys`'s function list), run by
//! the HCCL emulator (`hccl-emu`): the emulator root's `lib64/libhccl.so` is a link to this same
//! library, so that a C program's ACL and HCCL calls share one emulated machine.
//!
//! It also exports the part of the operator library (aclnn) CANN's runtime samples call
//! (`operators`); the emulator root's `libopapi.so` and `libnnopbase.so` link to it.
//!
//! It also exports mstx (`mstx/ms_tools_ext.h`: marks and ranges for the profiler, `mstx`); the
//! emulator root's `libmsprofiler.so` links to it.
//!
//! The symbols live here, not in the `ascendcl-emu` and `hccl-emu` rlibs, so that a Rust program
//! that embeds the emulators never defines `acl*` or `Hccl*` symbols that could interpose on a
//! real library.
#![allow(non_snake_case)]

mod mstx;
mod operators;

use ascendcl_sys::*;
use std::sync::OnceLock;

/// The emulator's table, built on the first call.
#[inline]
fn table() -> &'static AclApi {
    static TABLE: OnceLock<AclApi> = OnceLock::new();
    TABLE.get_or_init(ascendcl_emu::api)
}

macro_rules! export_all {
    (unsafe extern "C" {
        $( pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
    }) => {
        $(
            #[doc = concat!("`", stringify!($name), "`, run by the host emulator.")]
            ///
            /// # Safety
            /// The C function's contract: every pointer argument is NULL or valid for the access
            /// the function makes, and handles were returned by this runtime.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the table holds the emulator's function with this exact signature;
                // the caller upholds the C contract.
                unsafe { (table().$name)($($arg),*) }
            }
        )*
    };
}

ascendcl_sys::acl_function_list!(export_all);

/// The HCCL functions, forwarded to the HCCL emulator's table.
mod hccl {
    use ascendcl_sys::{aclrtDrvMemHandle, aclrtStream};
    use hccl_sys::*;
    use std::sync::OnceLock;

    /// The HCCL emulator's table, built on the first call.
    #[inline]
    fn table() -> &'static HcclApi {
        static TABLE: OnceLock<HcclApi> = OnceLock::new();
        TABLE.get_or_init(hccl_emu::api)
    }

    macro_rules! export_hccl {
        (unsafe extern "C" {
            $( pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
        }) => {
            $(
                #[doc = concat!("`", stringify!($name), "`, run by the HCCL emulator.")]
                ///
                /// # Safety
                /// The C function's contract: every pointer argument is NULL or valid for the
                /// access the function makes, and handles were returned by this library.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                    // SAFETY: the table holds the emulator's function with this exact
                    // signature; the caller upholds the C contract.
                    unsafe { (table().$name)($($arg),*) }
                }
            )*
        };
    }

    hccl_sys::hccl_function_list!(export_hccl);
}
