// An argument list belongs to its scope: the scope of another stream, whose work is not ordered
// with it, cannot launch it.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let (a, b) = (dev.create_stream()?, dev.create_stream()?);
    let module = Module::load(&dev, "kernels.so")?;
    let f = module.function("fill")?;
    let mut y = dev.alloc_zeros::<f32>(4)?;
    a.scope(|sa| {
        let mut args = sa.kernel_args(&f)?;
        args.arg(&mut y)?;
        b.scope(|sb| unsafe { sb.launch(&mut args, &LaunchConfig::blocks(1)) })
    })
}
