//! The callbacks libraries layered on the runtime register for `aclInit` and `aclFinalize`
//! (`aclInitCallbackRegister`, `aclFinalizeCallbackRegister`): kept per callback type, called
//! in the runtime's order, a failing callback failing the call.
//!
//! Each type holds at most one callback, except `ACL_REG_TYPE_OTHER`, which holds any number.
//! `aclInit` calls the init callbacks of `ACL_REG_TYPE_ACL_MODEL`, then (with a configuration
//! file) `ACL_REG_TYPE_ACL_OP_EXECUTOR`, then `ACL_REG_TYPE_ACL_DVPP`, then `ACL_REG_TYPE_OTHER`,
//! with the configuration file's text; an init callback registered while the runtime is
//! initialised runs at once. `aclFinalize` calls the finalize callbacks of
//! `ACL_REG_TYPE_ACL_OP_COMPILER`, `ACL_REG_TYPE_ACL_MODEL`, `ACL_REG_TYPE_ACL_DVPP` and
//! `ACL_REG_TYPE_OTHER`. Callbacks run without any lock of the emulator held.

use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use ascendcl_sys::*;
use std::ffi::{c_char, c_void};

/// One registration: the type, the function (its identity for unregistering) and its argument.
#[derive(Clone, Copy)]
struct Entry<F> {
    kind: aclRegisterCallbackType,
    f: F,
    user: usize,
}

/// The init callback of an entry (always non-NULL).
type InitFn = unsafe extern "C" fn(*const c_char, usize, *mut c_void) -> aclError;
/// The finalize callback of an entry (always non-NULL).
type FinalizeFn = unsafe extern "C" fn(*mut c_void) -> aclError;

struct Registry {
    init: Vec<Entry<InitFn>>,
    finalize: Vec<Entry<FinalizeFn>>,
    /// The configuration text of the current initialisation (None while not initialised).
    config: Option<String>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(
    Rank::InitCallbacks,
    Registry {
        init: Vec::new(),
        finalize: Vec::new(),
        config: None,
    },
);

/// The types `aclInit` notifies, in order; the second only with a configuration file.
const INIT_ORDER: [aclRegisterCallbackType; 4] = [
    ACL_REG_TYPE_ACL_MODEL,
    ACL_REG_TYPE_ACL_OP_EXECUTOR,
    ACL_REG_TYPE_ACL_DVPP,
    ACL_REG_TYPE_OTHER,
];

/// The types `aclFinalize` notifies, in order.
const FINALIZE_ORDER: [aclRegisterCallbackType; 4] = [
    ACL_REG_TYPE_ACL_OP_COMPILER,
    ACL_REG_TYPE_ACL_MODEL,
    ACL_REG_TYPE_ACL_DVPP,
    ACL_REG_TYPE_OTHER,
];

fn add<F: Copy>(list: &mut Vec<Entry<F>>, kind: aclRegisterCallbackType, f: F, user: usize) -> R {
    if kind != ACL_REG_TYPE_OTHER && list.iter().any(|e| e.kind == kind) {
        return fail(
            INTERNAL_ERROR,
            format!(
                "a callback of type {kind} is already registered (only ACL_REG_TYPE_OTHER holds \
                 several)"
            ),
        );
    }
    list.push(Entry { kind, f, user });
    Ok(())
}

fn remove<F: Copy>(
    list: &mut Vec<Entry<F>>,
    kind: aclRegisterCallbackType,
    same: impl Fn(F) -> bool,
) -> R {
    if !list.iter().any(|e| e.kind == kind) {
        return fail(
            INTERNAL_ERROR,
            format!("no callback of type {kind} is registered"),
        );
    }
    match list.iter().position(|e| e.kind == kind && same(e.f)) {
        Some(i) => {
            list.remove(i);
            Ok(())
        }
        None => fail(
            INTERNAL_ERROR,
            format!("this function is not registered as a callback of type {kind}"),
        ),
    }
}

/// Calls an init callback with `config` as the runtime passes it (a `std::string`'s `c_str()` and
/// `size()`): a pointer to NUL-terminated text, valid even when the text is empty, and its length
/// without the NUL. Callbacks written in C may read it as a C string.
fn call_init(e: &Entry<InitFn>, config: &str) -> aclError {
    let mut text = Vec::with_capacity(config.len() + 1);
    text.extend_from_slice(config.as_bytes());
    text.push(0);
    // SAFETY: the registrant provided a function and argument valid to call at aclInit; the
    // text (NUL-terminated) lives for the call.
    unsafe { (e.f)(text.as_ptr().cast(), config.len(), e.user as *mut c_void) }
}

/// `aclInitCallbackRegister`; an init callback registered while the runtime is initialised runs
/// now (its result is ignored, as in the runtime).
pub(crate) fn register_init(kind: aclRegisterCallbackType, f: InitFn, user: usize) -> R {
    let mut r = REGISTRY.lock();
    add(&mut r.init, kind, f, user)?;
    let now = r.config.clone();
    drop(r);
    if let Some(config) = now {
        call_init(&Entry { kind, f, user }, &config);
    }
    Ok(())
}

/// `aclInitCallbackUnRegister`.
pub(crate) fn unregister_init(kind: aclRegisterCallbackType, f: InitFn) -> R {
    remove(&mut REGISTRY.lock().init, kind, |g| {
        std::ptr::fn_addr_eq(g, f)
    })
}

/// `aclFinalizeCallbackRegister`.
pub(crate) fn register_finalize(kind: aclRegisterCallbackType, f: FinalizeFn, user: usize) -> R {
    add(&mut REGISTRY.lock().finalize, kind, f, user)
}

/// `aclFinalizeCallbackUnRegister`.
pub(crate) fn unregister_finalize(kind: aclRegisterCallbackType, f: FinalizeFn) -> R {
    remove(&mut REGISTRY.lock().finalize, kind, |g| {
        std::ptr::fn_addr_eq(g, f)
    })
}

fn failed(what: &str, kind: aclRegisterCallbackType, code: aclError) -> Fail {
    Fail {
        code,
        msg: format!("the {what} callback of type {kind} returned {code}"),
    }
}

/// Runs the init callbacks for an `aclInit` with configuration text `config` (from a file when
/// `has_file`); the first failure is the call's. On success the text is kept for callbacks
/// registered later.
pub(crate) fn on_init(config: &str, has_file: bool) -> R {
    let entries = REGISTRY.lock().init.clone();
    for kind in INIT_ORDER {
        if kind == ACL_REG_TYPE_ACL_OP_EXECUTOR && !has_file {
            continue;
        }
        for e in entries.iter().filter(|e| e.kind == kind) {
            let code = call_init(e, config);
            if code != SUCCESS {
                return Err(failed("init", kind, code));
            }
        }
    }
    REGISTRY.lock().config = Some(config.to_string());
    Ok(())
}

/// Runs the finalize callbacks of an `aclFinalize`; the first failure is the call's (and the
/// runtime stays initialised).
pub(crate) fn on_finalize() -> R {
    let entries = REGISTRY.lock().finalize.clone();
    for kind in FINALIZE_ORDER {
        for e in entries.iter().filter(|e| e.kind == kind) {
            // SAFETY: the registrant provided a function and argument valid to call at
            // aclFinalize.
            let code = unsafe { (e.f)(e.user as *mut c_void) };
            if code != SUCCESS {
                return Err(failed("finalize", kind, code));
            }
        }
    }
    REGISTRY.lock().config = None;
    Ok(())
}
