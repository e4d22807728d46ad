// The runtime cannot be finalized while a device (and so any buffer) is still open.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    rt.finalize()?;
    dev.synchronize()?;
    Ok(())
}
