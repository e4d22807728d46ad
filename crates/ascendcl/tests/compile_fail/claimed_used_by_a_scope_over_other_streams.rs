//! A region claimed by a scope over two streams, used by another scope over other streams
//! (which knows nothing of its uses): refused by the brand.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let (a, b, c) = (dev.create_stream()?, dev.create_stream()?, dev.create_stream()?);
    let mut x = dev.alloc_zeros::<u32>(4)?;
    let mut y = dev.alloc_zeros::<u32>(4)?;
    ascendcl::scope([&a, &b], |[sa, _]| {
        let xc = sa.claim(&mut x);
        ascendcl::scope([&c], |[sc]| sc.copy(&mut y, xc))
    })
}
