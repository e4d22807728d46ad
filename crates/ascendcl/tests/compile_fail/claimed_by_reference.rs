// A reference to a claimed region is no copy endpoint of any scope: only the region itself is,
// and only in its own scope.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let mut out = vec![0u8; 16];
    sa.scope(|s| {
        let c = s.claim(&mut d);
        sb.scope(|t| t.copy(&mut out, &c))
    })?;
    Ok(())
}
