//! Builds kernels/add.cpp with ascendc-build. In host mode the build links a kernel binary (the
//! shared object the emulator loads); its path is what the sample loads by default. In NPU mode
//! there is no such file: the sample then needs `--binary` with the operator binary (`.o`) built
//! for the SoC.

fn main() {
    let out = ascendc_build::Build::new()
        .file("kernels/add.cpp")
        .compile("add");
    let binary = out
        .binary
        .map(|b| b.display().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=KERNEL_BINARY_DEFAULT={binary}");
    println!("cargo:rustc-env=KERNEL_BINARY_MODE={}", out.mode);
}
