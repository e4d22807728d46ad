//! `device_multi_thread`: the CANN runtime's `device/1_device_multi_thread` sample in safe Rust.
//!
//! One device (`aclrtSetDevice`) shared by four threads: `Device` is `Send + Sync`, so each
//! thread borrows it, creates a stream of its own (`aclrtCreateStream`), copies its slice of the
//! input to the device and back doubled on the host side, and the main thread checks
//! `hostDst[i] == 2 * i` over the whole result.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the device_multi_thread sample successfully.";
const FAIL: &str = "Run the device_multi_thread sample failed.";
const THREADS: usize = 4;
const PER_THREAD: usize = 1024;

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    info!("SoC: {}", rt.soc_name()?);
    info!("Device count: {}", rt.device_count()?);
    let device = rt.device(0)?; // aclrtSetDevice
    let mut host_dst = vec![0i32; THREADS * PER_THREAD];
    std::thread::scope(|scope| -> Result<(), Box<dyn Error>> {
        let workers: Vec<_> = host_dst
            .chunks_mut(PER_THREAD)
            .enumerate()
            .map(|(t, out)| {
                let device = &device;
                scope.spawn(move || -> Result<(), ascendcl::Error> {
                    let stream = device.create_stream()?; // one stream per thread
                    let base = (t * PER_THREAD) as i32;
                    let src: Vec<i32> = (0..PER_THREAD as i32).map(|i| base + i).collect();
                    let dev = DeviceBuffer::from_slice(device, &src, MallocPolicy::HugeFirst)?;
                    stream.scope(|s| s.copy(&mut *out, &dev))?; // aclrtMemcpyAsync + sync
                    out.iter_mut().for_each(|x| *x *= 2);
                    println!("[INFO]  Thread {t} finished on its own stream");
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().map_err(|_| "a worker thread panicked")??;
        }
        Ok(())
    })?;
    for (i, x) in host_dst.iter().enumerate().take(10) {
        info!("hostDst[{i}] = {x}, expected {}", 2 * i);
    }
    if let Some(i) = (0..host_dst.len()).find(|&i| host_dst[i] != 2 * i as i32) {
        return Err(format!("hostDst[{i}] = {}, expected {}", host_dst[i], 2 * i).into());
    }
    device.reset()?; // aclrtResetDevice
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
