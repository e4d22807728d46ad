//! What host mode shows of the compiler: warnings for the user's kernel sources (and none from
//! the host layer or the headers of `Build::include` directories, which the host layer still
//! comes before), `-w` when asked, and the native CPU opt-in; each build's kernel binary still
//! loads and runs on the emulator.

use ascendc_build::{Build, Output};
use std::path::Path;

/// A kernel with two things a compiler warns about: an unused variable and a signed/unsigned
/// comparison.
const KERNEL: &str = r#"#include "kernel_operator.h"
#include <helper.h>
extern "C" __global__ __aicore__ void fill(__gm__ float* y, uint32_t n)
{
    int unused_local = 3;
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(y, n);
    for (int i = 0; i < n; i++) {
        g.SetValue(i, 2.0f);
    }
}
"#;

fn triple() -> String {
    let os = if cfg!(target_os = "macos") {
        "apple-darwin"
    } else {
        "unknown-linux-gnu"
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn build(dir: &Path, configure: impl FnOnce(&mut Build)) -> Output {
    let kernel = dir.join("fill.cpp");
    std::fs::write(&kernel, KERNEL).unwrap();
    // An include directory of the user's: a header that would warn, and a decoy
    // `kernel_operator.h` that must not be found before the host layer's.
    let inc = dir.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(
        inc.join("helper.h"),
        "inline int helper(int x) { int unused_in_header = 1; return x; }\n",
    )
    .unwrap();
    std::fs::write(
        inc.join("kernel_operator.h"),
        "#error the decoy was found first\n",
    )
    .unwrap();
    let mut b = Build::new();
    b.file(&kernel)
        .include(&inc)
        .out_dir(dir.join("out"))
        .crate_name("warn")
        .cargo_metadata(false)
        .target(&triple())
        .host(&triple())
        .opt_level("0");
    configure(&mut b);
    b.try_compile("fill").unwrap()
}

/// The compile command of the kernel source (not the kernel table's).
fn kernel_command(out: &Output) -> &Vec<String> {
    out.compile_commands
        .iter()
        .find(|c| c.iter().any(|a| a.ends_with("_fill.cpp")))
        .unwrap_or_else(|| panic!("no command for the kernel in {:?}", out.compile_commands))
}

/// Loads the binary on the emulator, runs the kernel on one block and checks what it wrote.
fn runs(out: &Output) {
    use ascendcl::{BackendChoice, DeviceBuffer, LaunchConfig, MallocPolicy, Module, Runtime};
    let rt = Runtime::with_backend(BackendChoice::Emulator).unwrap();
    let device = rt.device(0).unwrap();
    let module = Module::load(&device, out.binary.as_ref().unwrap()).unwrap();
    let f = module.function("fill").unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&device, 16, MallocPolicy::HugeFirst).unwrap();
    let stream = device.create_stream().unwrap();
    stream
        .scope(|s| {
            // SAFETY: fill(float* y, uint32_t n) over the 16 elements of `y`.
            unsafe {
                s.launch_builder(&f)
                    .arg(&mut y)
                    .arg(16u32)
                    .launch(&LaunchConfig::blocks(1))
            }
        })
        .unwrap();
    assert_eq!(y.copy_to_vec().unwrap(), vec![2.0f32; 16]);
}

#[test]
fn warnings_name_the_users_source_and_never_the_host_layer() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), |_| {});
    let text = out.compiler_warnings.join("\n");
    assert!(text.contains("unused_local"), "{text}");
    assert!(
        text.contains("fill.cpp:5"),
        "the warning names the user's line: {text}"
    );
    assert!(text.contains("-Wsign-compare"), "{text}");
    assert!(
        !text.contains("unused_in_header"),
        "a header of an include directory warned: {text}"
    );
    let host_layer = ascendc_build::include_dir();
    assert!(
        !text.contains(&*host_layer.to_string_lossy()),
        "the host layer warned: {text}"
    );
    let cmd = kernel_command(&out);
    assert!(cmd.iter().any(|a| a == "-Wall"), "{cmd:?}");
    assert!(!cmd.iter().any(|a| a == "-w"), "{cmd:?}");
    assert!(!cmd.iter().any(|a| a.ends_with("=native")), "{cmd:?}");
    runs(&out);
}

#[test]
fn warnings_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), |b| {
        b.warnings(false);
    });
    assert!(
        out.compiler_warnings.is_empty(),
        "{:?}",
        out.compiler_warnings
    );
    assert!(kernel_command(&out).iter().any(|a| a == "-w"));
}

#[test]
fn native_cpu_is_an_opt_in_that_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), |b| {
        b.native_cpu(true).warnings(false);
    });
    let cmd = kernel_command(&out);
    let native = cmd
        .iter()
        .any(|a| a == "-march=native" || a == "-mcpu=native");
    // The compiler either took the flag, or the build says why it left it out.
    assert!(
        native
            || out
                .compiler_warnings
                .iter()
                .any(|w| w.contains("does not take")),
        "{cmd:?} {:?}",
        out.compiler_warnings
    );
    runs(&out);
}
