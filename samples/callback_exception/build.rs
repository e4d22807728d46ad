//! Builds kernels/kernel_ops.cpp (EasyOP, ErrorOP) with ascendc-build.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/kernel_ops.cpp")
        .compile("kernel_ops");
}
