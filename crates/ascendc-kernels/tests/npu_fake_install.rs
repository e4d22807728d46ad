//! NPU mode end to end, without CANN: a fake install whose "runtime library" is the emulator's C
//! library and whose stand-in `ascendc_library()` compiles stub launchers (they print their
//! arguments instead of launching device code) in place of the wrappers `ascendc-build`
//! generates.
//!
//! This drives the real build script through cargo (`ascendc-build` choosing NPU mode by
//! discovery, the SoC from `SOC_VERSION`, the generated CMake project, the `+whole-archive` link
//! of the kernels library and of the install's runtime library), then runs the `h2d_sync` sample
//! twice: on the "CANN" backend, where `read_value` calls the generated NPU launcher with the
//! stream and the device pointer, and on the emulator backend, where the launch is refused.
//!
//! It runs two nested cargo builds: the emulator's C library in the workspace's target directory,
//! the sample in a target directory of its own (`target/npu-fake-install`, because the install
//! variables change what `ascendcl-sys`'s build script does; about 10 s here when fresh, a few
//! seconds after that). Linux only (the runtime library is an ELF shared object). It needs
//! cmake, as NPU mode does: `$CMAKE`, else `cmake` on `PATH`, else the copy `cargo xtask tools`
//! provisions; without one it says so and passes, unless `ASCENDC_KERNELS_REQUIRE_CMAKE` is set
//! (as `cargo xtask test` does).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
        .to_path_buf()
}

/// The cmake this test runs, or `None` (with a note) when there is none and none is required.
fn cmake_for_tests() -> Option<PathBuf> {
    let provisioned = workspace().join("target/tools/cmake/data/bin/cmake");
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("cmake"))
            .find(|c| c.is_file())
    });
    let found = std::env::var_os("CMAKE")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .or(on_path)
        .or_else(|| provisioned.is_file().then_some(provisioned));
    if found.is_none() {
        assert!(
            std::env::var_os("ASCENDC_KERNELS_REQUIRE_CMAKE").is_none(),
            "ASCENDC_KERNELS_REQUIRE_CMAKE is set, but no cmake was found ($CMAKE, PATH, \
             target/tools)"
        );
        eprintln!("not run: this test runs cmake, and none was found ($CMAKE, PATH, target/tools)");
    }
    found
}

fn cargo(target: &Path, cmake: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace())
        .env("CARGO_TARGET_DIR", target)
        .env("CMAKE", cmake)
        .env_remove("ASCENDC_BUILD_MODE")
        .env_remove("ASCENDC_CMAKE_DIR")
        .env_remove("ASCENDCL_LIB")
        .env_remove("ASCEND_INSTALL_PATH")
        .env_remove("ASCEND_TOOLKIT_HOME");
    cmd
}

