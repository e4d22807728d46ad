//! A submission's closure that captures a borrowed buffer: refused (`'static`), since the
//! submission outlives the call and the borrow would end before the stream is past the copy.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let source = dev.clone_htod(&[1u32; 4])?;
    let job = stream.submit(dev.alloc_zeros::<u32>(4)?, |s, d| s.copy(d, &source));
    drop(source);
    job.wait()?;
    Ok(())
}
