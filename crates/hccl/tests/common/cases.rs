//! Every collective of the safe API against a host reference, for one element type: the cases,
//! their inputs and layouts, and the table of what the library accepts.
#![allow(dead_code)]

use hccl::{
    Blocks, Collectives, Comm, CountMatrix, Element, Fp8E4M3, Fp8E5M2, Fp8E8M0, Hif8, ReduceOp,
    ResultCode, SendRecv,
};
use std::fmt::Debug;

/// A test element: built from small integers, reduced on the host as the emulator documents
/// (integers wrap, halves rounded after each step, rank order).
pub trait Num: Element + PartialEq + Debug {
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
macro_rules! bytes {
    ($($t:ident),*) => { $(impl Num for $t {
        fn of(v: i64) -> Self { $t(v as u8) }
        fn op(_: Self, _: Self, _: ReduceOp) -> Self {
            unreachable!("no library reduces {}", stringify!($t))
        }
    })* };
}
#[cfg(feature = "half")]
macro_rules! half {
    ($($t:ty),*) => { $(impl Num for $t {
        fn of(v: i64) -> Self { <$t>::from_f32(v as f32) }
        fn op(a: Self, b: Self, op: ReduceOp) -> Self {
            <$t>::from_f32(f32::op(a.to_f32(), b.to_f32(), op))
        }
    })* };
}
int!(i8, i16, i32, i64, i128, u8, u16, u32, u64);
float!(f32, f64);
bytes!(Hif8, Fp8E4M3, Fp8E5M2, Fp8E8M0);
#[cfg(feature = "half")]
half!(ascendcl::half::f16, ascendcl::half::bf16);

/// Which library's tables the emulator answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chip {
    A2A3,
    A950,
}

/// Whether data movement accepts the type: `HcclDataType` 0 to 11 everywhere, the 8-bit
/// floats on Ascend 950, INT128 nowhere.
pub fn moves<T: Element>(chip: Chip) -> bool {
    match T::DATA_TYPE {
        0..=11 => true,
        14..=17 => chip == Chip::A950,
        _ => false,
    }
}

/// Whether reductions accept the type with `op`: the signed integers, fp16, fp32 and bf16
/// (UINT64 and FP64 on Ascend 950 too); no product of int16 or bf16.
pub fn reduces<T: Element>(chip: Chip, op: ReduceOp) -> bool {
    use hccl::sys::*;
    let t = T::DATA_TYPE;
    let base = [
        HCCL_DATA_TYPE_INT8,
        HCCL_DATA_TYPE_INT16,
        HCCL_DATA_TYPE_INT32,
        HCCL_DATA_TYPE_INT64,
        HCCL_DATA_TYPE_FP16,
        HCCL_DATA_TYPE_FP32,
        HCCL_DATA_TYPE_BFP16,
    ]
    .contains(&t)
        || (chip == Chip::A950 && [HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_FP64].contains(&t));
    base && !(op == ReduceOp::Prod && [HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_BFP16].contains(&t))
}

/// ReduceScatterV on Atlas A2/A3 also refuses INT64 and products.
pub fn reduces_v<T: Element>(chip: Chip, op: ReduceOp) -> bool {
    reduces::<T>(chip, op)
        && !(chip == Chip::A2A3
            && (T::DATA_TYPE == hccl::sys::HCCL_DATA_TYPE_INT64 || op == ReduceOp::Prod))
}

/// Rank `r`'s input: small values, different per rank, element and `salt`, some negative.
pub fn input<T: Num>(r: usize, len: usize, salt: i64) -> Vec<T> {
    (0..len)
        .map(|i| T::of(((i as i64 * 7 + r as i64 * 3 + salt) % 9) - 2))
        .collect()
}

/// The untouched value of output elements no rank writes.
pub fn sentinel<T: Num>() -> T {
    T::of(99)
}

fn fold<T: Num>(parts: impl IntoIterator<Item = Vec<T>>, op: ReduceOp) -> Vec<T> {
    let mut it = parts.into_iter();
    let first = it.next().expect("one rank at least");
    it.fold(first, |acc, p| {
        acc.into_iter()
            .zip(p)
            .map(|(a, b)| T::op(a, b, op))
            .collect()
    })
}

/// The number of elements rank `i` sends rank `j` in the all-to-all-v case.
fn a2av_count(i: usize, j: usize) -> usize {
    (i + 2 * j) % 3 + 1
}

/// Blocks in reverse rank order with a one-element gap after each.
fn reversed_with_gaps(counts: &[usize]) -> Blocks {
    let mut displs = vec![0; counts.len()];
    let mut at = 0;
    for j in (0..counts.len()).rev() {
        displs[j] = at;
        at += counts[j] + 1;
    }
    Blocks::new(counts, &displs).unwrap()
}

