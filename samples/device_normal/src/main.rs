//! `device_normal`: the CANN runtime's device lifecycle sample (`device/0_device_normal`) in
//! Rust. It sets device 0, creates a stream, puts two 4x2 tensors on the device, runs
//! `out = self + alpha * other` on them (the sample's `aclnnAdd`, here the AscendC kernel of
//! kernels/add.cpp launched through its generated launcher), synchronises, prints and checks the
//! result on the host, then synchronises the device and releases everything in order.
//!
//! Expected: `result[0..7]` = 1.2, 2.2, 3.2, 5.4, 6.4, 7.4, 9.6, 10.6, then `[SUCCESS] ...`
//! (`[FAILURE] ...` and exit status 1 otherwise).

use sample_common::report;

use ascendcl::Runtime;
use report::info;
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/add.rs"));
}

const SELF: [f32; 8] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
const OTHER: [f32; 8] = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
const ALPHA: f32 = 1.2;

fn run() -> Result<bool, Box<dyn Error>> {
    info!("Start to run device_normal sample.");
    let rt = Runtime::new()?; // aclInit
    match rt.soc_name() {
        Ok(soc) => info!("Current soc version is {soc}"),
        Err(e) => println!("[WARN]  the SoC name is unknown: {e}"),
    }
    let device = rt.device(0)?; // aclrtSetDevice(0)
    let stream = device.create_stream()?; // aclrtCreateStream

    // The tensors of shape (4, 2) on the device (aclrtMalloc, aclrtMemcpy).
    let self_dev = device.clone_htod(&SELF)?;
    let other_dev = device.clone_htod(&OTHER)?;
    let mut out_dev = device.clone_htod(&[0.0f32; 8])?;

    // The operator, then aclrtSynchronizeStream (the scope waits for the stream).
    stream.scope(|s| {
        kernels::add(s, 2, &self_dev, &other_dev, &mut out_dev, ALPHA, 8)?;
        Ok(())
    })?;

    let result = out_dev.copy_to_vec()?; // aclrtMemcpy device to host
    for (i, v) in result.iter().enumerate() {
        info!("result[{i}] is: {v:.6}");
    }
    device.synchronize()?; // aclrtSynchronizeDevice

    // Release in the reference order: buffers, stream, device, runtime.
    self_dev.free()?;
    other_dev.free()?;
    out_dev.free()?;
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize

    let expected: Vec<f32> = SELF.iter().zip(OTHER).map(|(s, o)| s + ALPHA * o).collect();
    let good = result
        .iter()
        .zip(&expected)
        .all(|(r, e)| (r - e).abs() <= 1e-5 * e.abs().max(1.0));
    if good {
        info!("Run the device_normal sample successfully.");
    } else {
        println!("[ERROR]  result {result:?}, expected {expected:?}");
    }
    Ok(good)
}

fn main() -> ExitCode {
    let outcome = run();
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] device_normal: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(true) => {
            println!("[SUCCESS] out = self + alpha * other on the device, checked on the host");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("[FAILURE] the device computed a wrong result");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] the device_normal sample did not run");
            ExitCode::FAILURE
        }
    }
}