fn check(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// What ascendc-build's wrappers define for the crate's kernels library (`ascendc_build_` +
/// crate + library name): a launcher per kernel taking a pointer to each argument, and the
/// `sizeof` table of its parameters.
const STUB_LAUNCHERS: &str = r#"
#include <cstdint>
#include <cstdio>
#include <cstring>
#define P(x) ascendc_build_ascendc_kernels_kernels__##x
template <typename T> static T at(void* const* args, int i)
{
    T v;
    std::memcpy(&v, args[i], sizeof v);
    return v;
}
extern "C" void P(DeviceWrite__npu)(uint32_t blockDim, void* stream, void* const* args)
{
    std::printf("stub DeviceWrite<<<%u, nullptr, %p>>>(%p, %d)\n", blockDim, stream,
                at<void*>(args, 0), at<int>(args, 1));
    std::fflush(stdout);
}
extern "C" void P(DeviceRead__npu)(uint32_t blockDim, void* stream, void* const* args)
{
    std::printf("stub DeviceRead<<<%u, nullptr, %p>>>(%p)\n", blockDim, stream, at<void*>(args, 0));
    std::fflush(stdout);
}
extern "C" const uint32_t P(DeviceWrite__sizes)[] = {8, 4};
extern "C" const uint32_t P(DeviceRead__sizes)[] = {8};
"#;

const STAND_IN_ASCENDC_CMAKE: &str = r#"
function(ascendc_library name type)
  add_library(${name} ${type} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/stub_launchers.cpp")
endfunction()
"#;

#[test]
fn npu_mode_builds_links_and_launches_through_the_launchers() {
    let Some(cmake) = cmake_for_tests() else {
        return;
    };
    let ws = workspace();
    let target = ws.join("target/npu-fake-install");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cann");

    // 1. The emulator's C library, to stand in for the CANN runtime library: built in the
    // workspace's target directory, where `cargo xtask test` builds the same library for its C
    // programs (no install variables are involved, so the two builds are one).
    let workspace_target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("a target directory");
    check(cargo(workspace_target, &cmake).args(["build", "--quiet", "-p", "ascendcl-emu-capi"]));
    let emu = workspace_target.join("debug/libascendcl_emu_capi.so");
    assert!(emu.is_file(), "{} missing", emu.display());

    // 2. The fake install: runtime library and header, ascendc.cmake with stub launchers.
    let lib64 = root.join("lib64");
    let cmake_dir = root
        .join(format!("{}-linux", ascendcl_sdk::arch()))
        .join("tikcpp/ascendc_kernel_cmake");
    for dir in [&lib64, &root.join("include/acl"), &cmake_dir] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::copy(&emu, lib64.join("libacl_rt.so")).unwrap();
    std::fs::write(root.join("include/acl/acl.h"), "/* stand-in */\n").unwrap();
    std::fs::write(cmake_dir.join("stub_launchers.cpp"), STUB_LAUNCHERS).unwrap();
    std::fs::write(cmake_dir.join("ascendc.cmake"), STAND_IN_ASCENDC_CMAKE).unwrap();

    // 3. The sample, built in NPU mode (auto: discovery finds the install and ascendc.cmake).
    check(
        cargo(&target, &cmake)
            .args(["build", "--quiet", "-p", "h2d_sync"])
            .env("ASCEND_HOME_PATH", &root)
            .env("SOC_VERSION", "Ascend910B4"),
    );
    let sample = target.join("debug/h2d_sync");
    let run = |backend: &str| {
        Command::new(&sample)
            .env("ASCEND_HOME_PATH", &root)
            .env("LD_LIBRARY_PATH", &lib64)
            .env("ASCENDCL_BACKEND", backend)
            .env_remove("ASCENDCL_EMU_FAULTS")
            .output()
            .unwrap()
    };

    // 4. On the "CANN" backend the launcher gets blockDim 1, a stream and the device pointer.
    let out = run("cann");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[INFO]  Backend: CANN"), "{text}");
    assert!(
        text.contains(
            "compiled by ascendc_library for Ascend910B4 (SOC_VERSION from $SOC_VERSION)"
        ),
        "{text}"
    );
    let device_ptr = text
        .lines()
        .find_map(|l| l.strip_prefix("[INFO]  Allocate memory on the device memory "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("device pointer line")
        .to_string();
    let launch = text
        .lines()
        .find(|l| l.starts_with("stub DeviceRead<<<1, nullptr, 0x"))
        .unwrap_or_else(|| panic!("no launcher call in:\n{text}"));
    assert!(
        launch.ends_with(&format!(">>>({device_ptr})")),
        "{launch} vs {device_ptr}"
    );
    assert_eq!(
        text.lines().last(),
        Some(launch),
        "launch is the last line:\n{text}"
    );

    // 5. On the emulator backend NPU kernels are refused, with the way out.
    let out = run("emulator");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("cannot launch DeviceRead: the kernels were built in npu mode, which does not run on the emulator backend"),
        "{text}"
    );
    assert!(!text.contains("stub DeviceRead"), "{text}");
}
