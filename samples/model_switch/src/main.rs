//! `model_switch`: the CANN runtime's `model_ri/2_model_switch` sample in safe Rust.
//!
//! A model runtime instance is built (`aclmdlRIBuildBegin`) on five persistent streams
//! (`ACL_STREAM_PERSISTENT`): the head stream computes `out1 = self1 + alpha * other1`, copies
//! a selector into a device value, and records two stream switches (`aclrtSwitchStream`): to
//! stream 3 when the value is 1, to stream 4 when it is 2. Stream 3 computes `out3`; stream 4
//! activates stream 2 (`aclrtActiveStream`), which computes `out2`; streams 2 and 3 each
//! activate the end stream. The model executes on another stream (`aclmdlRIExecuteAsync`)
//! with selector 1, then, the selector rewritten, with 2.
//!
//! The reference computes each `out = self + alpha * other` with `aclnnAdd`; here `alpha *
//! other` is formed on the host and the device adds it (the built-in sum, `aclrtReduceAsync`),
//! which gives the same values. Before the second execution the outputs are cleared on the
//! device too (the reference clears only its host copies), so that the second run shows which
//! branch ran: `out3` stays 0 and `out2` is written. Every output is checked on the host.

use sample_common::report;

use ascendcl::{
    Condition, DeviceBuffer, MallocPolicy, Model, ReduceKind, Runtime, Slot, StreamFlags,
    StreamRole,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the model_switch sample successfully.";
const FAIL: &str = "Run the model_switch sample failed.";
/// Elements of each vector (the reference's shape 4 x 2).
const N: usize = 8;
const ALPHA: f32 = 1.2;
/// `self` and `other` of the three computations.
const SELF: [f32; 3] = [1.0, 2.0, 3.0];
const OTHER: f32 = 2.0;

type Res<T = ()> = Result<T, Box<dyn Error>>;
type F32s = DeviceBuffer<f32>;

/// The reference's `PrintArray`.
fn print_array(v: &[f32]) {
    let items: Vec<String> = v.iter().map(|x| format!("{x:.4}")).collect();
    info!("The vector data is: {}", items.join("  "));
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let zeros = |n| DeviceBuffer::<f32>::zeroed(&device, n, MallocPolicy::HugeFirst);
    let ints = || DeviceBuffer::<i32>::zeroed(&device, 1, MallocPolicy::HugeFirst);

    let mut model = Model::new(&device);
    let mut selfs: Vec<Slot<F32s>> = Vec::new();
    let mut others: Vec<Slot<F32s>> = Vec::new();
    let mut outs: Vec<Slot<F32s>> = Vec::new();
    for s in SELF {
        let x = model.adopt(zeros(N)?);
        model.copy_from_host(x, &[s; N])?; // aclrtMemcpy
        let y = model.adopt(zeros(N)?);
        model.copy_from_host(y, &[OTHER * ALPHA; N])?;
        selfs.push(x);
        others.push(y);
        outs.push(model.adopt(zeros(N)?));
    }
    let right = [model.adopt(ints()?), model.adopt(ints()?)];
    model.copy_from_host(right[0], &[1])?;
    model.copy_from_host(right[1], &[2])?;
    let selector = model.adopt(ints()?); // the value the switches compare
    let target = model.adopt(ints()?); // what the head stream copies into it
    model.copy_from_host(target, &[1])?;

    let persistent = || device.create_stream_with(StreamFlags::PERSISTENT, 0);
    let (s1, s2, s3, s4, end) = (
        persistent()?,
        persistent()?,
        persistent()?,
        persistent()?,
        persistent()?,
    ); // aclrtCreateStreamWithConfig
    let execute_stream = device.create_stream()?; // aclrtCreateStream

    model.build(|b| {
        let s1 = b.bind(s1, StreamRole::Head)?; // aclmdlRIBindStream
        let s2 = b.bind(s2, StreamRole::OnActivation)?;
        let s3 = b.bind(s3, StreamRole::OnActivation)?;
        let s4 = b.bind(s4, StreamRole::OnActivation)?;
        let end = b.bind(end, StreamRole::OnActivation)?;
        let add = |on, i: usize| -> ascendcl::Result<()> {
            b.copy(on, outs[i], selfs[i])?; // out = self
            b.reduce(on, outs[i], others[i], ReduceKind::Sum) // out += alpha * other
        };
        add(s1, 0)?;
        b.copy(s1, selector, target)?; // aclrtMemcpyAsync, device to device
        add(s2, 1)?;
        b.activate(s2, end)?; // aclrtActiveStream
        add(s3, 2)?;
        b.activate(s3, end)?;
        b.switch_stream(s1, selector, Condition::Equal, right[0], s3)?; // aclrtSwitchStream
        b.switch_stream(s1, selector, Condition::Equal, right[1], s4)?;
        b.activate(s4, s2)?;
        Ok(())
    })?; // aclmdlRIEndTask, aclmdlRIBuildEnd

    let want = |i: usize| SELF[i] + OTHER * ALPHA;
    for (run, value) in [(0, 1), (1, 2)] {
        if run == 1 {
            model.copy_from_host(target, &[value])?;
            for &o in &outs {
                model.copy_from_host(o, &[0.0; N])?;
            }
        }
        execute_stream.scope(|s| s.execute(&mut model))?; // aclmdlRIExecuteAsync, synchronised
        // Selector 1: streams 1 and 3 ran; selector 2: streams 1, 4 and 2.
        let ran = if value == 1 {
            [true, false, true]
        } else {
            [true, true, false]
        };
        let when = if run == 0 {
            "After executing"
        } else {
            "After second execution"
        };
        for (i, &o) in outs.iter().enumerate() {
            let got = model.get(o)?.to_vec()?;
            info!("{when}, print data{}.", i + 1);
            print_array(&got);
            let expect = if ran[i] { want(i) } else { 0.0 };
            if got.iter().any(|&v| v != expect) {
                return Err(format!(
                    "selector {value}: data{} is {got:?}, expected {expect} everywhere",
                    i + 1
                )
                .into());
            }
        }
    }

    drop(model); // aclmdlRIUnbindStream, aclmdlRIDestroy, aclrtFree
    execute_stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
