//! The functions the emulator does not implement: one stub per runtime function, generated from
//! `ascendcl-sys`'s function list, that returns `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000; NULL
//! or zero for functions that return pointers or values) and records a recent-error message naming
//! the function, like every other failure of the emulator.

use crate::base::error::{Fail, RT_FEATURE_NOT_SUPPORT, record};
use ascendcl_sys::*;

/// Records the failure of a function the emulator lacks: for `aclGetRecentErrMsg` /
/// `aclrtGetLastError`, and for `ascendcl_sys::take_missing_symbol`.
#[cold]
fn missing(name: &'static str) {
    ascendcl_sys::record_missing(name);
    // No panic may unwind into C; `record` does not panic, but stay on the safe side.
    let _ = std::panic::catch_unwind(|| {
        record(
            name,
            Fail {
                code: RT_FEATURE_NOT_SUPPORT,
                msg: "not implemented by the host emulator (ascendcl-emu); see docs/emulator.md \
                      for the functions it implements"
                    .to_string(),
            },
        )
    });
}

macro_rules! stubs {
    (unsafe extern "C" {
        $( pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
    }) => {
        #[allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
        mod stub {
            use super::*;
            $(
                pub(super) unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                    missing(stringify!($name));
                    <ascendcl_sys::__acl_ret!($($ret)?) as Unavailable>::unavailable()
                }
            )*
        }

        /// A table in which every function is the emulator's "not supported" stub.
        pub(crate) fn table() -> AclApi {
            AclApi { $( $name: stub::$name, )* }
        }
    };
}

ascendcl_sys::acl_function_list!(stubs);
