//! `profiling_create_config`: the CANN runtime's `profiling/0_create_config` sample in Rust.
//!
//! The collection set up by hand, step by step, as the reference does: `aclprofInit` into
//! `./output`; `aclprofCreateConfig` for device 0 with AI-core arithmetic utilisation metrics
//! and eight data types (ACL API, task time, AI-core metrics, AI CPU, L2 cache, HCCL trace,
//! msproftx, runtime API); `aclprofSetConfig` of the memory sampling frequency (15); then
//! `aclprofStart`, the work, `aclprofStop`, `aclprofDestroyConfig`, `aclprofFinalize`.
//! [`ascendcl::profile::Session`] fixes its data types (task time and msproftx) and sets
//! nothing, so the three steps are the raw functions here, each owned by a small guard that
//! undoes it on an error path. Where the reference only prints `model running ....`, this
//! sample queues real stream work (built-in sums, checked on the host).
//!
//! On the emulator the session writes a Chrome trace / Perfetto JSON file into `./output`
//! (docs/emulator.md, "Profiling"); the sample reads it back and checks that it records the
//! configuration it was given (the devices, the metrics, the data types) and the stream's
//! tasks on device 0. On CANN the directory holds msprof's data, which msprof's tools read.

use sample_common::report;

use ascendcl::{ReduceKind, Runtime, raw, sys};
use report::info;
use serde_json::Value;
use std::error::Error;
use std::path::Path;
use std::process::ExitCode;
use std::ptr::NonNull;

const OK: &str = "Run the profiling configuration sample successfully.";
const FAIL: &str = "Run the profiling configuration sample failed.";
/// Where the reference writes its data.
const OUTPUT: &str = "output";
/// The data types the reference collects.
const DATA_TYPES: u32 = sys::ACL_PROF_ACL_API
    | sys::ACL_PROF_TASK_TIME
    | sys::ACL_PROF_AICORE_METRICS
    | sys::ACL_PROF_AICPU
    | sys::ACL_PROF_L2CACHE
    | sys::ACL_PROF_HCCL_TRACE
    | sys::ACL_PROF_MSPROFTX
    | sys::ACL_PROF_RUNTIME_API;
/// The memory sampling frequency the reference sets.
const MEM_FREQ: &str = "15";
/// Elements of the buffers the "model" works on.
const N: usize = 1 << 16;
/// Built-in sums the "model" queues.
const ROUNDS: usize = 4;

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// The profiler between `aclprofInit` and `aclprofFinalize`; dropped unfinalized (an error
/// path), it finalizes.
struct Profiler {
    live: bool,
}

impl Profiler {
    /// `aclprofInit(dir)`.
    fn init(dir: &str) -> Res<Profiler> {
        let c = std::ffi::CString::new(dir)?;
        // SAFETY: a NUL-terminated string valid for `dir.len()` bytes.
        unsafe { raw::aclprofInit(c.as_ptr(), dir.len()) }?;
        Ok(Profiler { live: true })
    }

    /// `aclprofFinalize`.
    fn finalize(mut self) -> Res {
        self.live = false;
        // SAFETY: pairs this profiler's aclprofInit, once.
        unsafe { raw::aclprofFinalize() }?;
        Ok(())
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        if self.live {
            // SAFETY: as in `finalize`; the error path's first failure is the one reported.
            let _ = unsafe { raw::aclprofFinalize() };
        }
    }
}

/// A configuration from `aclprofCreateConfig`; dropped undestroyed (an error path), it is
/// destroyed.
struct Config {
    ptr: Option<NonNull<sys::aclprofConfig>>,
}

impl Config {
    /// `aclprofCreateConfig(devices, metrics, no events, data_types)`.
    fn create(devices: &[u32], metrics: sys::aclprofAicoreMetrics, data_types: u32) -> Res<Config> {
        let mut ids = devices.to_vec();
        let n = u32::try_from(ids.len())?;
        // SAFETY: a list valid for `n` reads, no AI-core events.
        let p = unsafe {
            raw::aclprofCreateConfig(
                ids.as_mut_ptr(),
                n,
                metrics,
                std::ptr::null(),
                u64::from(data_types),
            )
        };
        let ptr = NonNull::new(p).ok_or("aclprofCreateConfig returned NULL")?;
        Ok(Config { ptr: Some(ptr) })
    }

    fn as_ptr(&self) -> *const sys::aclprofConfig {
        self.ptr.map_or(std::ptr::null(), |p| p.as_ptr())
    }

