//! `model_update`: the CANN runtime's `model_ri/1_model_update` sample in safe Rust.
//!
//! The reference sample captures `out = (self + other * alpha) + other * alpha`, the second add
//! inside a task group (`aclmdlRICaptureTaskGrpBegin` / `...End`); it executes the model, then
//! replaces the group's add by one with `alpha = 2.2` (`aclmdlRICaptureTaskUpdateBegin` /
//! `...End` on another stream) and executes again. Here the adds are element-wise sums
//! (`aclrtReduceAsync`) with `other * alpha` staged from the host (the built-in tasks have no
//! multiply); both executions are checked against the host's computation.

use sample_common::report;

use ascendcl::{CaptureMode, DeviceBuffer, MallocPolicy, Model, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the model_update sample successfully.";
const FAIL: &str = "Run the model_update sample failed.";

/// `ModelUtils::PrintArray` of the reference sample.
fn print_array(v: &[f32]) {
    // Each value followed by two spaces, as the reference's stream prints them.
    let s: String = v.iter().map(|x| format!("{x:.4}  ")).collect();
    info!("The vector data is: {s}");
}

fn check(loop_: usize, got: &[f32], want: &[f32]) -> Result<(), Box<dyn Error>> {
    if got.iter().zip(want).any(|(g, w)| (g - w).abs() > 1e-4) {
        return Err(format!("loop {loop_}: expected {want:?}, got {got:?}").into());
    }
    Ok(())
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let self_data: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    let other = [2.0f32; 8];
    let (alpha, update_alpha) = (1.1f32, 2.2f32);
    let times = |a: f32| -> Vec<f32> { other.iter().map(|o| o * a).collect() };
    let host = |second: f32| -> Vec<f32> {
        self_data
            .iter()
            .zip(&other)
            .map(|(s, o)| (s + o * alpha) + o * second)
            .collect()
    };

    let p = MallocPolicy::HugeFirst;
    let mut model = Model::new(&device);
    let self_dev = model.adopt(DeviceBuffer::from_slice(&device, &self_data, p)?);
    let scaled = model.adopt(DeviceBuffer::from_slice(&device, &times(alpha), p)?);
    let scaled_update = model.adopt(DeviceBuffer::from_slice(&device, &times(update_alpha), p)?);
    let out_tmp = model.adopt(DeviceBuffer::<f32>::zeroed(&device, 8, p)?);
    let out = model.adopt(DeviceBuffer::<f32>::zeroed(&device, 8, p)?);
    let mut stream = device.create_stream()?;
    let mut update_stream = device.create_stream()?;

    let group = model.capture(&mut stream, CaptureMode::Relaxed, |c| {
        c.copy(out_tmp, self_dev)?;
        c.reduce(out_tmp, scaled, ReduceKind::Sum)?; // outTmp = self + other * alpha
        c.copy(out, out_tmp)?;
        // The updatable part: out = outTmp + other * alpha.
        c.task_group(|g| g.reduce(out, scaled, ReduceKind::Sum))
    })?;

    for i in 0..2 {
        info!("Execute model, loop count: {}.", i + 1);
        let second = if i == 1 {
            // aclmdlRICaptureTaskUpdateBegin … End on the update stream, waited for.
            model.update(&mut update_stream, &group, |u| {
                u.reduce(out, scaled_update, ReduceKind::Sum)
            })?;
            info!("Update alpha value of the group's add");
            update_alpha
        } else {
            alpha
        };
        stream.scope(|s| s.execute(&mut model))?; // aclmdlRIExecuteAsync, synchronised
        let got = model.get(out)?.to_vec()?;
        print_array(&got);
        check(i + 1, &got, &host(second))?;
    }

    drop(model); // aclmdlRIDestroy and the buffers
    update_stream.destroy()?;
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
