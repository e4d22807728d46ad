// A kernel's signature is unknown to the runtime: launching one is `unsafe`.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("add")?;
    let x = dev.alloc_zeros::<f32>(4)?;
    stream.scope(|s| s.launch_builder(&f).arg(&x).launch(&LaunchConfig::blocks(1)))
}
