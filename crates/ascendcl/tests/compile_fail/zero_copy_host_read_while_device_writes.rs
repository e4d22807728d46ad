// Registered host memory that device work writes through its mapping cannot be read by the host
// while the scope is open.
use ascendcl::{HostRegisterFlags, HostRegistration, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let src = dev.clone_htod(&[1u32; 8])?;
    let mut reg = HostRegistration::with_flags(&dev, vec![0u32; 8], HostRegisterFlags::MAPPED)?;
    let mut view = reg.device_view_mut()?;
    stream.scope(|s| {
        s.copy(&mut view, &src)?;
        println!("{}", reg[0]);
        Ok(())
    })?;
    Ok(())
}
