// The scope a hand-off gives its closure works on the other stream only while the hand-off
// orders the two streams: it cannot be kept past the closure.
use ascendcl::{Handoff, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (first, second) = (dev.create_stream()?, dev.create_stream()?);
    let event = dev.create_event()?;
    first.scope(|a| {
        let kept = a.hand_off(&second, Handoff::event(&event), |b| Ok(b))?;
        kept.launch_host_fn(|| ())?;
        Ok(())
    })?;
    Ok(())
}
