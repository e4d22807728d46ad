//! Builds kernels/vector_add.cpp (host mode without CANN, NPU mode with it) and its launchers.

fn main() {
    let out = ascendc_build::Build::new()
        .file("kernels/vector_add.cpp")
        .compile("vector_add");
    println!("cargo:rustc-env=VECTOR_ADD_KERNELS_MODE={}", out.mode);
}
