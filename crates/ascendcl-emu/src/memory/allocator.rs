//! The allocator registry (`acl_rt_allocator.h`): descriptors of user allocators and their
//! registration per stream. The runtime never calls the callbacks itself; the operator
//! executors read the registry, so the emulator only keeps it.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::lock::{Mutex, Rank};
use ascendcl_sys::{
    aclrtAllocatorAllocAdviseFunc, aclrtAllocatorAllocFunc, aclrtAllocatorFreeFunc,
    aclrtAllocatorGetAddrFromBlockFunc,
};
use std::collections::HashMap;
use std::sync::LazyLock;

/// A descriptor's contents.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Desc {
    pub obj: usize,
    pub alloc: aclrtAllocatorAllocFunc,
    pub free: aclrtAllocatorFreeFunc,
    pub advise: aclrtAllocatorAllocAdviseFunc,
    pub get_addr: aclrtAllocatorGetAddrFromBlockFunc,
}

#[derive(Default)]
struct Registry {
    descs: HashMap<usize, Desc>,
    streams: HashMap<usize, (usize, Desc)>,
}

static REG: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::ranked(Rank::Allocators));

/// A new, empty descriptor.
pub(crate) fn create() -> usize {
    let h = crate::base::hub::new_handle();
    REG.lock().descs.insert(h, Desc::default());
    h
}

/// Destroys a descriptor (registrations keep their copies).
pub(crate) fn destroy(h: usize) -> R {
    REG.lock().descs.remove(&h).map(|_| ()).ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: format!("{h:#x} is not an allocator descriptor"),
    })
}

/// Changes a descriptor.
pub(crate) fn update(h: usize, f: impl FnOnce(&mut Desc)) -> R {
    match REG.lock().descs.get_mut(&h) {
        Some(d) => {
            f(d);
            Ok(())
        }
        None => fail(
            INVALID_PARAM,
            format!("{h:#x} is not an allocator descriptor"),
        ),
    }
}

/// Registers a copy of the descriptor for `stream` (the last registration wins); the object,
/// alloc, free and get-address functions are required (100000).
pub(crate) fn register(stream: usize, h: usize) -> R {
    HOOKS.ensure();
    let mut r = REG.lock();
    let d = *r.descs.get(&h).ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: format!("{h:#x} is not an allocator descriptor"),
    })?;
    if d.obj == 0 || d.alloc.is_none() || d.free.is_none() || d.get_addr.is_none() {
        return fail(
            INVALID_PARAM,
            "the descriptor lacks the allocator object or its alloc, free or get-address function",
        );
    }
    r.streams.insert(stream, (h, d));
    Ok(())
}

/// The registration of `stream`: the descriptor handle and the copy registered.
pub(crate) fn get(stream: usize) -> R<(usize, Desc)> {
    REG.lock()
        .streams
        .get(&stream)
        .copied()
        .ok_or_else(|| Fail {
            code: INVALID_PARAM,
            msg: format!("no allocator is registered for stream {stream:#x}"),
        })
}

/// A destroyed stream's registration goes with it.
static HOOKS: Registration = Registration::new(Hooks {
    name: "allocators",
    stream_destroyed: Some(forget),
    ..Hooks::NONE
});

/// Forgets the registration of `stream` (unregistered, or destroyed).
pub(crate) fn forget(stream: usize) {
    REG.lock().streams.remove(&stream);
}
