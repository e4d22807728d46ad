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
//! The symbols live here, not in the `ascendcl-emu` rlib, so that a Rust program that embeds the
//! emulator never defines `acl*` symbols that could interpose on a real runtime library.
#![allow(non_snake_case)]

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
