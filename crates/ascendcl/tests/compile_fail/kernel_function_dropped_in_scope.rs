// A launch borrows its function for the whole scope, so that its binary stays loaded until the
// stream has run the kernel: a function made inside the scope does not live long enough.
use ascendcl::{LaunchConfig, Module, Runtime};

fn main() -> ascendcl::Result<()> {
    let dev = Runtime::new()?.device(0)?;
    let stream = dev.create_stream()?;
    let module = Module::load(&dev, "kernels.so")?;
    stream.scope(|s| {
        let f = module.function("noop")?;
        unsafe { s.launch_builder(&f).launch(&LaunchConfig::blocks(1)) }
    })
}