pub fn a2av_send_blocks(r: usize, n: usize) -> Blocks {
    reversed_with_gaps(&(0..n).map(|j| a2av_count(r, j)).collect::<Vec<_>>())
}

pub fn a2av_recv_blocks(r: usize, n: usize) -> Blocks {
    reversed_with_gaps(&(0..n).map(|i| a2av_count(i, r)).collect::<Vec<_>>())
}

/// Send blocks of the reduce-scatter-v case: out of order, with gaps, one of them empty when
/// there are more than two ranks.
pub fn rsv_blocks(n: usize) -> Blocks {
    let counts: Vec<usize> = (0..n)
        .map(|j| if j == 1 && n > 2 { 0 } else { 2 * j + 3 })
        .collect();
    reversed_with_gaps(&counts)
}

/// Receive blocks of the all-gather-v case (every rank sends at least one element).
pub fn agv_blocks(n: usize) -> Blocks {
    reversed_with_gaps(&(0..n).map(|i| (i * 5) % 4 + 1).collect::<Vec<_>>())
}

/// The all-to-all-vc matrix: some counts 0.
pub fn vc_matrix(n: usize) -> CountMatrix {
    CountMatrix::from_fn(n, |i, j| (2 * i + j + 1) % 4).unwrap()
}

/// One case's outcome on one rank.
pub type Outcome<T> = Result<Vec<T>, ResultCode>;

/// Runs `f` in a scope on `stream`; an HCCL refusal comes back as its code, any other failure
/// panics (the arguments are valid).
fn run<'env, F>(stream: &'env ascendcl::Stream, f: F) -> Result<(), ResultCode>
where
    F: for<'s> FnOnce(&'s ascendcl::Scope<'s, 'env>) -> hccl::Result<()>,
{
    hccl::scope(stream, f).map_err(|e| {
        e.code()
            .unwrap_or_else(|| panic!("not an HCCL refusal: {e}"))
    })
}

pub const LEN: usize = 13;
pub const ROOT: u32 = 1;

/// The names of the cases [`rank_cases`] runs, in order.
pub fn case_names() -> Vec<String> {
    let mut v = Vec::new();
    for op in ReduceOp::ALL {
        for c in [
            "all_reduce",
            "all_reduce_in_place",
            "reduce_to_root",
            "reduce_scatter",
            "reduce_scatter_v",
        ] {
            v.push(format!("{c}/{op:?}"));
        }
    }
    for c in [
        "broadcast",
        "all_gather",
        "all_gather_v",
        "all_to_all",
        "all_to_all_v",
        "all_to_all_vc",
        "scatter",
        "send_recv",
        "batch_send_recv",
    ] {
        v.push(c.to_string());
    }
    v
}

