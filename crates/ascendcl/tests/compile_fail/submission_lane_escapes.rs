//! A claimed region of a submission sent out of its closure: refused, it cannot outlive the
//! scope the closure runs in.
use ascendcl::{Claimed, Runtime};
use std::sync::mpsc;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let (tx, rx) = mpsc::channel::<Claimed<'static, u32>>();
    let job = stream.submit(dev.alloc_zeros::<u32>(4)?, move |s, d| {
        let _ = tx.send(s.claim(d));
        Ok(())
    });
    let _kept = rx.recv();
    job.wait()?;
    Ok(())
}
