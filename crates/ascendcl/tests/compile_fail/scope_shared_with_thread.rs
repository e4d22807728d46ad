// A scope belongs to the `Stream::scope` call (and thread) that waits for it: it cannot be
// shared with another thread, even one that the closure joins.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut buf = dev.alloc_zeros::<u8>(16)?;
    stream.scope(|s| {
        std::thread::scope(|t| {
            t.spawn(|| s.fill_bytes(&mut buf, 1));
        });
        Ok(())
    })?;
    Ok(())
}
