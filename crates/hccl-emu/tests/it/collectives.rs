//! Each collective against a host reference: every accepted data type and reduce operation,
//! odd sizes, several rank counts.

use crate::common::*;
use hccl_emu::{DType, RedOp};

// Up to a few slots (`SLOT`), so the chunked algorithms cut them.
const COUNTS: [usize; 4] = [1, 7, 131, 1031];

fn seed(rank: usize, count: usize, t: DType) -> u64 {
    (rank as u64 + 1) * 1_000_003 + count as u64 * 31 + t.raw() as u64
}

fn all_reduce_matches_the_reference_for_every_type_and_operation(algo: Algo) {
    for n in [2usize, 3] {
        let ranks = Ranks::with(0, n, algo);
        for (t, op) in reducible() {
            for count in COUNTS {
                let ins: Vec<Vec<u8>> = (0..n).map(|r| data(t, count, seed(r, count, t))).collect();
                let want = reference(t, op, &ins);
                let bufs: Vec<(DevBuf, DevBuf)> = ranks
                    .0
                    .iter()
                    .zip(&ins)
                    .map(|(r, i)| (DevBuf::from(r.dev, i), DevBuf::new(r.dev, i.len())))
                    .collect();
                for (r, (s, d)) in ranks.0.iter().zip(&bufs) {
                    ok(unsafe {
                        HcclAllReduce(
                            s.ptr,
                            d.ptr,
                            count as u64,
                            t.raw(),
                            op.raw(),
                            r.comm,
                            r.stream,
                        )
                    });
                }
                ranks.sync_ok();
                for (i, (_, d)) in bufs.iter().enumerate() {
                    let got = d.read();
                    assert!(
                        same_reduction(t, op, &got, &want),
                        "{n} ranks, {} {} x{count}, rank {i}: {got:?} != {want:?}",
                        op.name(),
                        t.name()
                    );
                    // Every rank gets the same bits.
                    assert_eq!(got, bufs[0].1.read(), "rank {i} differs from rank 0");
                }
            }
        }
    }
}

