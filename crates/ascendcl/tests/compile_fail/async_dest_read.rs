// The destination of an asynchronous copy cannot be read by the host while the copy may be in
// flight.
use ascendcl::{HostBuffer, DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let mut dst = HostBuffer::<u8>::zeroed(&dev, 16)?;
    stream.scope(|s| {
        s.copy(&mut dst, &src)?;
        println!("{}", dst[0]);
        Ok(())
    })?;
    Ok(())
}
