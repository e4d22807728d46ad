// Two scopes never share a brand: a helper that wants one lifetime for both cannot be called
// with the scopes of two streams.
use ascendcl::{Claimed, DeviceBuffer, MallocPolicy, Runtime, Scope};

fn both<'scope, 'env>(
    a: &'scope Scope<'scope, 'env>,
    b: &'scope Scope<'scope, 'env>,
    c: Claimed<'scope, u8>,
) -> ascendcl::Result<()> {
    a.fill_bytes(c, 1)?;
    b.fill_bytes(c, 2)
}

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (sa, sb) = (dev.create_stream()?, dev.create_stream()?);
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    sa.scope(|s| {
        let c = s.claim(&mut d);
        sb.scope(|t| both(s, t, c))
    })?;
    Ok(())
}
