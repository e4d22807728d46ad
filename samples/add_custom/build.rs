//! Builds kernels/add_custom.cpp (host mode without CANN, NPU mode with it) and its launchers.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/add_custom.cpp")
        .compile("add_custom");
}
