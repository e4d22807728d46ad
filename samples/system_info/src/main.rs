//! `system_info`: what the runtime says about the machine. The backend, ACL version
//! (`aclrtGetVersion`), SoC (`aclrtGetSocName`), device count (`aclrtGetDeviceCount`), each
//! device's HBM (`aclrtGetMemInfo`) and which devices reach which (`aclrtDeviceCanAccessPeer`).

use ascendcl::{MemAttr, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "System information gathered.";
const FAIL: &str = "System information incomplete.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let backend = rt.backend();
    info!("Backend: {}", backend.description);
    if !backend.reason.is_empty() {
        info!("Chosen because {}", backend.reason);
    }
    info!("ACL version: {}", rt.version()?);
    info!("SoC: {}", rt.soc_name()?);
    let count = rt.device_count()?;
    info!("Device count: {count}");
    let devices = (0..count as i32)
        .map(|id| rt.device(id))
        .collect::<Result<Vec<_>, _>>()?;
    for d in &devices {
        let hbm = d.mem_info(MemAttr::Hbm)?;
        info!(
            "Device {}: HBM {} MiB total, {} MiB free",
            d.id(),
            hbm.total >> 20,
            hbm.free >> 20
        );
        if hbm.total == 0 || hbm.free > hbm.total {
            return Err(format!("device {}: implausible HBM figures {hbm:?}", d.id()).into());
        }
    }
    for a in &devices {
        for b in devices.iter().filter(|b| b.id() != a.id()) {
            info!(
                "Device {} can access device {}: {}",
                a.id(),
                b.id(),
                a.can_access_peer(b)?
            );
        }
    }
    drop(devices); // aclrtResetDevice for each
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => {
            println!("[SUCCESS] {OK}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] {FAIL}");
            ExitCode::FAILURE
        }
    }
}
