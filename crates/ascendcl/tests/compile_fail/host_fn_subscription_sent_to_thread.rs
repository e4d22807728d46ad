// A host-function subscription owns its thread and is closed by the thread that opened it.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let sub = stream.subscribe_host_fns()?;
    std::thread::spawn(move || drop(sub)).join().unwrap();
    Ok(())
}
