// The source of an asynchronous copy cannot be dropped (freed) while the copy may be in flight.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let mut dst = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        s.copy(&mut dst, &src)?;
        drop(src);
        Ok(())
    })?;
    Ok(())
}
