// A device buffer cannot be used after its device is reset (dropped).
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let buf;
    {
        let dev = rt.device(0)?;
        buf = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    }
    let _ = buf.to_vec()?;
    Ok(())
}