fn all_reduce_in_place_and_on_four_ranks(algo: Algo) {
    let ranks = Ranks::with(2, 4, algo);
    for t in [DType::F16, DType::BF16, DType::I32, DType::F32] {
        let count = 257;
        let ins: Vec<Vec<u8>> = (0..4).map(|r| data(t, count, seed(r, 9, t))).collect();
        let want = reference(t, RedOp::Sum, &ins);
        let bufs: Vec<DevBuf> = ranks
            .0
            .iter()
            .zip(&ins)
            .map(|(r, i)| DevBuf::from(r.dev, i))
            .collect();
        for (r, b) in ranks.0.iter().zip(&bufs) {
            ok(unsafe {
                HcclAllReduce(
                    b.ptr,
                    b.ptr,
                    count as u64,
                    t.raw(),
                    RedOp::Sum.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        ranks.sync_ok();
        for b in &bufs {
            assert_eq!(b.read(), want, "in place, {}", t.name());
        }
    }
}

fn reduce_writes_only_the_roots_output(algo: Algo) {
    let n = 3;
    let ranks = Ranks::with(0, n, algo);
    for (t, op) in reducible() {
        for (k, count) in COUNTS.into_iter().enumerate() {
            let root = k % n;
            let ins: Vec<Vec<u8>> = (0..n).map(|r| data(t, count, seed(r, count, t))).collect();
            let want = reference(t, op, &ins);
            let filler = vec![0xA5u8; count * t.size()];
            let bufs: Vec<(DevBuf, DevBuf)> = ranks
                .0
                .iter()
                .zip(&ins)
                .map(|(r, i)| (DevBuf::from(r.dev, i), DevBuf::from(r.dev, &filler)))
                .collect();
            for (r, (s, d)) in ranks.0.iter().zip(&bufs) {
                ok(unsafe {
                    HcclReduce(
                        s.ptr,
                        d.ptr,
                        count as u64,
                        t.raw(),
                        op.raw(),
                        root as u32,
                        r.comm,
                        r.stream,
                    )
                });
            }
            ranks.sync_ok();
            for (i, (_, d)) in bufs.iter().enumerate() {
                let got = d.read();
                if i == root {
                    assert!(
                        same_reduction(t, op, &got, &want),
                        "{} {} root {root}",
                        op.name(),
                        t.name()
                    );
                } else {
                    assert_eq!(got, filler, "rank {i} is not the root: untouched");
                }
            }
        }
    }
}

fn reduce_scatter_gives_each_rank_its_reduced_block(algo: Algo) {
    let n = 3;
    let ranks = Ranks::with(3, n, algo);
    for (t, op) in reducible() {
        for count in COUNTS {
            let ins: Vec<Vec<u8>> = (0..n)
                .map(|r| data(t, count * n, seed(r, count, t)))
                .collect();
            let bufs: Vec<(DevBuf, DevBuf)> = ranks
                .0
                .iter()
                .zip(&ins)
                .map(|(r, i)| (DevBuf::from(r.dev, i), DevBuf::new(r.dev, count * t.size())))
                .collect();
            for (r, (s, d)) in ranks.0.iter().zip(&bufs) {
                ok(unsafe {
                    HcclReduceScatter(
                        s.ptr,
                        d.ptr,
                        count as u64,
                        t.raw(),
                        op.raw(),
                        r.comm,
                        r.stream,
                    )
                });
            }
            ranks.sync_ok();
            let b = count * t.size();
            for (i, (_, d)) in bufs.iter().enumerate() {
                let blocks: Vec<Vec<u8>> =
                    ins.iter().map(|x| x[i * b..(i + 1) * b].to_vec()).collect();
                assert!(
                    same_reduction(t, op, &d.read(), &reference(t, op, &blocks)),
                    "{} {} rank {i}",
                    op.name(),
                    t.name()
                );
            }
        }
    }
}

fn reduce_scatter_v_reads_blocks_at_their_displacements(algo: Algo) {
    let n = 3;
    let ranks = Ranks::with(5, n, algo);
    // Blocks of 3, 0 and 5 elements, stored out of order with gaps.
    let counts: [u64; 3] = [3, 0, 5];
    let displs: [u64; 3] = [9, 0, 1];
    let span = 12;
    for (t, op) in reducible() {
        if op == RedOp::Prod || t == DType::I64 {
            continue; // refused on A2/A3 (tested in errors)
        }
        let es = t.size();
        let ins: Vec<Vec<u8>> = (0..n).map(|r| data(t, span, seed(r, span, t))).collect();
        let bufs: Vec<(DevBuf, DevBuf)> = ranks
            .0
            .iter()
            .zip(&ins)
            .enumerate()
            .map(|(i, (r, x))| {
                (
                    DevBuf::from(r.dev, x),
                    DevBuf::new(r.dev, counts[i] as usize * es),
                )
            })
            .collect();
        for (i, (r, (s, d))) in ranks.0.iter().zip(&bufs).enumerate() {
            ok(unsafe {
                HcclReduceScatterV(
                    s.ptr,
                    counts.as_ptr().cast(),
                    displs.as_ptr().cast(),
                    d.ptr,
                    counts[i],
                    t.raw(),
                    op.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        ranks.sync_ok();
        for (i, (_, d)) in bufs.iter().enumerate() {
            let (o, l) = (displs[i] as usize * es, counts[i] as usize * es);
            let blocks: Vec<Vec<u8>> = ins.iter().map(|x| x[o..o + l].to_vec()).collect();
            let want = if l == 0 {
                vec![]
            } else {
                reference(t, op, &blocks)
            };
            assert!(
                same_reduction(t, op, &d.read(), &want),
                "{} {} rank {i}",
                op.name(),
                t.name()
            );
        }
    }
}

fn broadcast_all_gather_and_scatter_move_every_type(algo: Algo) {
    let n = 3;
    let ranks = Ranks::with(0, n, algo);
    for t in movable() {
        for (k, count) in COUNTS.into_iter().enumerate() {
            let es = t.size();
            let root = (k + 1) % n;
            // Broadcast.
            let ins: Vec<Vec<u8>> = (0..n).map(|r| data(t, count, seed(r, count, t))).collect();
            let bufs: Vec<DevBuf> = ranks
                .0
                .iter()
                .zip(&ins)
                .map(|(r, i)| DevBuf::from(r.dev, i))
                .collect();
            for (r, b) in ranks.0.iter().zip(&bufs) {
                ok(unsafe {
                    HcclBroadcast(b.ptr, count as u64, t.raw(), root as u32, r.comm, r.stream)
                });
            }
            // All-gather, queued behind it on the same streams.
            let gathered: Vec<DevBuf> = ranks
                .0
                .iter()
                .map(|r| DevBuf::new(r.dev, n * count * es))
                .collect();
            let sends: Vec<DevBuf> = ranks
                .0
                .iter()
                .zip(&ins)
                .map(|(r, i)| DevBuf::from(r.dev, i))
                .collect();
            for ((r, s), g) in ranks.0.iter().zip(&sends).zip(&gathered) {
                ok(unsafe { HcclAllGather(s.ptr, g.ptr, count as u64, t.raw(), r.comm, r.stream) });
            }
            // Scatter from the root's n blocks.
            let whole = data(t, n * count, seed(99, count, t));
            let src: Vec<DevBuf> = ranks
                .0
                .iter()
                .map(|r| DevBuf::from(r.dev, &whole))
                .collect();
            let parts: Vec<DevBuf> = ranks
                .0
                .iter()
                .map(|r| DevBuf::new(r.dev, count * es))
                .collect();
            for (i, r) in ranks.0.iter().enumerate() {
                let send = if i == root { src[i].ptr } else { null_mut() };
                ok(unsafe {
                    HcclScatter(
                        send,
                        parts[i].ptr,
                        count as u64,
                        t.raw(),
                        root as u32,
                        r.comm,
                        r.stream,
                    )
                });
            }
            ranks.sync_ok();
            let all: Vec<u8> = ins.concat();
            for i in 0..n {
                assert_eq!(bufs[i].read(), ins[root], "broadcast {} rank {i}", t.name());
                assert_eq!(gathered[i].read(), all, "all-gather {} rank {i}", t.name());
                assert_eq!(
                    parts[i].read(),
                    whole[i * count * es..(i + 1) * count * es],
                    "scatter {} rank {i}",
                    t.name()
                );
            }
        }
    }
}

fn all_gather_v_places_blocks_at_their_displacements(algo: Algo) {
    let n = 4;
    let ranks = Ranks::with(4, n, algo);
    let counts: [u64; 4] = [2, 0, 3, 1];
    let displs: [u64; 4] = [6, 0, 1, 9];
    for t in movable() {
        let es = t.size();
        let total = 10 * es;
        let ins: Vec<Vec<u8>> = (0..n)
            .map(|r| data(t, counts[r] as usize, seed(r, 3, t)))
            .collect();
        let sends: Vec<DevBuf> = ranks
            .0
            .iter()
            .zip(&ins)
            .map(|(r, i)| DevBuf::from(r.dev, i))
            .collect();
        let filler = vec![0x5Au8; total];
        let recvs: Vec<DevBuf> = ranks
            .0
            .iter()
            .map(|r| DevBuf::from(r.dev, &filler))
            .collect();
        for (i, r) in ranks.0.iter().enumerate() {
            let send = if counts[i] == 0 {
                null_mut()
            } else {
                sends[i].ptr
            };
            ok(unsafe {
                HcclAllGatherV(
                    send,
                    counts[i],
                    recvs[i].ptr,
                    counts.as_ptr().cast(),
                    displs.as_ptr().cast(),
                    t.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        ranks.sync_ok();
        let mut want = filler.clone();
        for i in 0..n {
            let o = displs[i] as usize * es;
            want[o..o + ins[i].len()].copy_from_slice(&ins[i]);
        }
        for (i, r) in recvs.iter().enumerate() {
            assert_eq!(r.read(), want, "{} rank {i}", t.name());
        }
    }
}

fn all_to_all_forms_exchange_the_right_blocks(algo: Algo) {
    let n = 3;
    let ranks = Ranks::with(1, n, algo);
    for t in [DType::U8, DType::F16, DType::I32, DType::F64, DType::I64] {
        let es = t.size();
        // AlltoAll: blocks of 5.
        let c = 5;
        let ins: Vec<Vec<u8>> = (0..n).map(|r| data(t, n * c, seed(r, c, t))).collect();
        let sends: Vec<DevBuf> = ranks
            .0
            .iter()
            .zip(&ins)
            .map(|(r, i)| DevBuf::from(r.dev, i))
            .collect();
        let recvs: Vec<DevBuf> = ranks
            .0
            .iter()
            .map(|r| DevBuf::new(r.dev, n * c * es))
            .collect();
        for (i, r) in ranks.0.iter().enumerate() {
            ok(unsafe {
                HcclAlltoAll(
                    sends[i].ptr,
                    c as u64,
                    t.raw(),
                    recvs[i].ptr,
                    c as u64,
                    t.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        // AlltoAllV: rank i sends (i + j) % 3 + 1 elements to rank j, from displacements in
        // reverse order; receivers place them at reversed displacements too.
        let amount = |i: usize, j: usize| ((i + j) % 3 + 1) as u64;
        let mut v_sends = Vec::new();
        let mut v_recvs = Vec::new();
        let mut v_ins = Vec::new();
        let mut v_args = Vec::new();
        for (i, r) in ranks.0.iter().enumerate() {
            let sc: Vec<u64> = (0..n).map(|j| amount(i, j)).collect();
            let rc: Vec<u64> = (0..n).map(|j| amount(j, i)).collect();
            let rev = |cs: &Vec<u64>| {
                let mut d = vec![0u64; n];
                let mut at = 0;
                for j in (0..n).rev() {
                    d[j] = at;
                    at += cs[j];
                }
                (d, at)
            };
            let (sd, stot) = rev(&sc);
            let (rd, rtot) = rev(&rc);
            let input = data(t, stot as usize, seed(i, 77, t));
            v_sends.push(DevBuf::from(r.dev, &input));
            v_recvs.push(DevBuf::new(r.dev, rtot as usize * es));
            v_ins.push(input);
            v_args.push((sc, sd, rc, rd));
        }
        for (i, r) in ranks.0.iter().enumerate() {
            let (sc, sd, rc, rd) = &v_args[i];
            ok(unsafe {
                HcclAlltoAllV(
                    v_sends[i].ptr,
                    sc.as_ptr().cast(),
                    sd.as_ptr().cast(),
                    t.raw(),
                    v_recvs[i].ptr,
                    rc.as_ptr().cast(),
                    rd.as_ptr().cast(),
                    t.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        // AlltoAllVC with the same amounts, packed.
        let matrix: Vec<u64> = (0..n * n).map(|k| amount(k / n, k % n)).collect();
        let mut vc_sends = Vec::new();
        let mut vc_recvs = Vec::new();
        let mut vc_ins = Vec::new();
        for (i, r) in ranks.0.iter().enumerate() {
            let s: u64 = (0..n).map(|j| matrix[i * n + j]).sum();
            let rcv: u64 = (0..n).map(|j| matrix[j * n + i]).sum();
            let input = data(t, s as usize, seed(i, 55, t));
            vc_sends.push(DevBuf::from(r.dev, &input));
            vc_recvs.push(DevBuf::new(r.dev, rcv as usize * es));
            vc_ins.push(input);
        }
        for (i, r) in ranks.0.iter().enumerate() {
            ok(unsafe {
                HcclAlltoAllVC(
                    vc_sends[i].ptr,
                    matrix.as_ptr().cast(),
                    t.raw(),
                    vc_recvs[i].ptr,
                    t.raw(),
                    r.comm,
                    r.stream,
                )
            });
        }
        ranks.sync_ok();
        for j in 0..n {
            let want: Vec<u8> = (0..n)
                .flat_map(|i| ins[i][j * c * es..(j + 1) * c * es].to_vec())
                .collect();
            assert_eq!(recvs[j].read(), want, "alltoall {} rank {j}", t.name());
            // V: rank j's block from rank i sits at rd[i], taken from rank i's sd[j].
            let (_, _, rc, rd) = &v_args[j];
            let got = v_recvs[j].read();
            for i in 0..n {
                let (_, sd, _, _) = &v_args[i];
                let len = rc[i] as usize * es;
                let from = &v_ins[i][sd[j] as usize * es..sd[j] as usize * es + len];
                let at = rd[i] as usize * es;
                assert_eq!(&got[at..at + len], from, "alltoallv {} {i}->{j}", t.name());
            }
            // VC: packed in rank order on both sides.
            let got = vc_recvs[j].read();
            let mut at = 0;
            for i in 0..n {
                let off: u64 = (0..j).map(|k| matrix[i * n + k]).sum();
                let len = matrix[i * n + j] as usize * es;
                let from = &vc_ins[i][off as usize * es..off as usize * es + len];
                assert_eq!(&got[at..at + len], from, "alltoallvc {} {i}->{j}", t.name());
                at += len;
            }
        }
    }
}

fn a_barrier_holds_a_stream_until_every_rank_reaches_it(algo: Algo) {
    let ranks = Ranks::with(6, 2, algo);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    ok(unsafe { HcclBarrier(a.comm, a.stream) });
    // Rank 1 has not reached the barrier: rank 0's stream cannot complete.
    std::thread::sleep(std::time::Duration::from_millis(50));
    use_device(a.dev);
    let mut status = 0;
    acl(unsafe { aclrtStreamQuery(a.stream, &mut status) });
    release(a.dev);
    assert_eq!(status, 1, "the barrier completed before rank 1 reached it");
    ok(unsafe { HcclBarrier(b.comm, b.stream) });
    ranks.sync_ok();
}

fn one_rank_collectives_copy_locally(algo: Algo) {
    let ranks = Ranks::with(7, 1, algo);
    let r = &ranks.0[0];
    let input = data(DType::F32, 9, 1);
    let s = DevBuf::from(r.dev, &input);
    let d = DevBuf::new(r.dev, input.len());
    let g = DevBuf::new(r.dev, input.len());
    ok(unsafe {
        HcclAllReduce(
            s.ptr,
            d.ptr,
            9,
            DType::F32.raw(),
            RedOp::Max.raw(),
            r.comm,
            r.stream,
        )
    });
    ok(unsafe { HcclAllGather(s.ptr, g.ptr, 9, DType::F32.raw(), r.comm, r.stream) });
    ranks.sync_ok();
    assert_eq!(d.read(), input);
    assert_eq!(g.read(), input);
}

/// Every test above with the algorithm the emulator picks, and with each algorithm forced
/// through the communicators' `hcclAlgo` (halving-doubling falls back to the ring on rank
/// counts that are not powers of two; the mesh to the others beyond its buffers).
mod picked {
    #[test]
    fn all_reduce_matches_the_reference_for_every_type_and_operation() {
        super::all_reduce_matches_the_reference_for_every_type_and_operation(None);
    }
    #[test]
    fn all_reduce_in_place_and_on_four_ranks() {
        super::all_reduce_in_place_and_on_four_ranks(None);
    }
    #[test]
    fn reduce_writes_only_the_roots_output() {
        super::reduce_writes_only_the_roots_output(None);
    }
    #[test]
    fn reduce_scatter_gives_each_rank_its_reduced_block() {
        super::reduce_scatter_gives_each_rank_its_reduced_block(None);
    }
    #[test]
    fn reduce_scatter_v_reads_blocks_at_their_displacements() {
        super::reduce_scatter_v_reads_blocks_at_their_displacements(None);
    }
    #[test]
    fn broadcast_all_gather_and_scatter_move_every_type() {
        super::broadcast_all_gather_and_scatter_move_every_type(None);
    }
    #[test]
    fn all_gather_v_places_blocks_at_their_displacements() {
        super::all_gather_v_places_blocks_at_their_displacements(None);
    }
    #[test]
    fn all_to_all_forms_exchange_the_right_blocks() {
        super::all_to_all_forms_exchange_the_right_blocks(None);
    }
    #[test]
    fn a_barrier_holds_a_stream_until_every_rank_reaches_it() {
        super::a_barrier_holds_a_stream_until_every_rank_reaches_it(None);
    }
    #[test]
    fn one_rank_collectives_copy_locally() {
        super::one_rank_collectives_copy_locally(None);
    }
}

mod ring {
    #[test]
    fn all_reduce_matches_the_reference_for_every_type_and_operation() {
        super::all_reduce_matches_the_reference_for_every_type_and_operation(Some(
            "level0:ring;level1:ring",
        ));
    }
    #[test]
    fn all_reduce_in_place_and_on_four_ranks() {
        super::all_reduce_in_place_and_on_four_ranks(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn reduce_writes_only_the_roots_output() {
        super::reduce_writes_only_the_roots_output(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn reduce_scatter_gives_each_rank_its_reduced_block() {
        super::reduce_scatter_gives_each_rank_its_reduced_block(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn reduce_scatter_v_reads_blocks_at_their_displacements() {
        super::reduce_scatter_v_reads_blocks_at_their_displacements(Some(
            "level0:ring;level1:ring",
        ));
    }
    #[test]
    fn broadcast_all_gather_and_scatter_move_every_type() {
        super::broadcast_all_gather_and_scatter_move_every_type(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn all_gather_v_places_blocks_at_their_displacements() {
        super::all_gather_v_places_blocks_at_their_displacements(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn all_to_all_forms_exchange_the_right_blocks() {
        super::all_to_all_forms_exchange_the_right_blocks(Some("level0:ring;level1:ring"));
    }
    #[test]
    fn a_barrier_holds_a_stream_until_every_rank_reaches_it() {
        super::a_barrier_holds_a_stream_until_every_rank_reaches_it(Some(
            "level0:ring;level1:ring",
        ));
    }
    #[test]
    fn one_rank_collectives_copy_locally() {
        super::one_rank_collectives_copy_locally(Some("level0:ring;level1:ring"));
    }
}

mod halving_doubling {
    #[test]
    fn all_reduce_matches_the_reference_for_every_type_and_operation() {
        super::all_reduce_matches_the_reference_for_every_type_and_operation(Some(
            "level0:H-D_R;level1:H-D_R",
        ));
    }
    #[test]
    fn all_reduce_in_place_and_on_four_ranks() {
        super::all_reduce_in_place_and_on_four_ranks(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn reduce_writes_only_the_roots_output() {
        super::reduce_writes_only_the_roots_output(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn reduce_scatter_gives_each_rank_its_reduced_block() {
        super::reduce_scatter_gives_each_rank_its_reduced_block(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn reduce_scatter_v_reads_blocks_at_their_displacements() {
        super::reduce_scatter_v_reads_blocks_at_their_displacements(Some(
            "level0:H-D_R;level1:H-D_R",
        ));
    }
    #[test]
    fn broadcast_all_gather_and_scatter_move_every_type() {
        super::broadcast_all_gather_and_scatter_move_every_type(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn all_gather_v_places_blocks_at_their_displacements() {
        super::all_gather_v_places_blocks_at_their_displacements(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn all_to_all_forms_exchange_the_right_blocks() {
        super::all_to_all_forms_exchange_the_right_blocks(Some("level0:H-D_R;level1:H-D_R"));
    }
    #[test]
    fn a_barrier_holds_a_stream_until_every_rank_reaches_it() {
        super::a_barrier_holds_a_stream_until_every_rank_reaches_it(Some(
            "level0:H-D_R;level1:H-D_R",
        ));
    }
    #[test]
    fn one_rank_collectives_copy_locally() {
        super::one_rank_collectives_copy_locally(Some("level0:H-D_R;level1:H-D_R"));
    }
}

mod mesh {
    #[test]
    fn all_reduce_matches_the_reference_for_every_type_and_operation() {
        super::all_reduce_matches_the_reference_for_every_type_and_operation(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn all_reduce_in_place_and_on_four_ranks() {
        super::all_reduce_in_place_and_on_four_ranks(Some("level0:fullmesh;level1:fullmesh"));
    }
    #[test]
    fn reduce_writes_only_the_roots_output() {
        super::reduce_writes_only_the_roots_output(Some("level0:fullmesh;level1:fullmesh"));
    }
    #[test]
    fn reduce_scatter_gives_each_rank_its_reduced_block() {
        super::reduce_scatter_gives_each_rank_its_reduced_block(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn reduce_scatter_v_reads_blocks_at_their_displacements() {
        super::reduce_scatter_v_reads_blocks_at_their_displacements(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn broadcast_all_gather_and_scatter_move_every_type() {
        super::broadcast_all_gather_and_scatter_move_every_type(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn all_gather_v_places_blocks_at_their_displacements() {
        super::all_gather_v_places_blocks_at_their_displacements(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn all_to_all_forms_exchange_the_right_blocks() {
        super::all_to_all_forms_exchange_the_right_blocks(Some("level0:fullmesh;level1:fullmesh"));
    }
    #[test]
    fn a_barrier_holds_a_stream_until_every_rank_reaches_it() {
        super::a_barrier_holds_a_stream_until_every_rank_reaches_it(Some(
            "level0:fullmesh;level1:fullmesh",
        ));
    }
    #[test]
    fn one_rank_collectives_copy_locally() {
        super::one_rank_collectives_copy_locally(Some("level0:fullmesh;level1:fullmesh"));
    }
}
