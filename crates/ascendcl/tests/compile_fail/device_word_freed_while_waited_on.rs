//! A value wait reads the word when the stream reaches it: the scope borrows the word until it
//! has waited for the stream, so the word cannot be freed while the task is queued.
fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let word = ascendcl::DeviceWord::new(&device, 0)?;
    stream.scope(|s| {
        s.wait_word(&word, 1, ascendcl::ValueCompare::Eq)?;
        let _ = word.free();
        Ok(())
    })?;
    Ok(())
}
