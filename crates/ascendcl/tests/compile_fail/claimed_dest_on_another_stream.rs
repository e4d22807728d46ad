// The reviewer's case: a region claimed by one stream's scope written by two streams at once.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut h = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let d1 = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let d2 = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    sa.scope(|s| {
        let c = s.claim(&mut h);
        s.copy(c, &d1)?;
        sb.scope(|t| t.copy(c, &d2))?;
        Ok(())
    })?;
    Ok(())
}
