//! `device_p2p`: the CANN runtime's `device/2_device_P2P` sample in safe Rust.
//!
//! Asks whether devices 0 and 1 can reach each other (`aclrtDeviceCanAccessPeer`), enables
//! peer access both ways (`aclrtDeviceEnablePeerAccess`), copies a buffer from device 0 to
//! device 1 (`aclrtMemcpy`), then from device 1 to the host, checks the value, and disables the
//! access again (`aclrtDeviceDisablePeerAccess`).

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the device_p2p sample successfully.";
const FAIL: &str = "Run the device_p2p sample failed.";
/// The value the reference checks.
const VALUE: i32 = 103;
const LEN: usize = 256;

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let count = rt.device_count()?;
    if count < 2 {
        return Err(format!("the sample needs two devices, the runtime has {count}").into());
    }
    let d0 = rt.device(0)?; // aclrtSetDevice(0)
    let d1 = rt.device(1)?; // aclrtSetDevice(1)
    let can = d0.can_access_peer(&d1)?; // aclrtDeviceCanAccessPeer
    info!("Device 0 can access device 1: {can}");
    if !can {
        return Err("device 0 cannot access device 1".into());
    }
    let peer = d0.enable_peer_access(&d1)?; // aclrtDeviceEnablePeerAccess, both ways
    info!("Peer access between devices {:?} enabled", peer.devices());

    let src = DeviceBuffer::from_slice(&d0, &[VALUE; LEN], MallocPolicy::HugeFirst)?;
    let mut dst = DeviceBuffer::<i32>::zeroed(&d1, LEN, MallocPolicy::HugeFirst)?;
    peer.copy(&mut dst, &src)?; // aclrtMemcpy, device 0 to device 1
    info!("Memcpy from device 0 to device 1 success");
    let host = dst.to_vec()?; // aclrtMemcpy, device 1 to host
    info!("Memcpy from device 1 to host success");
    info!("Value on the host: {}", host[0]);
    if host.iter().any(|&x| x != VALUE) {
        return Err(format!("expected {VALUE} in every element after the copies").into());
    }

    dst.free()?; // aclrtFree
    src.free()?;
    peer.disable()?; // aclrtDeviceDisablePeerAccess, both ways
    info!("Peer access disabled");
    d1.reset()?; // aclrtResetDevice
    d0.reset()?;
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
