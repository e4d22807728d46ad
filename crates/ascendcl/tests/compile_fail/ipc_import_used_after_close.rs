//! Closing an import consumes it: the imported memory cannot be used afterwards.
use ascendcl::{IpcImportFlags, IpcMemImport, IpcMemKey};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let key: IpcMemKey = "key-from-another-process".parse()?;
    let import = IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty())?;
    import.close()?;
    let values = import.to_vec()?;
    drop(values);
    Ok(())
}
