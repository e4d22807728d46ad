// A part of a claimed region (Claimed::slice) keeps the brand of the scope that claimed it.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    sa.scope(|s| {
        let c = s.claim(&mut d);
        s.fill_bytes(c, 1)?;
        let half = c.slice(..8)?;
        sb.scope(|t| t.fill_bytes(half, 2))?;
        Ok(())
    })?;
    Ok(())
}
