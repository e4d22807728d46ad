// Blocks may be freed on another thread than the one that allocated them: a block type that is
// not `Send` (here an `Rc`) is refused.
use ascendcl::Allocator;
use std::ffi::c_void;
use std::rc::Rc;

struct Shared;

impl Allocator for Shared {
    type Block = Rc<u8>;
    fn alloc(&self, _: usize) -> Option<Rc<u8>> {
        Some(Rc::new(0))
    }
    fn free(&self, _: Rc<u8>) {}
    fn address(_: &Rc<u8>) -> *mut c_void {
        std::ptr::null_mut()
    }
}

fn main() {}
