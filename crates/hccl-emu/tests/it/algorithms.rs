//! The chunked algorithms on every shape they meet: all-reduce, reduce-scatter and all-gather
//! with each algorithm forced, on rank counts that are and are not powers of two, sizes from
//! less than one element per rank to several slots per segment, in place and not.

use crate::common::*;
use hccl_emu::{DType, RedOp};

const ALGOS: [Algo; 4] = [
    None,
    Some("level0:ring"),
    Some("level0:H-D_R"),
    Some("level0:fullmesh"),
];

/// Counts of elements: fewer than the ranks, odd, one slot and a bit, many slots.
fn counts(n: usize) -> Vec<usize> {
    vec![1, n - 1, 13, SLOT / 4 + 3, 5 * SLOT / 4 * n + 7]
}

fn check_all_reduce(ranks: &Ranks, t: DType, op: RedOp, count: usize, in_place: bool, what: &str) {
    let n = ranks.n();
    let ins: Vec<Vec<u8>> = (0..n)
        .map(|r| data(t, count, r as u64 * 7 + count as u64))
        .collect();
    let want = reference(t, op, &ins);
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    let recvs: Vec<DevBuf> = ranks
        .0
        .iter()
        .map(|r| DevBuf::new(r.dev, count * t.size()))
        .collect();
    for (i, r) in ranks.0.iter().enumerate() {
        let out = if in_place { sends[i].ptr } else { recvs[i].ptr };
        ok(unsafe {
            HcclAllReduce(
                sends[i].ptr,
                out,
                count as u64,
                t.raw(),
                op.raw(),
                r.comm,
                r.stream,
            )
        });
    }
    ranks.sync_ok();
    for i in 0..n {
        let got = if in_place {
            sends[i].read()
        } else {
            recvs[i].read()
        };
        assert!(
            same_reduction(t, op, &got, &want),
            "{what}: all-reduce {} {} x{count}, rank {i}",
            t.name(),
            op.name()
        );
    }
}

fn check_reduce_scatter(ranks: &Ranks, t: DType, op: RedOp, count: usize, what: &str) {
    let n = ranks.n();
    let b = count * t.size();
    let ins: Vec<Vec<u8>> = (0..n)
        .map(|r| data(t, count * n, r as u64 * 5 + count as u64))
        .collect();
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    let recvs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, b)).collect();
    for (i, r) in ranks.0.iter().enumerate() {
        ok(unsafe {
            HcclReduceScatter(
                sends[i].ptr,
                recvs[i].ptr,
                count as u64,
                t.raw(),
                op.raw(),
                r.comm,
                r.stream,
            )
        });
    }
    ranks.sync_ok();
    for (i, d) in recvs.iter().enumerate() {
        let blocks: Vec<Vec<u8>> = ins.iter().map(|x| x[i * b..(i + 1) * b].to_vec()).collect();
        assert!(
            same_reduction(t, op, &d.read(), &reference(t, op, &blocks)),
            "{what}: reduce-scatter {} x{count}, rank {i}",
            t.name()
        );
    }
}

fn check_all_gather(ranks: &Ranks, t: DType, count: usize, in_place: bool, what: &str) {
    let n = ranks.n();
    let b = count * t.size();
    let ins: Vec<Vec<u8>> = (0..n)
        .map(|r| data(t, count, r as u64 * 3 + count as u64))
        .collect();
    let whole = ins.concat();
    // In place as NCCL has it: each rank's input is its block of the output.
    let outs: Vec<DevBuf> = ranks
        .0
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let d = DevBuf::new(r.dev, n * b);
            if in_place {
                let mut pre = vec![0u8; n * b];
                pre[i * b..(i + 1) * b].copy_from_slice(&ins[i]);
                d.write(&pre);
            }
            d
        })
        .collect();
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    for (i, r) in ranks.0.iter().enumerate() {
        let send = if in_place {
            // SAFETY: block i lies within the output allocation.
            unsafe { outs[i].ptr.cast::<u8>().add(i * b).cast() }
        } else {
            sends[i].ptr
        };
        ok(unsafe { HcclAllGather(send, outs[i].ptr, count as u64, t.raw(), r.comm, r.stream) });
    }
    ranks.sync_ok();
    for (i, d) in outs.iter().enumerate() {
        assert_eq!(
            d.read(),
            whole,
            "{what}: all-gather {} x{count}, rank {i}",
            t.name()
        );
    }
}

fn every_shape(n: usize, first: i32) {
    for algo in ALGOS {
        let ranks = Ranks::with(first, n, algo);
        let what = format!("{n} ranks, {}", algo.unwrap_or("picked"));
        for count in counts(n) {
            check_all_reduce(&ranks, DType::F32, RedOp::Sum, count, false, &what);
            check_all_reduce(&ranks, DType::I32, RedOp::Max, count, true, &what);
            check_reduce_scatter(&ranks, DType::F32, RedOp::Sum, count, &what);
            check_all_gather(&ranks, DType::I32, count, false, &what);
            check_all_gather(&ranks, DType::F32, count, true, &what);
        }
        // Types of other sizes, where chunks hold other numbers of elements.
        for t in [DType::I8, DType::F16, DType::I16, DType::I64] {
            check_all_reduce(&ranks, t, RedOp::Sum, SLOT / t.size() + 5, false, &what);
            check_reduce_scatter(&ranks, t, RedOp::Min, 2 * SLOT / t.size() + 1, &what);
        }
    }
}

#[test]
fn two_ranks() {
    every_shape(2, 0);
}

#[test]
fn three_ranks() {
    every_shape(3, 2);
}

#[test]
fn four_ranks() {
    every_shape(4, 4);
}

#[test]
fn five_ranks() {
    every_shape(5, 1);
}

#[test]
fn eight_ranks() {
    every_shape(8, 0);
}
