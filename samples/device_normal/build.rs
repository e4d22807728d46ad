//! Builds kernels/add.cpp (the `out = self + alpha * other` kernel) with ascendc-build.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/add.cpp")
        .compile("add");
}
