//! Every collective against a host reference, one thread per rank, on the emulator.

mod common;

use common::per_rank;
use hccl::{Collectives, Comm, Element, ReduceOp, ResultCode};
use std::fmt::Debug;

/// A test element: built from small integers, reduced on the host as the emulator documents
/// (integers wrap).
trait Num: Element + PartialEq + Debug {
    fn of(v: i64) -> Self;
    fn op(a: Self, b: Self, op: ReduceOp) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => { $(impl Num for $t {
        fn of(v: i64) -> Self { v as $t }
        fn op(a: Self, b: Self, op: ReduceOp) -> Self {
            match op {
                ReduceOp::Sum => a.wrapping_add(b),
                ReduceOp::Prod => a.wrapping_mul(b),
                ReduceOp::Max => a.max(b),
                ReduceOp::Min => a.min(b),
            }
        }
    })* };
}
macro_rules! float {
    ($($t:ty),*) => { $(impl Num for $t {
        fn of(v: i64) -> Self { v as $t }
        fn op(a: Self, b: Self, op: ReduceOp) -> Self {
            match op {
                ReduceOp::Sum => a + b,
                ReduceOp::Prod => a * b,
                ReduceOp::Max => a.max(b),
                ReduceOp::Min => a.min(b),
            }
        }
    })* };
}
int!(i8, i16, i32, i64, u8, u16, u32, u64);
float!(f32, f64);

/// Rank `r`'s input: small values, different per rank and element, some negative.
fn input<T: Num>(r: u32, len: usize) -> Vec<T> {
    (0..len)
        .map(|i| T::of(((i as i64 * 7 + r as i64 * 3) % 9) - 2))
        .collect()
}

fn reduced<T: Num>(n: u32, len: usize, op: ReduceOp) -> Vec<T> {
    (1..n).fold(input::<T>(0, len), |acc, r| {
        acc.into_iter()
            .zip(input::<T>(r, len))
            .map(|(a, b)| T::op(a, b, op))
            .collect()
    })
}

const N: u32 = 4;
const LEN: usize = 13;

fn all_reduce_case<T: Num>(op: ReduceOp) -> Result<(), ResultCode> {
    let out = std::sync::Mutex::new(Ok(()));
    let results = per_rank(N, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let send = dev.clone_htod(&input::<T>(comm.rank(), LEN))?;
        let mut recv = dev.alloc_zeros::<T>(LEN)?;
        let mut inplace = dev.clone_htod(&input::<T>(comm.rank(), LEN))?;
        let r = hccl::scope(&stream, |s| {
            s.all_reduce(&comm, &send, &mut recv, op)?;
            s.all_reduce_in_place(&comm, &mut inplace, op)
        });
        match r {
            Ok(()) => Ok(Some((recv.copy_to_vec()?, inplace.copy_to_vec()?))),
            Err(e) => {
                *out.lock().unwrap() = Err(e.code().expect("an HCCL code"));
                Ok(None)
            }
        }
    });
    let status = out.into_inner().unwrap();
    if status.is_ok() {
        let want = reduced::<T>(N, LEN, op);
        for (rank, r) in results.into_iter().enumerate() {
            let (a, b) = r.expect("every rank succeeded");
            assert_eq!(a, want, "rank {rank} {op:?} {}", std::any::type_name::<T>());
            assert_eq!(b, want, "in place, rank {rank} {op:?}");
        }
    } else {
        assert!(results.iter().all(Option::is_none), "every rank refused it");
    }
    status
}

#[test]
fn all_reduce_every_type_and_operation() {
    for op in ReduceOp::ALL {
        all_reduce_case::<i8>(op).unwrap();
        all_reduce_case::<i32>(op).unwrap();
        all_reduce_case::<i64>(op).unwrap();
        all_reduce_case::<f32>(op).unwrap();
        // A2/A3 tables: no product of int16; unsigned and f64 reductions refused.
        let i16s = all_reduce_case::<i16>(op);
        if op == ReduceOp::Prod {
            assert_eq!(i16s, Err(ResultCode::NotSupport));
        } else {
            i16s.unwrap();
        }
        assert_eq!(all_reduce_case::<u32>(op), Err(ResultCode::NotSupport));
        assert_eq!(all_reduce_case::<u64>(op), Err(ResultCode::NotSupport));
        assert_eq!(all_reduce_case::<f64>(op), Err(ResultCode::NotSupport));
        assert_eq!(all_reduce_case::<u8>(op), Err(ResultCode::NotSupport));
    }
}

