// Claiming through the outer scope from inside another stream's scope still gives the outer
// scope's brand, which the inner scope refuses.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut h = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    sa.scope(|s| {
        sb.scope(|t| {
            let c = s.claim(&mut h);
            s.copy(c, &d)?;
            t.copy(c, &d)
        })
    })?;
    Ok(())
}
