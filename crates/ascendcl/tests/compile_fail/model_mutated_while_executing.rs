// While a scope executes a model, the model (and so every buffer it owns) is borrowed
// exclusively: the host cannot write its buffers until the scope has waited for the stream.
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
        model.copy_from_host(x, &[0; 16])
    })?;
    Ok(())
}
