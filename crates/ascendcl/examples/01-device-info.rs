//! Hello, runtime: which backend runs the program, and what each device reports.
//!
//! `cargo run -p ascendcl --example 01-device-info` (the emulator where no CANN is installed;
//! `ASCENDCL_BACKEND=cann` insists on CANN).

use ascendcl::{MemAttr, Runtime};

fn main() -> ascendcl::Result<()> {
    // aclInit, on the backend ASCENDCL_BACKEND names (unset: CANN when found, else the emulator).
    let rt = Runtime::new()?;
    let backend = rt.backend();
    println!("backend:  {}", backend.description);
    if let Some(library) = &backend.library {
        println!("library:  {}", library.display());
    }
    if let Some(v) = backend.version {
        println!("ACL:      {}.{}.{}", v.major, v.minor, v.patch);
    }
    println!(
        "SoC:      {}",
        backend.soc_name.as_deref().unwrap_or("unknown")
    );

    let count = rt.device_count()?; // aclrtGetDeviceCount
    println!("devices:  {count}");
    for id in 0..count as i32 {
        let device = rt.device(id)?; // aclrtSetDevice
        let hbm = device.mem_info(MemAttr::Hbm)?; // aclrtGetMemInfo
        println!(
            "device {id}: {} MiB of HBM, {} MiB free",
            hbm.total >> 20,
            hbm.free >> 20
        );
    } // aclrtResetDevice when each `Device` is dropped
    Ok(())
} // aclFinalize when the last `Runtime` is dropped
