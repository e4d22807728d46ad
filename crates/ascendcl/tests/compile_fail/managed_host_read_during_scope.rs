// Managed memory that a scope uses cannot be read by the host while the scope is open, not even
// when the device only reads it: the device view borrows the buffer exclusively.
use ascendcl::{ManagedBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut x = ManagedBuffer::from_slice(&dev, &[1u32, 2, 3])?;
    let mut out = vec![0u32; 3];
    let view = x.on_device();
    stream.scope(|s| {
        s.copy(&mut out, &view)?;
        println!("{}", x[0]);
        Ok(())
    })?;
    drop(view);
    Ok(())
}
