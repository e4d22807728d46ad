// The host cannot read a buffer a queued kernel may still write.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("fill")?;
    let mut y = dev.alloc_zeros::<f32>(4)?;
    stream.scope(|s| {
        let mut args = s.kernel_args(&f)?;
        args.arg(&mut y)?;
        unsafe { s.launch(&mut args, &LaunchConfig::blocks(1)) }?;
        let _ = y.copy_to_vec()?;
        Ok(())
    })
}
