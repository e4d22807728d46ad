// A memcpy descriptor is read when its copy runs: one scope cannot rewrite it for a second copy
// while the first may still be waiting to read it.
use ascendcl::{MemcpyDescriptor, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = dev.clone_htod(&[1u8; 8])?;
    let (mut a, mut b) = (dev.alloc_zeros::<u8>(8)?, dev.alloc_zeros::<u8>(8)?);
    let mut desc = MemcpyDescriptor::new(&dev)?;
    stream.scope(|s| {
        s.copy_with_desc(&mut desc, &mut a, &src)?;
        s.copy_with_desc(&mut desc, &mut b, &src)
    })?;
    Ok(())
}
