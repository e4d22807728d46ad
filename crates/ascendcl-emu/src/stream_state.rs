//! Stream state callbacks (`aclrtRegStreamStateCallback`): called after a stream is created and
//! before it is destroyed, default streams included, on the thread that creates or destroys it.

use crate::error::*;
use crate::sync::lock;
use ascendcl_sys::{
    ACL_RT_STREAM_STATE_CREATE_POST, ACL_RT_STREAM_STATE_DESTROY_PRE, aclrtStreamState,
};
use std::ffi::c_void;
use std::sync::Mutex;

type Callback = unsafe extern "C" fn(*mut c_void, aclrtStreamState, *mut c_void);

struct Reg {
    name: String,
    cb: Callback,
    args: usize,
}

static REGS: Mutex<Vec<Reg>> = Mutex::new(Vec::new());

/// Registers `cb` under `name`; `None` removes the registration (always succeeds). A name that
/// is already registered is 107000.
pub(crate) fn register(name: &str, cb: Option<Callback>, args: usize) -> R {
    let mut regs = lock(&REGS);
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
    let calls: Vec<(Callback, usize)> = lock(&REGS).iter().map(|r| (r.cb, r.args)).collect();
    for (cb, args) in calls {
        // SAFETY: registered by the program for exactly this call; no lock is held.
        unsafe { cb(stream as *mut c_void, state, args as *mut c_void) };
    }
}

/// A stream was created.
pub(crate) fn created(stream: usize) {
    notify(stream, ACL_RT_STREAM_STATE_CREATE_POST);
}

/// A stream is about to be destroyed.
pub(crate) fn destroying(stream: usize) {
    notify(stream, ACL_RT_STREAM_STATE_DESTROY_PRE);
}
