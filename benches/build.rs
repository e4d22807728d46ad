//! Builds kernels/bench_kernels.cpp (the `empty` and `vector_add` kernels of
//! benches/kernels.rs) with ascendc-build, in host mode: the kernel benchmarks run on the
//! emulator.

fn main() {
    ascendc_build::Build::new()
        .file("kernels/bench_kernels.cpp")
        .mode(ascendc_build::Mode::Host)
        .compile("bench_kernels");
}
