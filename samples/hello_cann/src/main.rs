//! `hello_cann`: the quickstart. Initialises the runtime (`aclInit`), counts the devices
//! (`aclrtGetDeviceCount`), names the SoC (`aclrtGetSocName`) and the ACL version
//! (`aclrtGetVersion`), opens each device once (`aclrtSetDevice`, `aclrtResetDevice`) and
//! finalises (`aclFinalize`).

use ascendcl::Runtime;
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Hello CANN: the runtime answered on every device.";
const FAIL: &str = "Hello CANN failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    info!("Backend: {}", rt.backend().description);
    let count = rt.device_count()?; // aclrtGetDeviceCount
    info!("Device count: {count}");
    let soc = rt.soc_name()?; // aclrtGetSocName
    info!("SoC: {soc}");
    let version = rt.version()?; // aclrtGetVersion
    info!("ACL version: {version}");
    if count == 0 || soc.is_empty() {
        return Err("the runtime reports no device or no SoC name".into());
    }
    for id in 0..count as i32 {
        let device = rt.device(id)?; // aclrtSetDevice
        if device.id() != id {
            return Err(format!("device {id} opened as {}", device.id()).into());
        }
        info!("Device {id} opened and reset");
        device.reset()?; // aclrtResetDevice
    }
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
