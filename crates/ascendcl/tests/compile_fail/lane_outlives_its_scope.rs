//! The scope on another stream ([`Scope::on`]) kept beyond the scope: refused.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (a, b) = (dev.create_stream()?, dev.create_stream()?);
    let kept = a.scope(|s| s.on(&b))?;
    let mut x = dev.alloc_zeros::<u32>(4)?;
    kept.fill(&mut x, 1)
}
