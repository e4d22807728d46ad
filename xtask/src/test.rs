//! `cargo xtask test` and `cargo xtask ci`: the checks every change must pass.

use crate::{
    bindgen, codegen, emu_root, hccl_link_check, link_check, package, portability, symbols, tools,
};

/// The optional features the test build turns on: the element types behind `half` and
/// `bytemuck`, whose tests need them.
pub const TEST_FEATURES: &str = "ascendcl/half,ascendcl/bytemuck,hccl/half";

/// Runs the test suite; `ci` adds the freshness checks of generated files, the cross checks
/// (aarch64 Linux, macOS), `cargo bench --no-run` without cmake, packaging and the oldest
/// supported toolchain.
pub fn run(args: &[String], ci: bool) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!("test: unknown argument {a:?}"));
    }
    tools::step("provisioning cmake (the kernels' NPU-mode tests run it)");
    let cmake = tools::cmake()?;
    let cargo = || {
        let mut c = tools::cargo();
        c.env("CMAKE", &cmake)
            .env("ASCENDC_KERNELS_REQUIRE_CMAKE", "1");
        c
    };
    tools::step("cargo fmt --check");
    tools::run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    tools::step("cargo clippy --workspace --all-targets -- -D warnings");
    tools::run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // One build for every test, with the optional element-type features on (f16/bf16 buffers
    // and collectives, device_repr!): the tests behind them run in the same pass, and the
    // crates are not compiled a second time with the features for them.
    tools::step(&format!(
        "cargo test --workspace --features {TEST_FEATURES}"
    ));
    tools::run(cargo().args(["test", "--workspace", "--features", TEST_FEATURES]))?;
    // The workspace build above has `half` on; the compile-fail case whose expected output lists
    // the element types is checked without it too.
    tools::step("cargo test -p ascendcl --test compile_fail (without the half feature)");
    tools::run(cargo().args(["test", "-p", "ascendcl", "--test", "compile_fail"]))?;
    // Without its default `emulator` feature the safe API has no backend on a machine without
    // CANN, so its tests are built, not run.
    tools::step(
        "cargo test -p ascendcl --no-default-features --no-run (builds without the emulator)",
    );
    tools::run(cargo().args([
        "test",
        "-p",
        "ascendcl",
        "--no-default-features",
        "--no-run",
    ]))?;
    tools::step("cargo doc --workspace --no-deps (warnings are errors)");
    tools::run(
        cargo()
            .args(["doc", "--workspace", "--no-deps"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    symbols::run()?;
    tools::step("C program against the real headers, on the emulator's shared library");
    emu_root::c_program_test()?;
    tools::step("ascendcl-sys with feature `link`, linked against that install root");
    link_check::run(&tools::target_dir().join("emu-root"))?;
    hccl_link_check::run()?;
    if ci {
        tools::step("bindings freshness: regenerate from the headers and compare");
        bindgen::check(&tools::headers()?)?;
        codegen::tables(true)?;
        release_checks()?;
    }
    tools::note("all checks passed");
    Ok(())
}

/// What `ci` adds for users elsewhere: cross checks (aarch64 Linux, macOS), `cargo bench
/// --no-run` without cmake, packaging, and the oldest supported toolchain.
pub fn release_checks() -> Result<(), String> {
    portability::cross_checks()?;
    portability::bench_without_cmake()?;
    package::package()?;
    package::msrv()
}
