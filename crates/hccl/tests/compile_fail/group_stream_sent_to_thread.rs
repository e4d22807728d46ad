// A group belongs to its thread: its streams cannot be handed to another.
fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    hccl::group(|g| {
        let s = g.on(&stream);
        std::thread::scope(|t| {
            t.spawn(move || {
                let _moved = s;
            });
        });
        Ok(())
    })
}
