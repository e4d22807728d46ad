// The recorder exists only during the capture: it cannot be kept to record later.
use ascendcl::{CaptureMode, DeviceBuffer, MallocPolicy, Model, Recorder, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut stream = dev.create_stream()?;
    let mut model = Model::new(&dev);
    let x = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?);
    let mut kept: Option<&Recorder<'_>> = None;
    model.capture(&mut stream, CaptureMode::Global, |c| {
        kept = Some(c);
        Ok(())
    })?;
    kept.unwrap().fill_bytes(x, 1)?;
    Ok(())
}
