//! Every collective against a host reference, one thread per rank, on the emulator (the f16 and
//! bf16 cases with the `half` feature, which `cargo xtask test` turns on).

use crate::common::per_rank;
use hccl::{Collectives, Comm, ReduceOp};

use crate::common::cases::{Chip, check_type};

// Every collective for every data type of `hccl_types.h`, on three ranks (odd), with odd
// lengths and layouts with gaps and empty blocks, against the host; the Atlas A2/A3 tables
// decide which types and operations the library refuses (`HCCL_E_NOT_SUPPORT` on every rank).
macro_rules! every_type {
    ($($name:ident: $t:ty, $n:expr;)*) => { $(
        #[test]
        fn $name() {
            check_type::<$t>(Chip::A2A3, $n);
        }
    )* };
}

every_type! {
    every_collective_i8: i8, 3;
    every_collective_i16: i16, 3;
    every_collective_i32: i32, 3;
    every_collective_i64: i64, 3;
    every_collective_i128: i128, 2;
    every_collective_u8: u8, 3;
    every_collective_u16: u16, 3;
    every_collective_u32: u32, 3;
    every_collective_u64: u64, 3;
    every_collective_f32: f32, 3;
    every_collective_f64: f64, 3;
    every_collective_hif8: hccl::Hif8, 2;
    every_collective_fp8e4m3: hccl::Fp8E4M3, 2;
    every_collective_fp8e5m2: hccl::Fp8E5M2, 2;
    every_collective_fp8e8m0: hccl::Fp8E8M0, 2;
    every_collective_f32_on_two_ranks: f32, 2;
    every_collective_i32_on_four_ranks: i32, 4;
}

#[cfg(feature = "half")]
every_type! {
    every_collective_f16: ascendcl::half::f16, 3;
    every_collective_bf16: ascendcl::half::bf16, 3;
}

/// Rank `r`'s input for the tests below.
fn input<T: crate::common::cases::Num>(r: u32, len: usize) -> Vec<T> {
    crate::common::cases::input(r as usize, len, 0)
}

const N: u32 = 4;
const LEN: usize = 13;

#[test]
fn send_and_recv_around_a_ring() {
    let got = per_rank(N, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let (r, n) = (comm.rank(), comm.size());
        let send = dev.clone_htod(&input::<i64>(r, LEN))?;
        let mut recv = dev.alloc_zeros::<i64>(LEN)?;
        hccl::scope(&stream, |s| {
            // Even ranks send first, odd ones receive first: no cycle of waiting sends.
            if r % 2 == 0 {
                s.send(&comm, &send, (r + 1) % n)?;
                s.recv(&comm, &mut recv, (r + n - 1) % n)
            } else {
                s.recv(&comm, &mut recv, (r + n - 1) % n)?;
                s.send(&comm, &send, (r + 1) % n)
            }
        })?;
        Ok(recv.copy_to_vec()?)
    });
    for (r, v) in got.into_iter().enumerate() {
        assert_eq!(v, input::<i64>((r as u32 + N - 1) % N, LEN), "rank {r}");
    }
}

#[test]
fn a_claimed_buffer_feeds_several_collectives() {
    let got = per_rank(2, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let mut buf = dev.clone_htod(&[comm.rank() as i32 + 1; 5])?;
        let mut whole = dev.alloc_zeros::<i32>(10)?;
        hccl::scope(&stream, |s| {
            let b = s.claim(&mut buf);
            s.all_reduce_in_place(&comm, b, ReduceOp::Sum)?; // 3 everywhere
            s.all_gather(&comm, b, &mut whole)
        })?;
        Ok(whole.copy_to_vec()?)
    });
    for v in got {
        assert_eq!(v, [3; 10]);
    }
}

#[test]
fn comm_is_send() {
    fn send<T: Send>() {}
    send::<Comm>();
}
