//! The exception callback runs on a runtime thread: a closure that is not `Send + Sync` (here
//! one holding an `Rc`) is refused.
use std::rc::Rc;

fn main() -> ascendcl::Result<()> {
    let seen = Rc::new(std::cell::Cell::new(0u32));
    let _cb = ascendcl::ExceptionCallback::register(move |i| seen.set(i.task_id))?;
    Ok(())
}
