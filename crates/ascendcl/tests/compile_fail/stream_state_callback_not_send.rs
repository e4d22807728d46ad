//! A stream-state callback runs on whichever thread creates or destroys a stream: a closure
//! that is not `Send + Sync` (here one holding an `Rc`) is refused.
use std::rc::Rc;

fn main() -> ascendcl::Result<()> {
    let count = Rc::new(std::cell::Cell::new(0));
    let _cb = ascendcl::StreamStateCallback::register(move |_| count.set(count.get() + 1))?;
    Ok(())
}
