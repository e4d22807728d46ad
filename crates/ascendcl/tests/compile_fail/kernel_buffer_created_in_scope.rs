// A buffer made inside the scope would be freed before the scope waits for the kernel.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("fill")?;
    stream.scope(|s| {
        let mut y = dev.alloc_zeros::<f32>(4)?;
        unsafe { s.launch_builder(&f).arg(&mut y).launch(&LaunchConfig::blocks(1)) }
    })
}
