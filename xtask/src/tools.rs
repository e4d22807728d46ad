//! Shared helpers of the xtask: the workspace root, progress lines, and provisioning of the tools a
//! fresh machine lacks (cmake and libclang from PyPI into `target/tools`, the ACL and HCCL headers
//! from the torch-npu wheel into `target/cann-headers`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The torch-npu release whose wheel carries the ACL 1.17.0 header set and the HCCL headers.
pub const TORCH_NPU: &str = "torch-npu==2.14.0";
/// Where the wheel keeps the HCCL headers, relative to its include root (`torch_npu/include`).
pub const HCCL_HEADERS: &str = "third_party/hccl/inc/hccl";
/// Approximate download size of the torch-npu wheel (x86_64), for the announcement.
const TORCH_NPU_MB: u32 = 44;
/// The libclang wheel used to run bindgen where the machine has no libclang.
pub const LIBCLANG_WHEEL: &str = "libclang==18.1.1";
/// Approximate download size of the libclang wheel (x86_64).
const LIBCLANG_MB: u32 = 25;
/// The cmake wheel used where the machine has no cmake.
pub const CMAKE_WHEEL: &str = "cmake>=3.20,<5";
/// Approximate download size of the cmake wheel (x86_64).
const CMAKE_MB: u32 = 30;

/// The workspace root (the parent of the `xtask` directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// `target/` of the workspace (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Where provisioned tools go: `target/tools` of the workspace (not of `CARGO_TARGET_DIR`, so that
/// every target dir shares one copy).
pub fn tools_dir() -> PathBuf {
    workspace_root().join("target").join("tools")
}

/// The steps of this run: the one in progress (and when it started), and those done.
struct Steps {
    current: Option<(String, Instant)>,
    done: Vec<(String, Duration)>,
}

static STEPS: Mutex<Steps> = Mutex::new(Steps {
    current: None,
    done: Vec::new(),
});

fn steps() -> std::sync::MutexGuard<'static, Steps> {
    STEPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends the step in progress, printing how long it took.
fn close_step(steps: &mut Steps) {
    if let Some((msg, start)) = steps.current.take() {
        let took = start.elapsed();
        println!("    done in {}", secs(took));
        steps.done.push((msg, took));
    }
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// Starts a step: ends the one in progress (printing its time) and prints `==> msg`.
pub fn step(msg: &str) {
    let mut steps = steps();
    close_step(&mut steps);
    println!("==> {msg}");
    steps.current = Some((msg.to_string(), Instant::now()));
}

/// Prints an indented line about the step in progress.
pub fn note(msg: &str) {
    println!("    {msg}");
}

/// Ends the last step; when the run had several steps, prints each one's time and the total,
/// and on failure which step failed.
pub fn finish_steps(ok: bool) {
    let mut steps = steps();
    let failed = if ok {
        close_step(&mut steps);
        None
    } else {
        steps
            .current
            .take()
            .map(|(msg, start)| (msg, start.elapsed()))
    };
    if steps.done.len() + usize::from(failed.is_some()) < 2 {
        if let Some((msg, took)) = failed {
            println!("==> failed after {}: {msg}", secs(took));
        }
        return;
    }
    println!("==> step times");
    let mut total = Duration::ZERO;
    for (msg, took) in &steps.done {
        println!("    {:>8}  {msg}", secs(*took));
        total += *took;
    }
    if let Some((msg, took)) = &failed {
        println!("    {:>8}  {msg}  <- FAILED", secs(*took));
        total += *took;
    }
    println!("    {:>8}  total", secs(total));
}

/// `cargo`, run from the workspace root, with the provisioned cmake (when there is one) in `CMAKE`.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace_root());
    if std::env::var_os("CMAKE").is_none() {
        let provisioned = provisioned_cmake();
        if provisioned.is_file() {
            cmd.env("CMAKE", provisioned);
        }
    }
    cmd
}

/// Runs a command to completion, failing with its command line when it does not succeed.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed ({status})"))
    }
}

fn works(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn pip_install(spec: &str, megabytes: u32) -> Result<(), String> {
    step(&format!(
        "downloading {spec} from PyPI (about {megabytes} MB) and installing it into {}",
        tools_dir().display()
    ));
    run(Command::new(python())
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--root-user-action=ignore",
            "--target",
        ])
        .arg(tools_dir())
        .arg(spec))
}