/// Every case on one rank, in the order of [`case_names`].
pub fn rank_cases<T: Num>(comm: &Comm) -> Vec<Outcome<T>> {
    let dev = comm.device().clone();
    let stream = dev.create_stream().unwrap();
    let (r, n) = (comm.rank() as usize, comm.size() as usize);
    let htod = |v: &[T]| dev.clone_htod(v).unwrap();
    let filled = |len: usize| htod(&vec![sentinel::<T>(); len]);
    let read = |b: &ascendcl::DeviceBuffer<T>| b.copy_to_vec().unwrap();
    let mut out = Vec::new();
    for op in ReduceOp::ALL {
        let send = htod(&input::<T>(r, LEN, 0));
        let mut recv = filled(LEN);
        let done = run(&stream, |s| s.all_reduce(comm, &send, &mut recv, op));
        out.push(done.map(|()| read(&recv)));

        let mut buf = htod(&input::<T>(r, LEN, 1));
        let done = run(&stream, |s| s.all_reduce_in_place(comm, &mut buf, op));
        out.push(done.map(|()| read(&buf)));

        let mut recv = filled(LEN);
        let done = run(&stream, |s| {
            s.reduce_to_root(comm, &send, &mut recv, op, ROOT)
        });
        out.push(done.map(|()| read(&recv)));

        let big = htod(&input::<T>(r, LEN * n, 2));
        let mut recv = filled(LEN);
        let done = run(&stream, |s| s.reduce_scatter(comm, &big, &mut recv, op));
        out.push(done.map(|()| read(&recv)));

        let blocks = rsv_blocks(n);
        let sendv = htod(&input::<T>(r, blocks.extent() + 2, 3));
        let own = blocks.count(r).unwrap();
        // A rank whose block is empty receives nothing: it passes an empty view.
        let mut recv = filled(own.max(1));
        let mut view = recv.slice_mut(0..own).unwrap();
        let done = run(&stream, |s| {
            s.reduce_scatter_v(comm, &sendv, &blocks, &mut view, op)
        });
        out.push(done.map(|()| read(&recv)[..own].to_vec()));
    }

    let mut buf = htod(&input::<T>(r, LEN, 4));
    let done = run(&stream, |s| s.broadcast(comm, &mut buf, ROOT));
    out.push(done.map(|()| read(&buf)));

    let send = htod(&input::<T>(r, LEN, 5));
    let mut recv = filled(LEN * n);
    let done = run(&stream, |s| s.all_gather(comm, &send, &mut recv));
    out.push(done.map(|()| read(&recv)));

    let blocks = agv_blocks(n);
    let send = htod(&input::<T>(r, blocks.count(r).unwrap(), 6));
    let mut recv = filled(blocks.extent() + 1);
    let done = run(&stream, |s| s.all_gather_v(comm, &send, &mut recv, &blocks));
    out.push(done.map(|()| read(&recv)));

    let send = htod(&input::<T>(r, LEN * n, 7));
    let mut recv = filled(LEN * n);
    let done = run(&stream, |s| s.all_to_all(comm, &send, &mut recv));
    out.push(done.map(|()| read(&recv)));

    let (sb, rb) = (a2av_send_blocks(r, n), a2av_recv_blocks(r, n));
    let send = htod(&input::<T>(r, sb.extent(), 8));
    let mut recv = filled(rb.extent());
    let done = run(&stream, |s| {
        s.all_to_all_v(comm, &send, &sb, &mut recv, &rb)
    });
    out.push(done.map(|()| read(&recv)));

    let m = vc_matrix(n);
    // One element of spare capacity on each side: the buffers need only hold the blocks.
    let send = htod(&input::<T>(r, m.sent_by(r) + 1, 9));
    let mut recv = filled(m.received_by(r) + 1);
    let done = run(&stream, |s| s.all_to_all_vc(comm, &send, &mut recv, &m));
    out.push(done.map(|()| read(&recv)));

    let send = htod(&input::<T>(r, LEN * n, 10));
    let mut recv = filled(LEN);
    let is_root = r == ROOT as usize;
    let done = run(&stream, |s| {
        s.scatter(comm, is_root.then_some(&send), &mut recv, ROOT)
    });
    out.push(done.map(|()| read(&recv)));

    let send = htod(&input::<T>(r, LEN, 11));
    let mut recv = filled(LEN);
    let (next, prev) = (((r + 1) % n) as u32, ((r + n - 1) % n) as u32);
    // Even ranks send first and odd ones receive first; with an odd number of ranks the last
    // rank is even and its successor is rank 0, which sends first: it receives first too.
    let send_first = r % 2 == 0 && r + 1 != n;
    let done = run(&stream, |s| {
        if send_first {
            s.send(comm, &send, next)?;
            s.recv(comm, &mut recv, prev)
        } else {
            s.recv(comm, &mut recv, prev)?;
            s.send(comm, &send, next)
        }
    });
    out.push(done.map(|()| read(&recv)));

    let send = htod(&input::<T>(r, LEN, 12));
    let mut recv = filled(LEN);
    let done = run(&stream, |s| {
        s.batch_send_recv(
            comm,
            [SendRecv::recv(&mut recv, prev), SendRecv::send(&send, next)],
        )
    });
    out.push(done.map(|()| read(&recv)));
    out
}

