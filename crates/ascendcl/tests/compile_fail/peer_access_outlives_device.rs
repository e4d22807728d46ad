// A peer-access token cannot outlive either device.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let d0 = rt.device(0)?;
    let token = {
        let d1 = rt.device(1)?;
        d0.enable_peer_access(&d1)?
    };
    let _ = token.devices();
    Ok(())
}
