//! A wait on a notify runs when the stream reaches it: the scope borrows the notify until it
//! has waited for the stream, so the notify cannot be destroyed while the task is queued.
fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let notify = ascendcl::Notify::new(&device)?;
    stream.scope(|s| {
        s.wait_notify(&notify, None)?;
        drop(notify);
        Ok(())
    })?;
    Ok(())
}
