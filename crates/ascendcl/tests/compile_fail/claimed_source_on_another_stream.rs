// A region claimed by one stream's scope cannot be read by a copy of another stream's scope:
// the two streams are not ordered, so the second copy would race with the first one's writes.
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut h = HostBuffer::<u8>::zeroed(&dev, 16)?;
    let d1 = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let mut d2 = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    sa.scope(|s| {
        let c = s.claim(&mut h);
        s.copy(c, &d1)?;
        sb.scope(|t| t.copy(&mut d2, c))?;
        Ok(())
    })?;
    Ok(())
}
