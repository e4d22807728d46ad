// Managed memory cannot be freed while a device view of it lives.
use ascendcl::{ManagedBuffer, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut x = ManagedBuffer::from_slice(&dev, &[1u32, 2, 3])?;
    let view = x.on_device();
    drop(x);
    println!("{}", view.len());
    Ok(())
}
