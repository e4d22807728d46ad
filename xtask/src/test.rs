//! `cargo xtask test` and `cargo xtask ci`: the checks every change must pass.

use crate::{
    bindgen, codegen, emu_root, hccl_link_check, link_check, package, portability, symbols,
    test_binaries, tools,
};

/// The optional features the test build turns on: the element types behind `half` and
/// `bytemuck`, and the `tracing` spans and events, whose tests need them. (The builds without
/// them are the samples' and `ascendcl`'s without default features.)
pub const TEST_FEATURES: &str =
    "ascendcl/half,ascendcl/bytemuck,ascendcl/tracing,hccl/half,hccl/tracing";

/// The workspace's test build, whose binaries `test` runs and the symbol check reads (with
/// `--no-run`; the doctests add `--doc`).
pub const TEST_BUILD: [&str; 4] = ["test", "--workspace", "--features", TEST_FEATURES];

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
    // One compilation builds every test and lints it: clippy is the compiler of the workspace's
    // own crates (`-D warnings`), covering what `cargo clippy --all-targets` checks except the
    // bench targets, which a test build does not compile. The optional element-type features
    // are on (f16/bf16 buffers and collectives, device_repr!), so the tests behind them run in
    // the same pass.
    tools::step(&format!(
        "cargo test --workspace --features {TEST_FEATURES} --no-run, with clippy -D warnings \
         compiling the workspace's crates"
    ));
    let built = test_binaries::build(cargo(), &TEST_BUILD)?;
    tools::step("cargo clippy --workspace --benches -- -D warnings (the bench targets)");
    tools::run(cargo().args([
        "clippy",
        "--workspace",
        "--benches",
        "--features",
        TEST_FEATURES,
        "--",
        "-D",
        "warnings",
    ]))?;
    // Every test binary of that build (cargo would run them one after another) and the
    // doctests, a few at a time. The binaries get the environment `cargo test` would give them,
    // without the lint wrapper: tests that run cargo themselves (fixture crates, trybuild) build
    // with plain rustc.
    tools::step("the tests: every test binary of that build, and the doctests");
    let env = [
        ("CMAKE", cmake.as_os_str()),
        ("ASCENDC_KERNELS_REQUIRE_CMAKE", "1".as_ref()),
    ];
    let mut doctests = cargo();
    test_binaries::with_lints(&mut doctests)?
        .args(TEST_BUILD)
        .arg("--doc");
    let mut jobs = vec![test_binaries::Job {
        label: "doctests of the workspace".to_string(),
        command: doctests,
    }];
    jobs.extend(test_binaries::test_jobs(&built, &env));
    test_binaries::run(jobs)?;
    // Without its default `emulator` feature the safe API has no backend on a machine without
    // CANN: its tests are built, not run, except the compile-fail suite, which needs no backend
    // and is checked here without `half` too (one case's expected output lists the element
    // types, and that list is what users without the feature see), and the check of what such a
    // production build says when it finds no CANN.
    tools::step(
        "cargo test -p ascendcl --no-default-features --no-run (builds without the emulator), \
         its compile-fail suite and its no-backend error",
    );
    let without = test_binaries::build(
        cargo(),
        &["test", "-p", "ascendcl", "--no-default-features"],
    )?;
    let runnable = ["tests/compile_fail.rs", "tests/without_emulator.rs"];
    let chosen: Vec<_> = without
        .into_iter()
        .filter(|e| e.is_test && runnable.contains(&e.source.as_str()))
        .collect();
    if chosen.len() != runnable.len() {
        return Err(format!(
            "the build without default features gave {} of the test binaries {runnable:?}",
            chosen.len()
        ));
    }
    test_binaries::run(test_binaries::test_jobs(&chosen, &env))?;
    // What `cargo doc` documents: the default members' libraries (the samples are programs,
    // `doc = false`; the xtask and its codegen are tools outside the default members), with the
    // test build's features (all of ascendcl's and hccl's, as docs.rs documents them), so that
    // the dependencies checked for the bench lints above are the ones rustdoc reads.
    tools::step(&format!(
        "cargo doc --no-deps --features {TEST_FEATURES} (warnings are errors)"
    ));
    tools::run(
        cargo()
            .args(["doc", "--no-deps", "--features", TEST_FEATURES])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    symbols::check(&built)?;
    tools::step("C program against the real headers, on the emulator's shared library");
    emu_root::c_program_test()?;
    crate::asc_host::program_test()?;
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
