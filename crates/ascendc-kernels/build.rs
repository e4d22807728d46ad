//! Builds the kernels with `ascendc-build` (NPU mode with a CANN install that has
//! `ascendc.cmake`, host mode otherwise; `ASCENDC_BUILD_MODE` forces one) and records what the
//! build found for `build_info()`.

fn main() {
    let out = ascendc_build::Build::new()
        .file("cpp/kernels/write_read_value.cpp")
        .compile("kernels");
    let show = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    for (name, value) in [
        ("SOC_VERSION", out.soc_version.clone()),
        ("SOC_ORIGIN", out.soc_origin.clone()),
        ("ASCENDC_CMAKE_DIR", show(&out.ascendc_cmake_dir)),
        ("CANN_ROOT", show(&out.cann_root)),
        ("CMAKE", show(&out.cmake)),
        ("BINARY", show(&out.binary)),
    ] {
        println!(
            "cargo:rustc-env=ASCENDC_KERNELS_{name}={}",
            value.unwrap_or_default()
        );
    }
}
