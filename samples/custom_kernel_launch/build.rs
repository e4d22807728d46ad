//! Builds kernels/vector_add_kernel.cpp (host mode without CANN, NPU mode with it) and its
//! launcher.

fn main() {
    let out = ascendc_build::Build::new()
        .file("kernels/vector_add_kernel.cpp")
        .compile("vector_add_kernel");
    println!("cargo:rustc-env=VECTOR_ADD_KERNEL_MODE={}", out.mode);
}