    /// `aclprofDestroyConfig`.
    fn destroy(mut self) -> Res {
        if let Some(p) = self.ptr.take() {
            // SAFETY: the configuration this value created, destroyed once.
            unsafe { raw::aclprofDestroyConfig(p.as_ptr()) }?;
        }
        Ok(())
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        if let Some(p) = self.ptr.take() {
            // SAFETY: as in `destroy`.
            let _ = unsafe { raw::aclprofDestroyConfig(p.as_ptr()) };
        }
    }
}

/// A collection from `aclprofStart(config)`; dropped unstopped (an error path), it stops.
struct Collection<'c> {
    config: Option<&'c Config>,
}

impl<'c> Collection<'c> {
    /// `aclprofStart(config)`.
    fn start(config: &'c Config) -> Res<Collection<'c>> {
        // SAFETY: a live configuration, which outlives the collection.
        unsafe { raw::aclprofStart(config.as_ptr()) }?;
        Ok(Collection {
            config: Some(config),
        })
    }

    /// `aclprofStop(config)`.
    fn stop(mut self) -> Res {
        if let Some(c) = self.config.take() {
            // SAFETY: the configuration the collection was started with, stopped once.
            unsafe { raw::aclprofStop(c.as_ptr()) }?;
        }
        Ok(())
    }
}

impl Drop for Collection<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.config.take() {
            // SAFETY: as in `stop`.
            let _ = unsafe { raw::aclprofStop(c.as_ptr()) };
        }
    }
}

fn run() -> Res {
    info!("-------- Start --------");
    let devices = [0u32];
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(devices[0] as i32)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    let profiler = Profiler::init(OUTPUT)?;
    info!("profiling init done");
    let config = Config::create(&devices, sys::ACL_AICORE_ARITHMETIC_UTILIZATION, DATA_TYPES)?;
    // SAFETY: a string valid for its length.
    unsafe {
        raw::aclprofSetConfig(
            sys::ACL_PROF_SYS_HARDWARE_MEM_FREQ,
            MEM_FREQ.as_ptr().cast(),
            MEM_FREQ.len(),
        )
    }
    .map_err(|e| format!("profiling set config error: {e}"))?;
    info!("profiling set config done");

    let collection = Collection::start(&config)?;
    info!("profiling start");
    info!("model running ....");
    let x = device.clone_htod(&vec![1.5f32; N])?; // aclrtMalloc, aclrtMemcpy
    let mut y = device.clone_htod(&vec![0.0f32; N])?;
    stream.scope(|s| {
        let y = s.claim(&mut y);
        for _ in 0..ROUNDS {
            s.reduce(y, &x, ReduceKind::Sum)?; // aclrtReduceAsync
        }
        Ok(())
    })?; // aclrtSynchronizeStream
    let out = y.copy_to_vec()?;
    let want = 1.5 * ROUNDS as f32;
    if let Some(i) = out.iter().position(|&v| v != want) {
        return Err(format!(
            "y[{i}] = {} after {ROUNDS} sums of 1.5, expected {want}",
            out[i]
        )
        .into());
    }

    collection.stop()?; // aclprofStop
    config.destroy()?; // aclprofDestroyConfig
    profiler.finalize()?; // aclprofFinalize
    info!("profiling stop and finalize done");
    if rt.backend().is_emulator() {
        check_trace(Path::new(OUTPUT), &devices)?;
    }
    drop((x, y));
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("-------- End --------");
    Ok(())
}

/// The newest trace file of this process in `dir` (the emulator's
/// `ascendcl_emu_trace_<pid>_<n>.json`).
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

/// Reads the trace back: the configuration it records is the one created, and the stream's
/// sums are on device 0's lane.
fn check_trace(dir: &Path, devices: &[u32]) -> Res {
    let path = newest_trace(dir)?;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let recorded = &doc["otherData"]["recorded"];
    if recorded["dataTypeConfig"] != u64::from(DATA_TYPES)
        || recorded["aicoreMetrics"] != u64::from(sys::ACL_AICORE_ARITHMETIC_UTILIZATION)
        || recorded["devices"] != serde_json::json!(devices)
    {
        return Err(format!("the trace records the configuration {recorded}").into());
    }
    let events = doc["traceEvents"].as_array().ok_or("no traceEvents")?;
    let sums = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "reduce" && e["pid"] == devices[0])
        .count();
    if sums != ROUNDS {
        return Err(
            format!("{sums} reduce tasks on device 0 in the trace, expected {ROUNDS}").into(),
        );
    }
    info!(
        "trace {}: data types {DATA_TYPES:#x} on devices {devices:?}, {sums} reduce tasks on device 0",
        path.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