#[test]
fn broadcast_reduce_and_gathers_match_the_host() {
    let root = 2;
    let got = per_rank(N, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let r = comm.rank();
        let n = comm.size() as usize;
        let mut bcast = dev.clone_htod(&input::<u16>(r, LEN))?;
        let send = dev.clone_htod(&input::<i32>(r, LEN))?;
        let mut reduce = dev.alloc_zeros::<i32>(LEN)?;
        let big = dev.clone_htod(&input::<f32>(r, LEN * n))?;
        let mut rs = dev.alloc_zeros::<f32>(LEN)?;
        let mut ag = dev.alloc_zeros::<i32>(LEN * n)?;
        let mut a2a = dev.alloc_zeros::<f32>(LEN * n)?;
        let mut sc = dev.alloc_zeros::<f32>(LEN)?;
        hccl::scope(&stream, |s| {
            s.broadcast(&comm, &mut bcast, root)?;
            s.reduce_to_root(&comm, &send, &mut reduce, ReduceOp::Max, root)?;
            s.reduce_scatter(&comm, &big, &mut rs, ReduceOp::Sum)?;
            s.all_gather(&comm, &send, &mut ag)?;
            s.all_to_all(&comm, &big, &mut a2a)?;
            s.scatter(&comm, (r == root).then_some(&big), &mut sc, root)?;
            s.barrier(&comm)
        })?;
        Ok((
            bcast.copy_to_vec()?,
            reduce.copy_to_vec()?,
            rs.copy_to_vec()?,
            ag.copy_to_vec()?,
            a2a.copy_to_vec()?,
            sc.copy_to_vec()?,
        ))
    });
    let n = N as usize;
    let big: Vec<Vec<f32>> = (0..N).map(|r| input(r, LEN * n)).collect();
    let gathered: Vec<i32> = (0..N).flat_map(|r| input::<i32>(r, LEN)).collect();
    for (r, (bcast, reduce, rs, ag, a2a, sc)) in got.into_iter().enumerate() {
        assert_eq!(bcast, input::<u16>(root, LEN), "broadcast, rank {r}");
        if r == root as usize {
            assert_eq!(
                reduce,
                reduced::<i32>(N, LEN, ReduceOp::Max),
                "reduce at the root"
            );
        }
        let block = |v: &Vec<f32>, j: usize| v[j * LEN..(j + 1) * LEN].to_vec();
        let want_rs: Vec<f32> = (0..LEN)
            .map(|i| big.iter().map(|b| b[r * LEN + i]).sum())
            .collect();
        assert_eq!(rs, want_rs, "reduce-scatter, rank {r}");
        assert_eq!(ag, gathered, "all-gather, rank {r}");
        let want_a2a: Vec<f32> = (0..n).flat_map(|i| block(&big[i], r)).collect();
        assert_eq!(a2a, want_a2a, "all-to-all, rank {r}");
        assert_eq!(sc, block(&big[root as usize], r), "scatter, rank {r}");
    }
}

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

#[cfg(feature = "half")]
#[test]
fn half_types_reduce() {
    use ascendcl::half::{bf16, f16};
    let got = per_rank(2, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let x = f16::from_f32(comm.rank() as f32 + 0.5);
        let y = bf16::from_f32(comm.rank() as f32 * 2.0 + 1.0);
        let mut a = dev.clone_htod(&[x; 3])?;
        let mut b = dev.clone_htod(&[y; 3])?;
        hccl::scope(&stream, |s| {
            s.all_reduce_in_place(&comm, &mut a, ReduceOp::Sum)?;
            s.all_reduce_in_place(&comm, &mut b, ReduceOp::Max)
        })?;
        Ok((a.copy_to_vec()?, b.copy_to_vec()?))
    });
    for (a, b) in got {
        assert_eq!(a, [f16::from_f32(2.0); 3]);
        assert_eq!(b, [bf16::from_f32(3.0); 3]);
    }
}

#[test]
fn comm_is_send() {
    fn send<T: Send>() {}
    send::<Comm>();
}
