//! `device_p2p`: the CANN runtime's `device/2_device_P2P` sample in safe Rust.
//!
//! Needs two devices (with fewer it says `[SKIP]` and passes, as the reference does). Asks
//! whether device 0 can reach device 1 (`aclrtDeviceCanAccessPeer`), enables peer access both
//! ways (`aclrtDeviceEnablePeerAccess` on each device), sets 10 bytes of device 0 to a value
//! (`aclrtMalloc` with the P2P huge-first policy, `aclrtMemset`), copies them to zeroed memory of
//! device 1 (`aclrtMemcpy`, device to device) and from there to the host, checks every byte,
//! waits for the devices (`aclrtSynchronizeDevice`), disables the access both ways
//! (`aclrtDeviceDisablePeerAccess`) and resets both devices.
//!
//! The value is the reference's: `rand() % 256` with the C library's default seed, 103.

use sample_common::report;

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the device_P2P sample successfully.";
const FAIL: &str = "Run the device_P2P sample failed.";
/// The reference's value: glibc's first `rand()` (1804289383) modulo 256.
const VALUE: u8 = (1_804_289_383u32 % 256) as u8;
/// The reference's buffer size, in bytes.
const MEM_SIZE: usize = 10;

fn run() -> Result<(), Box<dyn Error>> {
    info!("Start to run device_P2P sample.");
    let rt = Runtime::new()?; // aclInit
    let count = rt.device_count()?; // aclrtGetDeviceCount
    if count < 2 {
        info!("[SKIP] Need at least 2 visible devices for P2P, but got {count}.");
        rt.finalize()?; // aclFinalize
        return Ok(());
    }
    let d0 = rt.device(0)?; // aclrtSetDevice(0)
    let d1 = rt.device(1)?; // aclrtSetDevice(1)
    if !d0.can_access_peer(&d1)? {
        // aclrtDeviceCanAccessPeer
        println!("[ERROR]  The device does not support peer access feature.");
        drop((d0, d1));
        rt.finalize()?;
        return Ok(());
    }
    let peer = d0.enable_peer_access(&d1)?; // aclrtDeviceEnablePeerAccess, 0 → 1 and 1 → 0

    let policy = MallocPolicy::HugeFirstP2p;
    let mut dev0 = DeviceBuffer::<u8>::zeroed(&d0, MEM_SIZE, policy)?; // aclrtMalloc
    dev0.fill_bytes(VALUE)?; // aclrtMemset
    let mut dev1 = DeviceBuffer::<u8>::zeroed(&d1, MEM_SIZE, policy)?;
    peer.copy(&mut dev1, &dev0)?; // aclrtMemcpy, device 0 to device 1
    info!("Device 0 to device 1 memcpy success.");

    let mut host = HostBuffer::<u8>::zeroed(&d1, MEM_SIZE)?; // aclrtMallocHost
    dev1.copy_to(&mut host)?; // aclrtMemcpy, device 1 to host
    info!("Device 1 to host memcpy success.");
    if let Some(i) = host.iter().position(|&b| b != VALUE) {
        return Err(format!("byte {i} read back is {}, expected {VALUE}", host[i]).into());
    }
    info!(
        "The data read from the memory is {}, verify success!",
        host[0]
    );

    d1.synchronize()?; // aclrtSynchronizeDevice
    peer.disable()?; // aclrtDeviceDisablePeerAccess, both ways
    host.free()?; // aclrtFreeHost
    dev1.free()?; // aclrtFree
    d1.reset_force()?; // aclrtResetDeviceForce(1)
    dev0.free()?;
    d0.reset_force()?; // aclrtResetDeviceForce(0)
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
