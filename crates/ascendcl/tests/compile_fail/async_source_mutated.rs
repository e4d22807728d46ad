// The source of an asynchronous copy cannot be written while the copy may be in flight.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut src = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let mut dst = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        s.copy(&mut dst, &src)?;
        src[0] = 1;
        Ok(())
    })?;
    Ok(())
}
