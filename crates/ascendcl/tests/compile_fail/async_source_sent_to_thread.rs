// Buffers are `Send` and `'static`, but one borrowed by a scope cannot be moved into another
// thread (and freed there) while the copy may be in flight.
use ascendcl::{HostBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let mut dst = dev.alloc_zeros::<u8>(16)?;
    stream.scope(|s| {
        s.copy(&mut dst, &src)?;
        std::thread::spawn(move || drop(src));
        Ok(())
    })?;
    Ok(())
}
