// Managed memory that a scope writes cannot be written by the host while the scope is open.
use ascendcl::{ManagedBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut x = ManagedBuffer::<u32>::zeroed(&dev, 3)?;
    let src = dev.clone_htod(&[1u32, 2, 3])?;
    let mut view = x.on_device();
    stream.scope(|s| {
        s.copy(&mut view, &src)?;
        x[0] = 7;
        Ok(())
    })?;
    Ok(())
}
