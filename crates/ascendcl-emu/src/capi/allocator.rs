//! The allocator registry: descriptors and their registration per stream.

use super::*;
use crate::memory::allocator::{self, Desc};

/// `aclrtAllocatorCreateDesc`: a new, empty descriptor.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc {
    catch_unwind(|| as_ptr(allocator::create())).unwrap_or(std::ptr::null_mut())
}

acl! {
    /// `aclrtAllocatorDestroyDesc`: destroys a descriptor; registrations keep their copies.
    fn aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc) {
        if allocatorDesc.is_null() {
            return fail(INVALID_PARAM, "allocatorDesc is NULL");
        }
        allocator::destroy(handle(allocatorDesc))
    }
}

/// Sets one field of a descriptor; NULL arguments are 100000.
fn set(desc: aclrtAllocatorDesc, given: bool, f: impl FnOnce(&mut Desc)) -> R {
    if desc.is_null() || !given {
        return fail(INVALID_PARAM, "allocatorDesc or the value is NULL");
    }
    allocator::update(handle(desc), f)
}

acl! {
    /// `aclrtAllocatorSetObjToDesc`: the user's allocator object.
    fn aclrtAllocatorSetObjToDesc(allocatorDesc: aclrtAllocatorDesc, allocator: aclrtAllocator) {
        set(allocatorDesc, !allocator.is_null(), |d| d.obj = allocator as usize)
    }
}

acl! {
    /// `aclrtAllocatorSetAllocFuncToDesc`.
    fn aclrtAllocatorSetAllocFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorAllocFunc) {
        set(allocatorDesc, func.is_some(), |d| d.alloc = func)
    }
}

acl! {
    /// `aclrtAllocatorSetFreeFuncToDesc`.
    fn aclrtAllocatorSetFreeFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorFreeFunc) {
        set(allocatorDesc, func.is_some(), |d| d.free = func)
    }
}

acl! {
    /// `aclrtAllocatorSetAllocAdviseFuncToDesc`.
    fn aclrtAllocatorSetAllocAdviseFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorAllocAdviseFunc) {
        set(allocatorDesc, func.is_some(), |d| d.advise = func)
    }
}

acl! {
    /// `aclrtAllocatorSetGetAddrFromBlockFuncToDesc`.
    fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorGetAddrFromBlockFunc) {
        set(allocatorDesc, func.is_some(), |d| d.get_addr = func)
    }
}

acl! {
    /// `aclrtAllocatorRegister`: registers a copy of the descriptor for a stream (no default
    /// stream: NULL is 100000); the object and the alloc, free and get-address functions are
    /// required (100000), the advise function is optional. The last registration wins.
    fn aclrtAllocatorRegister(stream: aclrtStream, allocatorDesc: aclrtAllocatorDesc) {
        if stream.is_null() || allocatorDesc.is_null() {
            return fail(INVALID_PARAM, "stream or allocatorDesc is NULL");
        }
        let s = crate::stream::get(handle(stream))?;
        allocator::register(s.handle, handle(allocatorDesc))
    }
}

acl! {
    /// `aclrtAllocatorGetByStream`: the registration of a stream (100000 when there is none);
    /// NULL outputs are skipped.
    fn aclrtAllocatorGetByStream(stream: aclrtStream, allocatorDesc: *mut aclrtAllocatorDesc, allocator: *mut aclrtAllocator, allocFunc: *mut aclrtAllocatorAllocFunc, freeFunc: *mut aclrtAllocatorFreeFunc, allocAdviseFunc: *mut aclrtAllocatorAllocAdviseFunc, getAddrFromBlockFunc: *mut aclrtAllocatorGetAddrFromBlockFunc) {
        if stream.is_null() || allocatorDesc.is_null() {
            return fail(INVALID_PARAM, "stream or allocatorDesc is NULL");
        }
        let (h, d) = allocator::get(handle(stream))?;
        // SAFETY: each output is NULL (skipped) or valid for one write (C contract).
        unsafe {
            allocatorDesc.write(as_ptr(h));
            if !allocator.is_null() {
                allocator.write(as_ptr(d.obj));
            }
            if !allocFunc.is_null() {
                allocFunc.write(d.alloc);
            }
            if !freeFunc.is_null() {
                freeFunc.write(d.free);
            }
            if !allocAdviseFunc.is_null() {
                allocAdviseFunc.write(d.advise);
            }
            if !getAddrFromBlockFunc.is_null() {
                getAddrFromBlockFunc.write(d.get_addr);
            }
        }
        Ok(())
    }
}

acl! {
    /// `aclrtAllocatorUnregister`: forgets a stream's registration (success even without one).
    fn aclrtAllocatorUnregister(stream: aclrtStream) {
        if stream.is_null() {
            return fail(INVALID_PARAM, "stream is NULL");
        }
        allocator::forget(handle(stream));
        Ok(())
    }
}
