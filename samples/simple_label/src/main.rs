//! `simple_label`: the CANN runtime's `label/0_simple_label` sample in safe Rust.
//!
//! A model runtime instance is built (`aclmdlRIBuildBegin`) on a persistent stream
//! (`ACL_STREAM_PERSISTENT`, bound with `aclmdlRIBindStream`); a branch index is copied to
//! device memory; two labels and a list of both are created; the stream records a switch that
//! reads the index when the model runs (`aclrtSwitchLabelByIndex`) and then sets the labels
//! (`aclrtSetLabel`). The reference sample sets the labels back to back; here each label is
//! followed by a marker write, so that the branch taken is checked: the model executes on
//! another stream (`aclmdlRIExecuteAsync`) with index 1, then again with index 0.

use sample_common::report;

use ascendcl::{
    DeviceBuffer, Label, LabelList, MallocPolicy, Model, Runtime, StreamFlags, StreamRole,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the simple_label sample successfully.";
const FAIL: &str = "Run the simple_label sample failed.";
const LABELS: usize = 2;
/// What the stream writes after each label.
const MARKERS: [u8; LABELS] = [0xA0, 0xB1];

fn run() -> Result<(), Box<dyn Error>> {
    let branch_index: u32 = 1;
    let rt = Runtime::new()?; // aclInit
    info!("ACL initialized.");
    let device = rt.device(0)?; // aclrtSetDevice
    info!("Device {} selected.", device.id());
    let label_stream = device.create_stream_with(StreamFlags::PERSISTENT, 0)?;
    info!("Persistent label stream created.");
    let execute_stream = device.create_stream()?;
    info!("Execute stream created.");

    let mut model = Model::new(&device);
    let index = model.adopt(DeviceBuffer::<u32>::zeroed(
        &device,
        1,
        MallocPolicy::HugeFirst,
    )?);
    info!("Allocated device memory for branch index.");
    model.copy_from_host(index, &[branch_index])?; // aclrtMemcpy, host to device
    info!("Copied branch index {branch_index} from host to device.");
    let marker = model.adopt(DeviceBuffer::<u8>::zeroed(
        &device,
        4,
        MallocPolicy::HugeFirst,
    )?);
    let labels = [Label::new(&device)?, Label::new(&device)?]; // aclrtCreateLabel
    for i in 0..LABELS {
        info!("Created label {i}.");
    }
    let list = LabelList::new(&[&labels[0], &labels[1]])?; // aclrtCreateLabelList
    info!("Created label list with {} labels.", list.len());

    model.build(|b| {
        info!("Model runtime instance build started.");
        let s = b.bind(label_stream, StreamRole::Head)?; // aclmdlRIBindStream
        info!("Persistent label stream bound to the model runtime instance.");
        b.switch_label(s, index, &list)?; // aclrtSwitchLabelByIndex
        info!("Submitted switch-label task with branch index {branch_index}.");
        for (i, label) in labels.iter().enumerate() {
            b.set_label(s, label)?; // aclrtSetLabel
            info!("Set label {i} on the persistent stream.");
            b.fill_bytes(s, marker, MARKERS[i])?;
            b.end(s)?; // aclmdlRIEndTask: the branch ends here
        }
        Ok(())
    })?; // aclmdlRIEndTask, aclmdlRIBuildEnd
    info!("Model runtime instance build finished.");

    for branch in [branch_index, 0] {
        model.copy_from_host(index, &[branch])?;
        model.copy_from_host(marker, &[0; 4])?;
        execute_stream.scope(|s| s.execute(&mut model))?; // aclmdlRIExecuteAsync, synchronised
        let got = model.get(marker)?.to_vec()?;
        let want = vec![MARKERS[branch as usize]; 4];
        if got != want {
            return Err(format!("branch {branch}: expected {want:?}, got {got:?}").into());
        }
        if branch == branch_index {
            info!("Switch label executed successfully with branch index {branch_index}.");
        } else {
            info!(
                "Switch label executed successfully with branch index {branch} (index rewritten)."
            );
        }
    }

    drop(model); // aclmdlRIUnbindStream, aclmdlRIDestroy, aclrtFree
    drop(list); // aclrtDestroyLabelList
    drop(labels); // aclrtDestroyLabel
    execute_stream.destroy()?; // aclrtDestroyStream
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
