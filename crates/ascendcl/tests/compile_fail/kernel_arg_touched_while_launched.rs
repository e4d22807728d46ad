// A buffer a kernel writes stays exclusively borrowed until the scope has waited for the stream.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("fill")?;
    let mut y = dev.alloc_zeros::<f32>(4)?;
    stream.scope(|s| {
        unsafe { s.launch_builder(&f).arg(&mut y).launch(&LaunchConfig::blocks(1)) }?;
        y.copy_from_host(&[0.0; 4])?;
        Ok(())
    })
}
