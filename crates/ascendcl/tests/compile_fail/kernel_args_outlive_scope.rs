// An argument list holds the scope's borrows: it cannot leave the scope.
use ascendcl::{Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("fill")?;
    let mut y = dev.alloc_zeros::<f32>(4)?;
    let mut escaped = None;
    stream.scope(|s| {
        let mut args = s.kernel_args(&f)?;
        args.arg(&mut y)?;
        escaped = Some(args);
        Ok(())
    })?;
    drop(escaped);
    Ok(())
}
