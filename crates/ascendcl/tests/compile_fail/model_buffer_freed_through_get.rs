// The accessor lends a model's buffer shared: it cannot be freed or moved out through it.
use ascendcl::{DeviceBuffer, MallocPolicy, Model, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let mut model = Model::new(&dev);
    let slot = model.adopt(DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?);
    let buf = model.get(slot)?;
    (*buf).free()?;
    Ok(())
}
