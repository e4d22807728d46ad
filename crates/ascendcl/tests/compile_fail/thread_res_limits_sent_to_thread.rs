//! The runtime keeps "use this stream's limits" per thread: the guard that undoes it must be
//! dropped by the thread that took it, so it cannot move to another thread.
fn main() -> ascendcl::Result<()> {
    let stream = ascendcl::Runtime::new()?.device(0)?.create_stream()?;
    let guard = stream.use_res_limits()?;
    std::thread::spawn(move || drop(guard));
    Ok(())
}
