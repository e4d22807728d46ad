//! `h2d_sync`: the CANN runtime's `1_h2d_sync_memory_copy` sample in safe Rust.
//!
//! Allocates pinned host memory (`aclrtMallocHost`) and device memory (`aclrtMalloc`), writes a
//! value on the host, copies host to device synchronously (`aclrtMemcpy`), and launches the
//! AscendC kernel `DeviceRead` (one block) to print the value the device reads. docs/samples.md
//! maps it line by line onto the C++ program.
//!
//! ```text
//! h2d_sync [--size BYTES] [--value N] [--policy POLICY] [--device ID]
//! ```
//!
//! On failure it prints one `[ERROR]` line (on stdout, as the C++ sample's `ERROR_LOG` does): the
//! reference sample's call and the runtime's error, and exits with status 1. A harmless failure
//! (the SoC name or ACL version unknown, a release that succeeds when retried) is a `[WARN]`
//! line and the exit status stays 0. Bad arguments: one `[ERROR]` line and the usage, status 2.

use ascendc_kernels::Mode;
use ascendcl::{
    BackendKind, Device, DeviceBuffer, HostBuffer, MallocPolicy, ReleaseResult, Runtime, Stream,
};
use std::error::Error;
use std::fmt;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
usage: h2d_sync [--size BYTES] [--value N] [--policy POLICY] [--device ID]

  --size BYTES     bytes to allocate on the host and on the device (default 1048576 = 1 MiB);
                   a multiple of 4; K, M, G suffixes (powers of 1024) accepted
  --value N        the int written on the host and read back by the kernel (default 123)
  --policy POLICY  aclrtMalloc policy (default huge-first): huge-first, huge-only, normal-only,
                   huge-first-p2p, huge-only-p2p, normal-only-p2p, huge1g-only, huge1g-only-p2p
  --device ID      device to use (default 0)
  --help           this text

Environment: ASCENDCL_BACKEND=cann|emulator|auto chooses the runtime backend; the emulator reads
ASCENDCL_EMU_* (e.g. ASCENDCL_EMU_FAULTS=aclrtMalloc:1 fails the first aclrtMalloc).";

/// Policies by their command-line names, with the C constant they stand for.
const POLICIES: [(&str, MallocPolicy, &str); 8] = [
    (
        "huge-first",
        MallocPolicy::HugeFirst,
        "ACL_MEM_MALLOC_HUGE_FIRST",
    ),
    (
        "huge-only",
        MallocPolicy::HugeOnly,
        "ACL_MEM_MALLOC_HUGE_ONLY",
    ),
    (
        "normal-only",
        MallocPolicy::NormalOnly,
        "ACL_MEM_MALLOC_NORMAL_ONLY",
    ),
    (
        "huge-first-p2p",
        MallocPolicy::HugeFirstP2p,
        "ACL_MEM_MALLOC_HUGE_FIRST_P2P",
    ),
    (
        "huge-only-p2p",
        MallocPolicy::HugeOnlyP2p,
        "ACL_MEM_MALLOC_HUGE_ONLY_P2P",
    ),
    (
        "normal-only-p2p",
        MallocPolicy::NormalOnlyP2p,
        "ACL_MEM_MALLOC_NORMAL_ONLY_P2P",
    ),
    (
        "huge1g-only",
        MallocPolicy::Huge1gOnly,
        "ACL_MEM_MALLOC_HUGE1G_ONLY",
    ),
    (
        "huge1g-only-p2p",
        MallocPolicy::Huge1gOnlyP2p,
        "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P",
    ),
];

/// The command line.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    size: usize,
    value: i32,
    policy: usize,
    device: i32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size: 1024 * 1024,
            value: 123,
            policy: 0,
            device: 0,
        }
    }
}

/// What `parse_args` decided.
enum Command {
    Run(Options),
    Help,
}

fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, mult) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (t, 1usize),
        Some((i, _)) => {
            let mult = match t[i..].to_ascii_uppercase().as_str() {
                "K" | "KB" | "KIB" => 1 << 10,
                "M" | "MB" | "MIB" => 1 << 20,
                "G" | "GB" | "GIB" => 1 << 30,
                _ => {
                    return Err(format!(
                        "--size {text:?}: expected bytes, optionally with K, M or G"
                    ));
                }
            };
            (&t[..i], mult)
        }
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("--size {text:?}: expected bytes, optionally with K, M or G"))?;
    let size = n
        .checked_mul(mult)
        .ok_or_else(|| format!("--size {text:?}: too large"))?;
    if size == 0 || size % 4 != 0 {
        return Err(format!(
            "--size {text:?}: must be a positive multiple of 4 (the buffers hold ints)"
        ));
    }
    Ok(size)
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        if matches!(flag, "--help" | "-h") {
            return Ok(Command::Help);
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag {
            "--size" => o.size = parse_size(&value()?)?,
            "--value" => {
                let v = value()?;
                o.value = v
                    .parse()
                    .map_err(|_| format!("--value {v:?}: expected a 32-bit integer"))?;
            }
            "--policy" => {
                let v = value()?;
                o.policy = POLICIES
                    .iter()
                    .position(|(name, _, _)| *name == v.to_ascii_lowercase())
                    .ok_or_else(|| {
                        let names: Vec<&str> = POLICIES.iter().map(|p| p.0).collect();
                        format!("--policy {v:?}: expected one of {}", names.join(", "))
                    })?;
            }
            "--device" => {
                let v = value()?;
                o.device = v
                    .parse()
                    .map_err(|_| format!("--device {v:?}: expected a device id"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(o))
}

/// A failed step: the C call of the reference sample it stands for, and why.
#[derive(Debug)]
struct StepError {
    call: String,
    source: Box<dyn Error + 'static>,
}

impl StepError {
    /// The C function of the call: `aclrtMalloc` for `aclrtMalloc((void**)&devPtrB, ...)`.
    fn function(&self) -> &str {
        self.call.split('(').next().unwrap_or(&self.call)
    }

    /// The innermost cause: the runtime's (or the argument check's) own error.
    fn root(&self) -> &(dyn Error + 'static) {
        let mut e: &(dyn Error + 'static) = self.source.as_ref();
        while let Some(next) = e.source() {
            e = next;
        }
        e
    }
}

/// One sentence: the reference sample's call, then the innermost cause. The cause's own
/// `<function> failed: ` is left out when the call names the same function.
impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = self.root().to_string();
        let prefix = format!("{} failed: ", self.function());
        let cause = cause.strip_prefix(&prefix).unwrap_or(&cause);
        write!(f, "{} failed: {cause}", self.call)
    }
}

impl Error for StepError {}

/// Attaches the reference sample's C call to a failure.
trait Step<T> {
    fn step(self, call: impl Into<String>) -> Result<T, StepError>;
}

impl<T, E: Error + 'static> Step<T> for Result<T, E> {
    fn step(self, call: impl Into<String>) -> Result<T, StepError> {
        self.map_err(|e| StepError {
            call: call.into(),
            source: Box::new(e),
        })
    }
}

/// `INFO_LOG` of the reference sample.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

/// A harmless failure: the program goes on, and says so.
macro_rules! warn {
    ($($arg:tt)*) => { println!("[WARN]  {}", format_args!($($arg)*)) };
}

/// The install root of a runtime library: the directory above its `lib64`, and above
/// `<arch>-linux` or `runtime` when the `lib64` is inside one (the layouts CANN uses).
fn cann_root(library: &Path) -> Option<&Path> {
    let lib_dir = library.parent()?;
    if lib_dir.file_name()? != "lib64" {
        return None;
    }
    let up = lib_dir.parent()?;
    let name = up.file_name()?.to_string_lossy();
    if name == "runtime" || name.ends_with("-linux") {
        up.parent()
    } else {
        Some(up)
    }
}

/// The backend, why it was chosen, the SoC and ACL version (a failure of either query is a
/// warning: nothing below depends on them), and how the kernels were built.
fn banner(rt: &Runtime) {
    // Asked first and once each, so that their failures are seen here (rt.backend() asks too).
    let soc = rt.soc_name();
    let version = rt.version();
    let backend = rt.backend();
    match backend.kind {
        Some(BackendKind::Emulator) => {
            info!("Backend: the host emulator (ascendcl-emu, in process)")
        }
        Some(kind) => {
            let library = backend
                .library
                .as_ref()
                .map_or("linked at build time".to_string(), |l| {
                    l.display().to_string()
                });
            let root = backend
                .library
                .as_deref()
                .and_then(cann_root)
                .map_or("unknown".to_string(), |r| r.display().to_string());
            info!("Backend: {kind}, CANN root {root}, library {library}");
        }
        None => info!("Backend: none active"),
    }
    if !backend.reason.is_empty() {
        info!("Backend chosen because {}", backend.reason);
    }
    let emulated = if backend.is_emulator() {
        " (emulated)"
    } else {
        ""
    };
    match soc {
        Ok(soc) => info!("SoC: {soc}{emulated}"),
        Err(e) => warn!("the SoC name is unknown, going on without it: {e}"),
    }
    match version {
        Ok(v) => info!("ACL version: {v}"),
        Err(e) => warn!("the ACL version is unknown, going on without it: {e}"),
    }
    let build = ascendc_kernels::build_info();
    match build.mode {
        Mode::Host => {
            info!(
                "Kernels: DeviceRead/DeviceWrite compiled for the host CPU, run on the emulated stream"
            )
        }
        Mode::Npu => info!(
            "Kernels: DeviceRead/DeviceWrite compiled by ascendc_library for {} (SOC_VERSION from {})",
            build.soc_version.unwrap_or("?"),
            build.soc_origin.unwrap_or("?")
        ),
    }
}

/// Releases a handle, retrying once when the runtime refuses: a release that succeeds on the
/// retry is harmless (a warning says so); one that fails twice is the step's error, and the
/// handle is then dropped (its `Drop` makes a last attempt, reported by `main`).
fn release<H>(
    handle: H,
    call: &str,
    free: impl Fn(H) -> ReleaseResult<(), H>,
) -> Result<(), StepError> {
    let Err(first) = free(handle) else {
        return Ok(());
    };
    let (first, handle) = first.into_parts();
    let first = StepError {
        call: call.to_string(),
        source: Box::new(first),
    };
    match free(handle) {
        Ok(()) => {
            warn!("{first}; the retry released it, so nothing leaked");
            Ok(())
        }
        Err(second) => Err(StepError {
            call: format!("{call} (retried once)"),
            source: Box::new(second.into_error()),
        }),
    }
}

fn run(o: &Options) -> Result<(), StepError> {
    let (_, policy, policy_c) = POLICIES[o.policy];
    // aclInit(nullptr)
    let rt = Runtime::new().step("aclInit(nullptr)")?;
    banner(&rt);
    // aclrtSetDevice(deviceId)
    let device = rt
        .device(o.device)
        .step(format!("aclrtSetDevice({})", o.device))?;
    // aclrtCreateStream(&stream)
    let stream = device.create_stream().step("aclrtCreateStream(&stream)")?;

    // Allocate memory on the host and device.
    let len = o.size / size_of::<i32>();
    let mut host = HostBuffer::<i32>::zeroed(&device, len)
        .step(format!("aclrtMallocHost((void**)&hostPtrA, {})", o.size))?;
    info!(
        "Allocate memory on the host memory {:p} successfully",
        host.as_ptr()
    );
    // SAFETY: every element is written by the host-to-device copy below before anything reads
    // the buffer; if the copy fails, the buffer is freed without being read.
    let mut dev = unsafe { DeviceBuffer::<i32>::uninit(&device, len, policy) }.step(format!(
        "aclrtMalloc((void**)&devPtrB, {}, {policy_c})",
        o.size
    ))?;
    info!(
        "Allocate memory on the device memory {:p} successfully",
        dev.as_ptr()
    );

    // Write the data to the virtual address hostPtrA.
    host[0] = o.value;
    info!(
        "Write the data {} to the virtual memory {:p}",
        o.value,
        host.as_ptr()
    );
    info!("Source data: {}", o.value);

    // Copy memory from hostPtrA to devPtrB synchronously.
    dev.copy_from(&host).step(format!(
        "aclrtMemcpy(devPtrB, {0}, hostPtrA, {0}, ACL_MEMCPY_HOST_TO_DEVICE)",
        o.size
    ))?;
    info!(
        "Copy memory from memory {:p} to memory {:p}",
        host.as_ptr(),
        dev.as_ptr()
    );

    // Read the value at devPtrB: DeviceRead<<<1, nullptr, stream>>>(devPtrB), which prints
    // "Destination data: <value>". read_value waits until the stream is idle.
    const BLOCK_DIM: u32 = 1;
    ascendc_kernels::read_value(&stream, &dev, BLOCK_DIM)
        .step("ReadDo(blockDim, stream, devPtrB)")?;

    // Release the resources of the host and device, each retried once if refused.
    release(
        stream,
        "aclrtDestroyStreamForce(stream)",
        Stream::destroy_force,
    )?;
    release(host, "aclrtFreeHost(hostPtrA)", HostBuffer::free)?;
    release(dev, "aclrtFree(devPtrB)", DeviceBuffer::free)?;
    release(
        device,
        &format!("aclrtResetDeviceForce({})", o.device),
        Device::reset_force,
    )?;
    release(rt, "aclFinalize()", Runtime::finalize)?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_args(&args) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // One error line, then the usage, both on stdout like ERROR_LOG.
            println!("[ERROR]  {e}");
            println!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = run(&options);
    if let Err(e) = &result {
        // ERROR_LOG of the reference sample: one line.
        println!("[ERROR]  {e}");
    }
    // Releases done by `Drop` (after an early failure) report their own failures here.
    for e in ascendcl::take_drop_errors() {
        println!("[WARN]  a release made after the failure failed as well: {e}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn defaults_match_the_reference() {
        let Ok(Command::Run(o)) = parse_args(&[]) else {
            panic!("no options should run")
        };
        assert_eq!(o, Options::default());
        assert_eq!((o.size, o.value, o.device), (1 << 20, 123, 0));
        assert_eq!(POLICIES[o.policy].2, "ACL_MEM_MALLOC_HUGE_FIRST");
    }

    #[test]
    fn options_parse() {
        let Ok(Command::Run(o)) = parse_args(&args(
            "--size 4K --value -7 --policy normal-only --device=1",
        )) else {
            panic!("should parse")
        };
        assert_eq!((o.size, o.value, o.device), (4096, -7, 1));
        assert_eq!(POLICIES[o.policy].1, MallocPolicy::NormalOnly);
        assert!(matches!(parse_args(&args("--help")), Ok(Command::Help)));
    }

    #[test]
    fn cann_roots_follow_the_install_layouts() {
        for (lib, root) in [
            (
                "/usr/local/Ascend/cann/lib64/libacl_rt.so",
                Some("/usr/local/Ascend/cann"),
            ),
            (
                "/opt/cann/x86_64-linux/lib64/libascendcl.so",
                Some("/opt/cann"),
            ),
            ("/opt/tk/runtime/lib64/libascendcl.so", Some("/opt/tk")),
            ("/tmp/libacl_rt.so", None),
        ] {
            assert_eq!(cann_root(Path::new(lib)), root.map(Path::new), "{lib}");
        }
    }

    #[test]
    fn bad_options_are_rejected() {
        for (line, why) in [
            ("--size 6", "multiple of 4"),
            ("--size 0", "multiple of 4"),
            ("--size 1X", "expected bytes"),
            ("--value x", "32-bit integer"),
            ("--policy fast", "expected one of huge-first"),
            ("--device", "needs a value"),
            ("--frobnicate", "unknown argument"),
        ] {
            match parse_args(&args(line)) {
                Err(e) => assert!(e.contains(why), "{line}: {e}"),
                Ok(_) => panic!("{line} should fail"),
            }
        }
    }
}
