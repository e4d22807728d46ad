//! Builds kernels/kernel_add.cpp (host mode without CANN, NPU mode with it) and its launcher.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/kernel_add.cpp")
        .compile("kernel_add");
}
