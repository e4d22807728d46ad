// The notify that orders a hand-off is read by both streams when they reach it: it is borrowed
// until the scope has waited, so one made inside the scope's closure does not live long enough.
use ascendcl::{Handoff, Notify, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (first, second) = (dev.create_stream()?, dev.create_stream()?);
    first.scope(|a| {
        let notify = Notify::new(&dev)?;
        a.hand_off(&second, Handoff::notify(&notify), |_| Ok(()))
    })?;
    Ok(())
}
