//! Builds kernels/print_hello.cpp (host mode without CANN, NPU mode with it) and its launcher.

fn main() {
    let out = ascendc_build::Build::new()
        .file("kernels/print_hello.cpp")
        .compile("print_hello");
    println!("cargo:rustc-env=PRINT_HELLO_KERNELS_MODE={}", out.mode);
}
