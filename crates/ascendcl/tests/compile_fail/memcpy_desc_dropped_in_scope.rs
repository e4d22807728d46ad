// The descriptor of a queued copy cannot be freed before the scope has waited for the stream.
use ascendcl::{MemcpyDescriptor, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = dev.clone_htod(&[1u8; 8])?;
    let mut dst = dev.alloc_zeros::<u8>(8)?;
    let mut desc = MemcpyDescriptor::new(&dev)?;
    stream.scope(|s| {
        s.copy_with_desc(&mut desc, &mut dst, &src)?;
        drop(desc);
        Ok(())
    })?;
    Ok(())
}
