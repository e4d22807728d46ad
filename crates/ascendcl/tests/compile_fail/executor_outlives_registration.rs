// What an executor reads back from the runtime borrows the registration: the allocator cannot be
// unregistered (and freed) while its callbacks may still be called through it.
use ascendcl::{Allocator, Runtime};
use std::ffi::c_void;

struct Nothing;

impl Allocator for Nothing {
    type Block = ();
    fn alloc(&self, _: usize) -> Option<()> {
        Some(())
    }
    fn free(&self, (): ()) {}
    fn address((): &()) -> *mut c_void {
        std::ptr::null_mut()
    }
}

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let stream = rt.device(0)?.create_stream()?;
    let reg = stream.register_allocator(Nothing)?;
    let executor = reg.query()?;
    drop(reg);
    let _block = executor.alloc(16);
    Ok(())
}
