//! Builds kernels/uvm_add.cpp (host mode without CANN, NPU mode with it) and its launcher.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/uvm_add.cpp")
        .compile("uvm_add");
}
