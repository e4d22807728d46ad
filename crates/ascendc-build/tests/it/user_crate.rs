//! A crate outside the workspace (tests/fixtures/user_crate: its own `[workspace]`, its own
//! AscendC kernel file, depending on `ascendcl` and, to build, `ascendc-build`) is built with no
//! cmake reachable and no CANN, then run on the emulator: the generated launchers must give the
//! right numbers, report kernel failures and argument errors, and refuse misuse at compile time.
//!
//! The fixture is copied under the test's scratch directory with its two path dependencies
//! pointed at this repository, and built into the workspace's target directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo_crates() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates directory")
        .to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_name() == "Cargo.toml" {
            // Written by `fixture` with the paths rewritten.
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            let text = std::fs::read(entry.path()).unwrap();
            // Leave unchanged files alone so that the kept target directory stays fresh.
            if std::fs::read(&dest).ok().as_deref() != Some(&text[..]) {
                std::fs::write(&dest, text).unwrap();
            }
        }
    }
}

struct Fixture {
    dir: PathBuf,
    target: PathBuf,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let dir = scratch.join("ascendc-build-user");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/user_crate");
        copy_dir(&src, &dir);
        let crates = repo_crates();
        let manifest = std::fs::read_to_string(src.join("Cargo.toml"))
            .unwrap()
            .replace(
                "path = \"../../../../ascendcl\"",
                &format!("path = {:?}", crates.join("ascendcl")),
            )
            .replace(
                "path = \"../../..\"",
                &format!("path = {:?}", crates.join("ascendc-build")),
            );
        if std::fs::read_to_string(dir.join("Cargo.toml")).ok() != Some(manifest.clone()) {
            std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        }
        // The workspace's lock file pins the same dependency versions (all already fetched).
        let lock = crates.parent().unwrap().join("Cargo.lock");
        if !dir.join("Cargo.lock").exists() {
            std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
        }
        // The workspace's own target directory (`CARGO_TARGET_TMPDIR` is `<target dir>/tmp`):
        // the fixture's dependencies that the workspace build already compiled with the same
        // features and environment are reused, not built again.
        Fixture {
            dir,
            target: scratch.parent().expect("a target directory").to_path_buf(),
        }
    })
}

/// `PATH` without the directories that hold a `cmake`.
fn path_without_cmake() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("cmake").exists())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

fn cargo(args: &[&str]) -> Output {
    cargo_in(&fixture().target, args, &[])
}

fn cargo_in(target: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let f = fixture();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(args)
        .arg("--offline")
        .current_dir(&f.dir)
        .env("CARGO_TARGET_DIR", target)
        .env("PATH", path_without_cmake());
    for var in [
        "CMAKE",
        "ASCENDC_BUILD_MODE",
        "ASCENDC_CMAKE_DIR",
        "ASCENDCL_LIB",
        "ASCEND_INSTALL_PATH",
        "ASCEND_HOME_PATH",
        "ASCEND_TOOLKIT_HOME",
        "SOC_VERSION",
        "RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cargo runs")
}

fn build() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = cargo(&["build", "--bin", "ascendc-build-user"]);
            assert!(
                out.status.success(),
                "the fixture crate did not build:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            fixture().target.join("debug/ascendc-build-user")
        })
        .clone()
}

