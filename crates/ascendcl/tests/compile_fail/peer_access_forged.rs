// Copies between devices need a PeerAccess token, which only Device::enable_peer_access makes.
use ascendcl::{DeviceBuffer, MallocPolicy, PeerAccess, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let d0 = rt.device(0)?;
    let d1 = rt.device(1)?;
    let a = DeviceBuffer::<u8>::zeroed(&d0, 16, MallocPolicy::HugeFirstP2p)?;
    let mut b = DeviceBuffer::<u8>::zeroed(&d1, 16, MallocPolicy::HugeFirstP2p)?;
    let token = PeerAccess { a: d0.clone(), b: d1.clone() };
    token.copy(&mut b, &a)?;
    Ok(())
}
