//! Gives the shared library the SONAME of the runtime it stands in for, so that programs linked
//! against it record `libacl_rt.so` as their dependency, as they would with CANN.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libacl_rt.so");
    }
}
