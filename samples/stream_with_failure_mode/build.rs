//! Builds kernels/kernel_ops.cpp (EasyOP, ErrorOP, LongOP) with ascendc-build.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/kernel_ops.cpp")
        .compile("kernel_ops");
}
