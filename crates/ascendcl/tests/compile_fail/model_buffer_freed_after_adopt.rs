// A buffer moved into a model cannot be freed (or used) by the caller any more: the model's
// recorded tasks use its address at every execution.
use ascendcl::{DeviceBuffer, MallocPolicy, Model, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut model = Model::new(&dev);
    let buf = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let _slot = model.adopt(buf);
    buf.free()?;
    Ok(())
}
