//! Stream state callbacks (`aclrtRegStreamStateCallback`): called after a stream is created and
//! before it is destroyed, default streams included, on the thread that creates or destroys it.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::lock::{Mutex, Rank};
use ascendcl_sys::{
    ACL_RT_STREAM_STATE_CREATE_POST, ACL_RT_STREAM_STATE_DESTROY_PRE, aclrtStreamState,
};
use std::ffi::c_void;

type Callback = unsafe extern "C" fn(*mut c_void, aclrtStreamState, *mut c_void);

struct Reg {
    name: String,
    cb: Callback,
    args: usize,
}

static REGS: Mutex<Vec<Reg>> = Mutex::new(Rank::StreamCallbacks, Vec::new());

/// Registers `cb` under `name`; `None` removes the registration (always succeeds). A name that
/// is already registered is 107000.
pub(crate) fn register(name: &str, cb: Option<Callback>, args: usize) -> R {
    HOOKS.ensure();
    let mut regs = REGS.lock();
    let Some(cb) = cb else {
        regs.retain(|r| r.name != name);
        return Ok(());
    };
    if regs.iter().any(|r| r.name == name) {
        return fail(
            RT_PARAM_INVALID,
            format!("a stream state callback is already registered as {name:?}"),
        );
    }
    regs.push(Reg {
        name: name.to_string(),
        cb,
        args,
    });
    Ok(())
}

fn notify(stream: usize, state: aclrtStreamState) {
    let calls: Vec<(Callback, usize)> = REGS.lock().iter().map(|r| (r.cb, r.args)).collect();
    for (cb, args) in calls {
        // SAFETY: registered by the program for exactly this call; no lock is held.
        unsafe { cb(stream as *mut c_void, state, args as *mut c_void) };
    }
}

/// A stream was created.
fn created(stream: usize) {
    notify(stream, ACL_RT_STREAM_STATE_CREATE_POST);
}

/// A stream is about to be destroyed.
fn destroying(stream: usize) {
    notify(stream, ACL_RT_STREAM_STATE_DESTROY_PRE);
}

/// The callbacks are told of every stream created and destroyed once one is registered.
static HOOKS: Registration = Registration::new(Hooks {
    name: "stream state callbacks",
    stream_created: Some(created),
    stream_destroying: Some(destroying),
    ..Hooks::NONE
});
