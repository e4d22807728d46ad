//! `profiling_msproftx`: the CANN runtime's `profiling/1_msproftx` sample in Rust.
//!
//! A collection session (`aclprofInit`, `aclprofCreateConfig` with task time and msproftx,
//! `aclprofStart`, through [`profile::Session`]) into `./output`; inside it a training step
//! (`aclprofGetStepTimestamp` START … END, raw FFI: the safe API has no step type), a mark, an
//! outer range `Model execute` holding a `Preprocess` range and a nested `Nested operator
//! dispatch` range (the reference's push/pop and start/stop ranges are both
//! [`profile::range`] guards here), a second mark; then `aclprofStop`, `aclprofDestroyConfig`,
//! `aclprofFinalize`. Where the reference sleeps (1, 1 and 3 s) to stand for work, this sample
//! queues real stream work (copies and a built-in reduce) and waits for it, so that the
//! timeline shows the ranges around the tasks.
//!
//! On the emulator the session writes a Chrome trace / Perfetto JSON file into `./output`
//! (docs/emulator.md, "Profiling"); the sample reads it back and checks the ranges' nesting and
//! that the stream's tasks lie inside them. On CANN the directory holds msprof's data, which
//! msprof's tools read.

use sample_common::report;

use ascendcl::{DeviceBuffer, ReduceKind, Runtime, Stream, profile, raw, sys};
use report::info;
use serde_json::Value;
use std::error::Error;
use std::path::Path;
use std::process::ExitCode;

const OK: &str = "Run the msproftx sample successfully.";
const FAIL: &str = "Run the msproftx sample failed.";
/// Where the reference writes its data.
const OUTPUT: &str = "output";
/// Elements of the buffers the "model" works on.
const N: usize = 1 << 18;

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// The step's timestamp `tag` on `stream` (`aclprofGetStepTimestamp`).
fn step_timestamp(
    step: *mut sys::aclprofStepInfo,
    tag: sys::aclprofStepTag,
    stream: &Stream,
) -> Res {
    stream.make_current()?;
    // SAFETY: a live step info of this sample and a live stream of the current context.
    unsafe { raw::aclprofGetStepTimestamp(step, tag, stream.as_raw()) }?;
    Ok(())
}

/// The work inside the ranges: `y += x` on the device, `rounds` times, waited for.
fn work(stream: &Stream, y: &mut DeviceBuffer<f32>, x: &DeviceBuffer<f32>, rounds: u32) -> Res {
    stream.scope(|s| {
        let y = s.claim(y);
        for _ in 0..rounds {
            s.reduce(y, x, ReduceKind::Sum)?; // aclrtReduceAsync
        }
        Ok(())
    })?;
    Ok(())
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    println!("-------- Start --------");
    let output = Path::new(OUTPUT);
    let session = profile::Session::start(&rt, output, &[0])?; // aclprofInit, CreateConfig, Start
    info!("profiling init done");
    info!("profiling start");
    // SAFETY: no arguments; the step info is this sample's until destroyed below.
    let step = unsafe { raw::aclprofCreateStepInfo() };
    if step.is_null() {
        return Err("aclprofCreateStepInfo returned NULL".into());
    }
    step_timestamp(step, sys::ACL_STEP_START, &stream)?;
    profile::mark(&rt, "step begins")?; // aclprofMark
    {
        let _model = profile::range(&rt, "Model execute")?; // aclprofRangeStart
        info!("Model execute start");
        let x = device.clone_htod(&vec![1.0f32; N])?; // aclrtMalloc, aclrtMemcpy
        let mut y = device.clone_htod(&vec![0.0f32; N])?;
        {
            let _pre = profile::range(&rt, "Preprocess")?;
            info!("Preprocess range start");
            work(&stream, &mut y, &x, 2)?;
            info!("Preprocess range stop");
        }
        {
            let _dispatch = profile::range(&rt, "Nested operator dispatch")?;
            info!("Nested operator dispatch range start");
            work(&stream, &mut y, &x, 3)?;
            info!("Nested operator dispatch range stop");
        }
        profile::mark_on(&stream, "outputs ready")?; // aclprofMarkEx
        let out = y.copy_to_vec()?;
        if out.iter().any(|&v| v != 5.0) {
            return Err(format!("y = {} after five sums of ones, expected 5", out[0]).into());
        }
        info!("Model execute end");
    } // aclprofRangeStop
    step_timestamp(step, sys::ACL_STEP_END, &stream)?;
    // SAFETY: the step info created above, destroyed once.
    unsafe { raw::aclprofDestroyStepInfo(step) };
    stream.synchronize()?;
    session.stop()?; // aclprofStop, aclprofDestroyConfig, aclprofFinalize
    info!("profiling stop and finalize done");
    if rt.backend().is_emulator() {
        check_trace(output)?;
    }
    println!("-------- End --------");
    stream.destroy()?;
    device.reset()?;
    Ok(())
}

/// The newest trace file in `dir` (the emulator's `ascendcl_emu_trace_<pid>_<n>.json`).
fn newest_trace(dir: &Path) -> Res<std::path::PathBuf> {
    let mine = format!("ascendcl_emu_trace_{}_", std::process::id());
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&mine) && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .pop()
        .ok_or_else(|| format!("no trace of this process in {}", dir.display()).into())
}

/// Reads the trace back: the three ranges nest, the stream's reduces lie inside the two inner
/// ones, the marks are there.
fn check_trace(dir: &Path) -> Res {
    let path = newest_trace(dir)?;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let events = doc["traceEvents"].as_array().ok_or("no traceEvents")?;
    let span = |name: &str| -> Res<(f64, f64)> {
        let e = events
            .iter()
            .find(|e| e["ph"] == "X" && e["name"] == name)
            .ok_or_else(|| format!("the trace has no {name:?}"))?;
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        Ok((ts, ts + e["dur"].as_f64().unwrap_or(0.0)))
    };
    let model = span("Model execute")?;
    let pre = span("Preprocess")?;
    let dispatch = span("Nested operator dispatch")?;
    let inside = |a: (f64, f64), b: (f64, f64)| a.0 >= b.0 && a.1 <= b.1;
    if !inside(pre, model) || !inside(dispatch, model) || pre.1 > dispatch.0 {
        return Err("the ranges do not nest as the program opened them".into());
    }
    let reduces: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "reduce")
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap_or(0.0);
            (ts, ts + e["dur"].as_f64().unwrap_or(0.0))
        })
        .collect();
    let in_pre = reduces.iter().filter(|r| inside(**r, pre)).count();
    let in_dispatch = reduces.iter().filter(|r| inside(**r, dispatch)).count();
    if (in_pre, in_dispatch) != (2, 3) {
        return Err(format!(
            "{in_pre} reduce tasks inside Preprocess and {in_dispatch} inside the dispatch range, \
             expected 2 and 3"
        )
        .into());
    }
    for mark in ["step begins", "outputs ready", "step start", "step end"] {
        if !events.iter().any(|e| e["name"] == mark) {
            return Err(format!("the trace has no mark {mark:?}").into());
        }
    }
    info!(
        "trace {}: {} events; Model execute {:.3} ms, Preprocess {:.3} ms (2 reduce tasks), \
         Nested operator dispatch {:.3} ms (3 reduce tasks)",
        path.display(),
        events.len(),
        (model.1 - model.0) / 1000.0,
        (pre.1 - pre.0) / 1000.0,
        (dispatch.1 - dispatch.0) / 1000.0
    );
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
