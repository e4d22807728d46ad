// A stream cannot outlive the device it was created on.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    dev.reset()?;
    stream.synchronize()?;
    Ok(())
}
