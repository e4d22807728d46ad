//! A value write is a destination: it needs the buffer exclusively, so a buffer the host (or
//! another operation) still reads cannot be written by the device meanwhile.
fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let buf = device.alloc_zeros::<u64>(1)?;
    stream.scope(|s| s.write_value(&buf, 1))?;
    Ok(())
}
