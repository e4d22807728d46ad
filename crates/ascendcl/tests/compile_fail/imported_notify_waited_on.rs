//! A notify of another process may only be recorded here: waiting on it is not offered (the
//! runtime refuses it; only its creator waits).
use ascendcl::{ImportedNotify, NotifyImportFlags, NotifyKey};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let key: NotifyKey = "key-from-another-process".parse()?;
    let notify = ImportedNotify::open(&device, &key, NotifyImportFlags::empty())?;
    stream.scope(|s| s.wait_notify(&notify, None))?;
    Ok(())
}