fn provisioned_cmake() -> PathBuf {
    tools_dir().join("cmake/data/bin/cmake")
}

/// A cmake binary: `$CMAKE`, else `cmake` on the PATH, else the one provisioned in
/// `target/tools` (installed from PyPI when absent).
pub fn cmake() -> Result<PathBuf, String> {
    if let Some(c) = std::env::var_os("CMAKE") {
        return Ok(PathBuf::from(c));
    }
    if works("cmake", "--version") {
        return Ok(PathBuf::from("cmake"));
    }
    let provisioned = provisioned_cmake();
    if !provisioned.is_file() {
        pip_install(CMAKE_WHEEL, CMAKE_MB)?;
    }
    if provisioned.is_file() {
        Ok(provisioned)
    } else {
        Err(format!(
            "cmake was installed from PyPI but {} is missing",
            provisioned.display()
        ))
    }
}

/// A directory holding `libclang.so`: `$LIBCLANG_PATH`, else the provisioned wheel's (installed
/// from PyPI when absent). Only bindgen needs it.
pub fn libclang() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LIBCLANG_PATH") {
        return Ok(PathBuf::from(p));
    }
    let dir = tools_dir().join("clang/native");
    if !dir.join("libclang.so").is_file() {
        pip_install(LIBCLANG_WHEEL, LIBCLANG_MB)?;
    }
    if dir.join("libclang.so").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "libclang was installed from PyPI but {} is missing",
            dir.display()
        ))
    }
}

/// An include directory holding `acl/acl_rt.h` and [`HCCL_HEADERS`]`/hccl.h`: the ACL 1.17.0 and
/// HCCL headers from the torch-npu wheel, downloaded with pip into `target/cann-headers` on first
/// use (and extracted again when a copy from before the HCCL headers lacks them).
pub fn headers() -> Result<PathBuf, String> {
    let base = workspace_root().join("target").join("cann-headers");
    let include = base.join("include");
    let wanted = [
        include.join("acl/acl_rt.h"),
        include.join(HCCL_HEADERS).join("hccl.h"),
    ];
    if wanted.iter().all(|h| h.is_file()) {
        return Ok(include);
    }
    let wheel_dir = base.join("wheel");
    let have_wheel = std::fs::read_dir(&wheel_dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".whl"))
    });
    if !have_wheel {
        step(&format!(
            "downloading the {TORCH_NPU} wheel from PyPI (about {TORCH_NPU_MB} MB) for the \
             AscendCL and HCCL headers"
        ));
        run(Command::new(python())
            .args([
                "-m",
                "pip",
                "download",
                "--disable-pip-version-check",
                "--no-deps",
            ])
            .arg(TORCH_NPU)
            .arg("-d")
            .arg(&wheel_dir))?;
    }
    step(&format!(
        "extracting torch_npu/include/acl and torch_npu/include/{HCCL_HEADERS}"
    ));
    // The wheel is a zip file; python's zipfile extracts it without needing `unzip`.
    let script = r#"
import sys, zipfile, glob, os
wheel = sorted(glob.glob(os.path.join(sys.argv[1], 'torch_npu-*.whl')))[-1]
out = sys.argv[2]
prefixes = ['torch_npu/include/' + p + '/' for p in sys.argv[3:]]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if any(name.startswith(p) for p in prefixes) and not name.endswith('/'):
            dest = os.path.join(out, name[len('torch_npu/include/'):])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, 'wb') as f:
                f.write(z.read(name))
"#;
    run(Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&wheel_dir)
        .arg(&include)
        .arg("acl")
        .arg(HCCL_HEADERS))?;
    match wanted.iter().find(|h| !h.is_file()) {
        None => Ok(include),
        Some(missing) => Err(format!(
            "the {TORCH_NPU} wheel holds no torch_npu/include/{}",
            missing.strip_prefix(&include).unwrap_or(missing).display()
        )),
    }
}

/// `cargo xtask tools [--libclang]`: provisions cmake (and libclang).
pub fn run_tools(args: &[String]) -> Result<(), String> {
    let cmake = cmake()?;
    println!("cmake: {}", cmake.display());
    if args.iter().any(|a| a == "--libclang") {
        println!("libclang: {}", libclang()?.display());
    }
    Ok(())
}