fn run(args: &[&str]) -> String {
    let out = Command::new(build())
        .args(args)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("the fixture binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn builds_in_host_mode_without_cmake() {
    assert!(
        std::env::split_paths(&path_without_cmake()).all(|d| !d.join("cmake").exists()),
        "cmake is still reachable"
    );
    assert_eq!(run(&["mode"]), "built=host module=host\n");
}

#[test]
fn typed_launcher_computes_axpy_for_any_size_and_block_count() {
    for (n, blocks) in [("8", "1"), ("1000", "4"), ("5000", "7"), ("3", "8")] {
        let out = run(&["axpy", n, blocks]);
        assert!(
            out.starts_with(&format!("axpy n={n} blocks={blocks} mismatches=0 ")),
            "{out}"
        );
    }
}

#[test]
fn canonical_add_custom_compiles_unchanged_and_adds() {
    assert_eq!(
        run(&["add_custom"]),
        "add_custom n=16384 mismatches=0 z[5]=5.75\n"
    );
}

#[test]
fn rewritten_kernel_launch_syntax_runs_on_the_stream() {
    assert_eq!(run(&["raw"]), "raw launch n=1000 mismatches=0\n");
}

#[test]
fn kernel_printf_is_written_in_block_order_between_host_output() {
    let mut expected = String::from("before the kernel\n");
    for b in 0..6 {
        expected.push_str(&format!(
            "[AIV Block {b}/6] hello from block {b} of 6 (tag 7)\n"
        ));
    }
    expected.push_str("after the kernel\n");
    assert_eq!(run(&["hello", "6"]), expected);
}

#[test]
fn local_overrun_fails_the_launch_and_spares_the_other_blocks() {
    assert_eq!(
        run(&["overrun"]),
        "overrun: failure=\"local_overrun: block 2 of 4: LocalTensor::GetValue: index 64 out of \
         range [0, 64)\"\noverrun: out=[1.0, 1.0, 0.0, 1.0]\n"
    );
}

#[test]
fn kernel_failures_carry_the_runtime_codes() {
    assert_eq!(
        run(&["codes"]),
        "local: ACL_ERROR_RT_VECTOR_CORE_EXCEPTION (507035): local_overrun: block 2 of 4: \
         LocalTensor::GetValue: index 64 out of range [0, 64)\n\
         global: ACL_ERROR_RT_VECTOR_CORE_EXCEPTION (507035): gm_overrun: block 0 of 1: \
         GlobalTensor::SetValue: global memory\n\
         cube: ACL_ERROR_RT_AICORE_EXCEPTION (507015): cube_trap: block 0 of 1: Trap()\n\
         in range: no error\n\
         codes: out=[1.0, 1.0, 0.0, 1.0]\n"
    );
}

#[test]
fn writing_a_const_parameter_fails_the_launch() {
    assert_eq!(
        run(&["write_input"]),
        "write_input: failure=\"write_input: block 0 of 1: GlobalTensor::SetValue: writes global \
         memory of a read-only kernel argument (a `const` pointer parameter)\"\n\
         write_input: input[0]=0\n"
    );
}

#[test]
fn bad_arguments_are_typed_errors_before_launch() {
    let out = run(&["errors"]);
    let expected = [
        "zero blocks: cannot launch axpy with 0 blocks",
        "too many blocks: cannot launch axpy with 70000 blocks: at most 65535",
        "host input: `x` of axpy must be device memory, not host memory",
        "other device: `y` of axpy is memory of device 1, but the stream is on device 0",
        "builder, missing argument: axpy takes 5 argument(s), 2 given",
        "builder, scalar for a buffer: argument 0 (`x`) of axpy takes a buffer the kernel reads \
         (.input), not a scalar (.scalar)",
        "builder, scalar type: `alpha` of axpy takes f32, not f64",
        "builder, read-only buffer for a written parameter: argument 2 (`z`) of axpy takes a \
         buffer the kernel writes (.output), not a read-only buffer (.input)",
        "errors: z=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn launch_builder_passes_a_struct_by_value() {
    assert_eq!(
        run(&["scale"]),
        "scale: [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0, 27.0]\n\
         scale, short value: `args` of scale is 8 byte(s) in C++, 4 given\n"
    );
}

fn compile_error(feature: &str) -> String {
    build();
    let out = cargo(&["build", "--lib", "--features", feature]);
    assert!(!out.status.success(), "`{feature}` compiled");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn element_type_mismatch_does_not_compile() {
    let err = compile_error("elem_mismatch");
    assert!(err.contains("error[E0271]"), "{err}");
    assert!(err.contains("expected `f32`, found `i32`"), "{err}");
}

#[test]
fn shared_borrow_for_a_written_parameter_does_not_compile() {
    let err = compile_error("shared_output");
    assert!(err.contains("error[E0277]"), "{err}");
    assert!(
        err.contains("`&DeviceBuffer<f32>: Out<'_, f32>` is not satisfied"),
        "{err}"
    );
}

#[test]
fn touching_a_launched_buffer_inside_the_scope_does_not_compile() {
    let err = compile_error("use_while_launched");
    assert!(err.contains("error[E0499]"), "{err}");
    assert!(
        err.contains("cannot borrow `*z` as mutable more than once"),
        "{err}"
    );
}

/// A stand-in `ascendc.cmake` whose `ascendc_library()` builds a stub library.
const STUB_ASCENDC_CMAKE: &str = r#"function(ascendc_library target type)
  file(WRITE "${CMAKE_BINARY_DIR}/stub.cpp" "extern \"C\" int stub() { return 0; }\n")
  add_library(${target} ${type} "${CMAKE_BINARY_DIR}/stub.cpp")
endfunction()
"#;

/// cmake for the NPU-mode check: `$CMAKE`, else the one `cargo xtask tools` provisions.
fn cmake() -> PathBuf {
    if let Some(c) = std::env::var_os("CMAKE").filter(|c| !c.is_empty()) {
        return c.into();
    }
    let provisioned = repo_crates().join("../target/tools/cmake/data/bin/cmake");
    assert!(
        provisioned.is_file(),
        "this test needs cmake: set CMAKE or run `cargo xtask tools`"
    );
    provisioned
}

#[test]
fn npu_mode_launchers_type_check_against_a_stand_in_install() {
    build();
    // A CANN install whose ascendc.cmake builds a stub library: enough for `cargo check`, which
    // compiles the generated NPU-mode module and the crate's uses of it without linking.
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let root = scratch.join("ascendc-build-fake-cann");
    let arch = if cfg!(target_arch = "aarch64") {
        "aarch64"
    } else {
        "x86_64"
    };
    let cmake_dir = root.join(format!("{arch}-linux/tikcpp/ascendc_kernel_cmake"));
    std::fs::create_dir_all(&cmake_dir).unwrap();
    std::fs::create_dir_all(root.join("lib64")).unwrap();
    std::fs::write(root.join("lib64/libacl_rt.so"), "").unwrap();
    std::fs::write(cmake_dir.join("ascendc.cmake"), STUB_ASCENDC_CMAKE).unwrap();
    let cmake = cmake();
    let out = cargo_in(
        &scratch.join("ascendc-build-user-npu-target"),
        &["check", "--bins", "--lib"],
        &[
            ("ASCEND_HOME_PATH", root.as_os_str()),
            ("SOC_VERSION", "Ascend910B2".as_ref()),
            ("CMAKE", cmake.as_os_str()),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let generated = std::fs::read_dir(scratch.join("ascendc-build-user-npu-target/debug/build"))
        .unwrap()
        .filter_map(|e| {
            std::fs::read_to_string(e.ok()?.path().join("out/ascendc-build/kernels.rs")).ok()
        })
        .next()
        .expect("the generated module");
    assert!(generated.contains("pub const MODE: Mode = Mode::Npu;"));
    assert!(generated.contains("__axpy__npu(blocks: u32"));
}
