// A claimed region cannot be kept in a variable of the enclosing function and handed to the
// next scope of another stream.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    let mut stash = Vec::new();
    sa.scope(|s| {
        let c = s.claim(&mut d);
        s.fill_bytes(c, 1)?;
        stash.push(c);
        sb.scope(|t| t.fill_bytes(stash[0], 2))
    })?;
    Ok(())
}
