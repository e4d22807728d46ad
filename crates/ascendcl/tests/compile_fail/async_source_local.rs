// A buffer created inside the scope would be freed before the scope waits for the stream:
// it cannot be handed to an asynchronous copy.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut dst = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        let src = HostBuffer::<u8>::zeroed(&dev, 16)?;
        s.copy(&mut dst, &src)?;
        Ok(())
    })?;
    Ok(())
}
