// A device view made inside the scope closure would end before the scope waits for the stream:
// the scope does not accept it.
use ascendcl::{ManagedBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut x = ManagedBuffer::from_slice(&dev, &[1u32, 2, 3])?;
    let mut out = vec![0u32; 3];
    stream.scope(|s| {
        let view = x.on_device();
        s.copy(&mut out, &view)
    })?;
    Ok(())
}
