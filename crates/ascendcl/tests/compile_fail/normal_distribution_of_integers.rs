//! Normal distributions are defined for floating-point elements only: asking for normally
//! distributed integers does not compile (the runtime would refuse it at run time).
fn main() {
    let _ = ascendcl::Distribution::normal(0i32, 1);
}
