// A registration cannot be unregistered (its vector given back) while a device view of it lives.
use ascendcl::{HostRegisterFlags, HostRegistration, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let reg = HostRegistration::with_flags(&dev, vec![0u32; 8], HostRegisterFlags::MAPPED)?;
    let view = reg.device_view()?;
    let _v = reg.unregister();
    println!("{}", view.len());
    Ok(())
}
