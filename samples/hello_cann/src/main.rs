//! `hello_cann`: the CANN runtime's `0_quickstart/0_hello_cann` sample in safe Rust.
//!
//! The smallest closed loop of a computation: initialise (`aclInit`), open device 0
//! (`aclrtSetDevice`), create a stream (`aclrtCreateStream`), put two vectors on the device
//! (`aclrtMalloc`, `aclrtMemcpy`), compute `out = self + alpha * other` on the stream, wait for
//! it (`aclrtSynchronizeStream`), copy the result back and release everything. The reference
//! computes with the operator library's `aclnnAdd`; with its `alpha` of 1 the runtime's built-in
//! element-wise sum (`aclrtReduceAsync`, SUM, `out += other` on `out = self`) computes the same,
//! so the sample needs no operator library (and has no operator workspace or data-buffer
//! descriptor to print). Every element is checked against the host's `self + alpha * other`.

use sample_common::report;

use ascendcl::{ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Sample run successfully!";
const FAIL: &str = "Sample run failed.";

/// The reference's inputs.
const SELF: [f32; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
const OTHER: [f32; 8] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0];
/// The one `alpha` for which `out = self + alpha * other` is the built-in sum.
const ALPHA: f32 = 1.0;

/// `[1.0, 2.0, ...]` as the reference's `%.1f` list.
fn list(v: &[f32]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:.1}")).collect();
    format!("[{}]", items.join(", "))
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    info!("ACL init successfully");
    // What the runtime reports about itself: the devices it sees, their SoC, its API version.
    info!("Device count: {}", rt.device_count()?); // aclrtGetDeviceCount
    info!("SoC: {}", rt.soc_name()?); // aclrtGetSocName
    info!("ACL version: {}", rt.version()?); // aclrtGetVersion
    let device_id = 0;
    let device = rt.device(device_id)?; // aclrtSetDevice
    info!("Set device {device_id} successfully");
    let stream = device.create_stream()?; // aclrtCreateStream
    info!("Create stream successfully");

    println!("Input vectors:");
    println!("  self:   {}", list(&SELF));
    println!("  other:  {}", list(&OTHER));
    println!("  alpha:  {ALPHA:.1}");

    // The reference's CreateAclTensor: aclrtMalloc and aclrtMemcpy for each input and the
    // output; here the output starts as `self`, which the sum adds `other` to.
    let other = device.clone_htod(&OTHER)?;
    let mut out = device.clone_htod(&SELF)?;
    stream.scope(|s| {
        s.reduce(&mut out, &other, ReduceKind::Sum)?; // aclrtReduceAsync
        info!("Launch the add (aclrtReduceAsync, SUM) successfully");
        Ok(())
    })?; // aclrtSynchronizeStream when the scope ends
    info!("Synchronize stream successfully");

    let result = out.copy_to_vec()?; // aclrtMemcpy, device to host
    println!();
    println!("Vector addition result:");
    let mut wrong = None;
    for (i, r) in result.iter().enumerate() {
        let expected = SELF[i] + ALPHA * OTHER[i];
        println!("  result[{i}] = {r:.1} (expected: {expected:.1})");
        if *r != expected && wrong.is_none() {
            wrong = Some(format!("result[{i}] = {r}, expected {expected}"));
        }
    }
    if let Some(w) = wrong {
        return Err(w.into());
    }

    other.free()?; // aclrtFree
    out.free()?;
    info!("Free device memory successfully");
    stream.destroy()?; // aclrtDestroyStream
    info!("Destroy stream successfully");
    device.reset_force()?; // aclrtResetDeviceForce
    info!("Reset device successfully");
    rt.finalize()?; // aclFinalize
    info!("ACL finalize successfully");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
