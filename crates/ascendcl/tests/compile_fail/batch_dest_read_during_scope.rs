// The destinations of a batched asynchronous copy cannot be read by the host while the batch may
// be in flight.
use ascendcl::{HostBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = dev.clone_htod(&[1u8; 8])?;
    let mut a = HostBuffer::<u8>::zeroed(&dev, 8)?;
    stream.scope(|s| {
        s.copy_batch([(&mut a, &src)])?;
        println!("{}", a[0]);
        Ok(())
    })?;
    Ok(())
}
