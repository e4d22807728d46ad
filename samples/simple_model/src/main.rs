//! `simple_model`: the CANN runtime's `model_ri/0_simple_model` sample in safe Rust.
//!
//! The reference sample captures a stream's tasks — a host-to-device copy of `self`, then the
//! operators `out = (self + other * alpha) * other` — into a model runtime instance
//! (`aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`) and executes it four times
//! (`aclmdlRIExecuteAsync`), printing `out` each time. The built-in tasks of the runtime have no
//! multiply, so here the model computes the same vector with copies and element-wise sums
//! (`aclrtReduceAsync`): `other * alpha` is staged from the host, and the product with
//! `other` (all 2) is the sum of the vector with itself. The result is checked against the
//! host's `(self + other * alpha) * other` after every execution.

use sample_common::report;

use ascendcl::{CaptureMode, DeviceBuffer, HostBuffer, MallocPolicy, Model, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the simple_model sample successfully.";
const FAIL: &str = "Run the simple_model sample failed.";
const LOOPS: usize = 4;

/// `ModelUtils::PrintArray` of the reference sample.
fn print_array(v: &[f32]) {
    // Each value followed by two spaces, as the reference's stream prints them.
    let s: String = v.iter().map(|x| format!("{x:.4}  ")).collect();
    info!("The vector data is: {s}");
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let self_data: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    let other_data = [2.0f32; 8];
    let alpha = 1.1f32;
    let want: Vec<f32> = self_data
        .iter()
        .zip(&other_data)
        .map(|(s, o)| (s + o * alpha) * o)
        .collect();
    if other_data.iter().any(|o| *o != 2.0) {
        return Err("the product with `other` is computed as a doubling: other must be 2".into());
    }
    let scaled: Vec<f32> = other_data.iter().map(|o| o * alpha).collect();

    let p = MallocPolicy::HugeFirst;
    let mut model = Model::new(&device);
    // aclrtMallocHost + aclrtMemcpy (host to host) of `self`; the device buffers (aclrtMalloc).
    let self_host = model.adopt(HostBuffer::from_slice(&device, &self_data)?);
    let self_dev = model.adopt(DeviceBuffer::<f32>::zeroed(&device, 8, p)?);
    let scaled_dev = model.adopt(DeviceBuffer::from_slice(&device, &scaled, p)?);
    let tmp = model.adopt(DeviceBuffer::<f32>::zeroed(&device, 8, p)?);
    let out = model.adopt(DeviceBuffer::<f32>::zeroed(&device, 8, p)?);
    let mut stream = device.create_stream()?; // aclrtCreateStream

    // aclmdlRICaptureBegin (GLOBAL) … aclmdlRICaptureEnd: the tasks are recorded, not run.
    model.capture(&mut stream, CaptureMode::Global, |c| {
        c.copy(self_dev, self_host)?; // aclrtMemcpyAsync, host to device
        c.copy(tmp, self_dev)?; // tmp = self
        c.reduce(tmp, scaled_dev, ReduceKind::Sum)?; // tmp = self + other * alpha
        c.copy(out, tmp)?; // out = tmp
        c.reduce(out, tmp, ReduceKind::Sum) // out = tmp * other (other = 2)
    })?;
    if model.get(out)?.to_vec()?.iter().any(|v| *v != 0.0) {
        return Err("the captured tasks ran during the capture".into());
    }

    for i in 0..LOOPS {
        info!("execute model, loop count: {}.", i + 1);
        stream.scope(|s| s.execute(&mut model))?; // aclmdlRIExecuteAsync + aclrtSynchronizeStream
        let got = model.get(out)?.to_vec()?; // aclrtMemcpy, device to host
        print_array(&got);
        if got.iter().zip(&want).any(|(g, w)| (g - w).abs() > 1e-4) {
            return Err(format!("loop {}: expected {want:?}, got {got:?}", i + 1).into());
        }
    }

    drop(model); // aclmdlRIDestroy, then aclrtFree / aclrtFreeHost of its buffers
    stream.destroy()?; // aclrtDestroyStream
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
