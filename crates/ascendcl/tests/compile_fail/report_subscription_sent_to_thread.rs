// A report subscription owns its report thread and is closed by the thread that opened it: it
// cannot move to another thread (nor into one of its own callbacks, which would wait for itself).
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let sub = stream.subscribe_report()?;
    std::thread::spawn(move || sub.close());
    Ok(())
}
