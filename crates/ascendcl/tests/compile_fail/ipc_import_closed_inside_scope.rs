//! A scope borrows the import until the stream is idle: it cannot be closed under a queued copy.
use ascendcl::{IpcImportFlags, IpcMemImport, IpcMemKey};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let key: IpcMemKey = "key-from-another-process".parse()?;
    let mut import = IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty())?;
    let src = ascendcl::HostBuffer::<u32>::zeroed(&device, import.len())?;
    stream.scope(|s| {
        s.copy(&mut import, &src)?;
        import.close()?;
        Ok(())
    })?;
    Ok(())
}
