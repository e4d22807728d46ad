//! Builds kernels/zero_copy_add.cpp (host mode without CANN, NPU mode with it) and its launcher.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/zero_copy_add.cpp")
        .compile("zero_copy_add");
}
