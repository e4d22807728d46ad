// A stream belongs to a context that is current per thread: it cannot be shared with another
// thread.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    std::thread::scope(|s| {
        s.spawn(|| stream.synchronize());
    });
    Ok(())
}
