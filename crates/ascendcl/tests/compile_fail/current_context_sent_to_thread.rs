// The proof that a context is current holds on the thread that made it current only.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let ctx = dev.create_context()?;
    ctx.bind(|current| {
        std::thread::scope(|t| {
            t.spawn(|| current.as_raw());
        });
    })?;
    Ok(())
}
