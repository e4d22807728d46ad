// A group's stream cannot leave the closure: operations issued through it later would be
// captured by no group.
fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let escaped = hccl::group(|g| Ok(g.on(&stream)))?;
    let _ = escaped;
    Ok(())
}
