// A device is selected per thread: it cannot move to another thread.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    std::thread::scope(|s| -> ascendcl::Result<()> {
        let dev = rt.device(0)?;
        s.spawn(move || dev.synchronize());
        Ok(())
    })
}
