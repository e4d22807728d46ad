//! Shared set-up: the emulated machine with four devices, and one thread per rank.
#![allow(dead_code)]

pub mod cases;

use ascendcl::{Device, Runtime};
use hccl::Comm;
use std::sync::Once;

pub const DEVICES: u32 = 4;

pub fn rt() -> &'static Runtime {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let mut c = ascendcl_emu::config::config();
        c.devices = DEVICES;
        ascendcl_emu::config::set_config(c);
    });
    Runtime::global().expect("runtime")
}

pub fn devices(n: u32) -> Vec<Device> {
    (0..n as i32).map(|i| rt().device(i).unwrap()).collect()
}

/// Runs `f` once per rank of a fresh `n`-rank communicator (`HcclCommInitAll`), each on its own
/// thread; returns the results in rank order.
pub fn per_rank<T: Send>(n: u32, f: impl Fn(Comm) -> hccl::Result<T> + Sync) -> Vec<T> {
    let comms = Comm::init_all(&devices(n)).expect("init_all");
    std::thread::scope(|t| {
        let hs: Vec<_> = comms.into_iter().map(|c| t.spawn(|| f(c))).collect();
        hs.into_iter()
            .map(|h| h.join().expect("rank panicked").expect("rank failed"))
            .collect()
    })
}
