//! Every collective for every data type as the Ascend 950 library answers: the whole test binary
//! emulates an Ascend 950 SoC, whose tables reduce UINT64 and FP64 too and move the 8-bit
//! floats. (Its own binary: the SoC is the process's.)

mod common;

use common::cases::{Chip, check_type};
use std::sync::Once;

fn ascend950() {
    static SOC: Once = Once::new();
    SOC.call_once(|| {
        let mut c = ascendcl_emu::config::config();
        c.soc = "Ascend950PR_9599".into();
        ascendcl_emu::config::set_config(c);
    });
    let _ = common::rt();
}

macro_rules! every_type {
    ($($name:ident: $t:ty;)*) => { $(
        #[test]
        fn $name() {
            ascend950();
            check_type::<$t>(Chip::A950, 3);
        }
    )* };
}

every_type! {
    every_collective_i8: i8;
    every_collective_i16: i16;
    every_collective_i32: i32;
    every_collective_i64: i64;
    every_collective_i128: i128;
    every_collective_u8: u8;
    every_collective_u16: u16;
    every_collective_u32: u32;
    every_collective_u64: u64;
    every_collective_f32: f32;
    every_collective_f64: f64;
    every_collective_hif8: hccl::Hif8;
    every_collective_fp8e4m3: hccl::Fp8E4M3;
    every_collective_fp8e5m2: hccl::Fp8E5M2;
    every_collective_fp8e8m0: hccl::Fp8E8M0;
}

#[cfg(feature = "half")]
every_type! {
    every_collective_f16: ascendcl::half::f16;
    every_collective_bf16: ascendcl::half::bf16;
}

#[test]
fn the_emulated_soc_is_an_ascend_950() {
    ascend950();
    assert!(common::rt().soc_name().unwrap().starts_with("Ascend950"));
}
