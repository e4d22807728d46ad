//! A raw function that takes a pointer or a handle, or that could pull a resource from under a
//! safe handle, is an `unsafe fn`: calling it outside `unsafe` does not compile.

use ascendcl::{raw, sys};

fn main() {
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    let _ = raw::aclrtMalloc(&mut p, 64, sys::ACL_MEM_MALLOC_HUGE_FIRST);
    let _ = raw::aclrtFree(p);
    let _ = raw::aclrtResetDevice(0);
    let _ = raw::aclFinalize();
    // The safe ones need no `unsafe`.
    let _ = raw::aclrtSynchronizeDevice();
}
