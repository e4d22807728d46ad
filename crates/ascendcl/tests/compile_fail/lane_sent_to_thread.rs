//! A scope's stream as a `Lane` (what libraries keep) moved to another thread: refused, it is
//! not `Send`.
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    stream.scope(|s| {
        let lane = s.as_lane();
        std::thread::scope(|t| {
            t.spawn(move || lane.stream().synchronize());
        });
        Ok(())
    })
}
