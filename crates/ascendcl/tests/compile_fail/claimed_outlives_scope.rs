// A buffer claimed by a stream scope cannot be smuggled out and used after the scope.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut buf = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let mut escaped = None;
    stream.scope(|s| {
        escaped = Some(s.claim(&mut buf));
        Ok(())
    })?;
    let _ = escaped;
    Ok(())
}
