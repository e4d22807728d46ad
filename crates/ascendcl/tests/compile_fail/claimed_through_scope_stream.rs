// A scope opened on the same stream through Scope::stream() is still another scope: the
// region's brand does not fit it either.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        let c = s.claim(&mut d);
        s.stream().scope(|t| t.fill_bytes(c, 0))
    })?;
    Ok(())
}
