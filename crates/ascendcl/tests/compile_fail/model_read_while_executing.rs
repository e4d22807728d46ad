// While a scope executes a model, the host cannot read the model's buffers either (the device
// may be writing them).
use ascendcl::{CaptureMode, DeviceBuffer, MallocPolicy, Model, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut model = Model::new(&dev);
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?);
    model.capture(&mut stream, CaptureMode::Global, |c| c.fill_bytes(x, 1))?;
    stream.scope(|s| {
        s.execute(&mut model)?;
        let _v = model.get(x)?.to_vec()?;
        Ok(())
    })?;
    Ok(())
}
