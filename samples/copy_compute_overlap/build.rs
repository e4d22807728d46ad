//! Builds kernels/scale_add.cpp (host mode without CANN, NPU mode with it) and its launcher.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/scale_add.cpp")
        .compile("scale_add");
}
