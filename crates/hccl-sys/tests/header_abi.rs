//! `comm_config_init` against the header's own inline `HcclCommConfigInit`, byte for byte.
//!
//! `cargo xtask test` (through `link-check --hccl`, hence the `link` feature) compiles
//! `fixture/config_init.cpp` against the real `hccl.h`, runs it, and names its output in
//! `HCCL_CONFIG_INIT_DUMP`; built only with the feature (`required-features` in Cargo.toml).

use hccl_sys as sys;

/// Storage with `HcclCommConfig`'s size and alignment, seen as plain bytes (padding included).
#[repr(C, align(8))]
struct Raw([u8; std::mem::size_of::<sys::HcclCommConfig>()]);

#[test]
fn comm_config_init_matches_the_header_byte_for_byte() {
    let path = std::env::var_os("HCCL_CONFIG_INIT_DUMP")
        .expect("HCCL_CONFIG_INIT_DUMP names the C++ program's output (set by cargo xtask)");
    let expected = std::fs::read(&path).unwrap();
    assert_eq!(expected.len(), 2240);

    // The same 0xAB start as the C++ program, so bytes neither side writes compare equal and
    // every byte one side writes and the other does not shows up.
    let mut raw = Raw([0xAB; 2240]);
    // SAFETY: `raw` is initialised, as large and as aligned as `HcclCommConfig`, and every bit
    // pattern is a valid `HcclCommConfig` (integers and byte arrays only). The reference ends
    // before `raw` is read again.
    let config = unsafe { &mut *raw.0.as_mut_ptr().cast::<sys::HcclCommConfig>() };
    sys::comm_config_init(config);
    let differing: Vec<usize> = (0..expected.len())
        .filter(|&i| raw.0[i] != expected[i])
        .collect();
    assert!(
        differing.is_empty(),
        "bytes differ at offsets {differing:?}"
    );
}