/// What every rank should see for every case, in the order of [`case_names`].
pub fn expected<T: Num>(chip: Chip, n: usize) -> Vec<Vec<Outcome<T>>> {
    let refuse = |ok: bool, v: Vec<Vec<T>>| -> Vec<Outcome<T>> {
        v.into_iter()
            .map(|x| {
                if ok {
                    Ok(x)
                } else {
                    Err(ResultCode::NotSupport)
                }
            })
            .collect()
    };
    let every = |f: &dyn Fn(usize) -> Vec<T>| (0..n).map(f).collect::<Vec<_>>();
    let mut cases = Vec::new();
    for op in ReduceOp::ALL {
        let ok = reduces::<T>(chip, op);
        let want = || fold((0..n).map(|i| input::<T>(i, LEN, 0)), op);
        let lazy = |f: &dyn Fn(usize) -> Vec<T>| if ok { every(f) } else { every(&|_| Vec::new()) };
        cases.push(refuse(ok, lazy(&|_| want())));
        cases.push(refuse(
            ok,
            lazy(&|_| fold((0..n).map(|i| input::<T>(i, LEN, 1)), op)),
        ));
        // Only the root's receive buffer is written.
        cases.push(refuse(
            ok,
            lazy(&|r| {
                if r == ROOT as usize {
                    want()
                } else {
                    vec![sentinel(); LEN]
                }
            }),
        ));
        cases.push(refuse(
            ok,
            lazy(&|r| {
                fold(
                    (0..n).map(|i| input::<T>(i, LEN * n, 2)[r * LEN..(r + 1) * LEN].to_vec()),
                    op,
                )
            }),
        ));
        let okv = reduces_v::<T>(chip, op);
        let b = rsv_blocks(n);
        let blocks = |r: usize| {
            let (c, d) = (b.count(r).unwrap(), b.displacement(r).unwrap());
            if c == 0 {
                return Vec::new();
            }
            fold(
                (0..n).map(|i| input::<T>(i, b.extent() + 2, 3)[d..d + c].to_vec()),
                op,
            )
        };
        cases.push(refuse(
            okv,
            if okv {
                every(&blocks)
            } else {
                every(&|_| Vec::new())
            },
        ));
    }
    let ok = moves::<T>(chip);
    let lazy = |f: &dyn Fn(usize) -> Vec<T>| if ok { every(f) } else { every(&|_| Vec::new()) };
    cases.push(refuse(ok, lazy(&|_| input::<T>(ROOT as usize, LEN, 4))));
    cases.push(refuse(
        ok,
        lazy(&|_| (0..n).flat_map(|i| input::<T>(i, LEN, 5)).collect()),
    ));
    let b = agv_blocks(n);
    cases.push(refuse(
        ok,
        lazy(&|_| {
            let mut v = vec![sentinel::<T>(); b.extent() + 1];
            for i in 0..n {
                let d = b.displacement(i).unwrap();
                for (k, x) in input::<T>(i, b.count(i).unwrap(), 6)
                    .into_iter()
                    .enumerate()
                {
                    v[d + k] = x;
                }
            }
            v
        }),
    ));
    cases.push(refuse(
        ok,
        lazy(&|r| {
            (0..n)
                .flat_map(|i| input::<T>(i, LEN * n, 7)[r * LEN..(r + 1) * LEN].to_vec())
                .collect()
        }),
    ));
    cases.push(refuse(
        ok,
        lazy(&|r| {
            let rb = a2av_recv_blocks(r, n);
            let mut v = vec![sentinel::<T>(); rb.extent()];
            for i in 0..n {
                let sb = a2av_send_blocks(i, n);
                let src = input::<T>(i, sb.extent(), 8);
                let (sd, c) = (sb.displacement(r).unwrap(), sb.count(r).unwrap());
                assert_eq!(c, rb.count(i).unwrap(), "the layouts agree");
                let rd = rb.displacement(i).unwrap();
                v[rd..rd + c].copy_from_slice(&src[sd..sd + c]);
            }
            v
        }),
    ));
    cases.push(refuse(
        ok,
        lazy(&|r| {
            let m = vc_matrix(n);
            let mut v = Vec::new();
            for i in 0..n {
                let src = input::<T>(i, m.sent_by(i) + 1, 9);
                let at: usize = (0..r).map(|k| m.get(i, k).unwrap()).sum();
                v.extend_from_slice(&src[at..at + m.get(i, r).unwrap()]);
            }
            v.push(sentinel());
            v
        }),
    ));
    cases.push(refuse(
        ok,
        lazy(&|r| input::<T>(ROOT as usize, LEN * n, 10)[r * LEN..(r + 1) * LEN].to_vec()),
    ));
    cases.push(refuse(ok, lazy(&|r| input::<T>((r + n - 1) % n, LEN, 11))));
    cases.push(refuse(ok, lazy(&|r| input::<T>((r + n - 1) % n, LEN, 12))));
    cases
}

/// Runs every case for `T` on `n` ranks (one thread each) and compares each rank's outcome with
/// the host's.
pub fn check_type<T: Num>(chip: Chip, n: u32) {
    let got = super::per_rank(n, |comm| Ok(rank_cases::<T>(&comm)));
    let want = expected::<T>(chip, n as usize);
    let names = case_names();
    assert_eq!(want.len(), names.len());
    for (k, name) in names.iter().enumerate() {
        for (r, rank) in got.iter().enumerate() {
            assert_eq!(
                rank[k],
                want[k][r],
                "{name}, rank {r} of {n}, {}",
                std::any::type_name::<T>()
            );
        }
    }
}
