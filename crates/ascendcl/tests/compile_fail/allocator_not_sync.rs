// Executors call an allocator from runtime threads: one that is not `Send + Sync` (here holding
// a `Cell`) cannot be registered.
use ascendcl::{Allocator, Runtime};
use std::cell::Cell;
use std::ffi::c_void;

struct Counting {
    n: Cell<usize>,
}

impl Allocator for Counting {
    type Block = ();
    fn alloc(&self, _: usize) -> Option<()> {
        self.n.set(self.n.get() + 1);
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
    let _reg = stream.register_allocator(Counting { n: Cell::new(0) })?;
    Ok(())
}
