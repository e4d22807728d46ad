// While a stream captures, only the recorder reaches it: work enqueued on the stream directly
// (with borrowed memory the model does not own) would be captured too.
use ascendcl::{CaptureMode, DeviceBuffer, HostBuffer, MallocPolicy, Model, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut model = Model::new(&dev);
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?);
    let src = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let mut dst = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    model.capture(&mut stream, CaptureMode::Global, |c| {
        c.fill_bytes(x, 1)?;
        stream.scope(|s| s.copy(&mut dst, &src))
    })?;
    Ok(())
}
