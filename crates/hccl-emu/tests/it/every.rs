//! Every collective and point-to-point form, as one rank of a communicator whose other ranks
//! run the same code elsewhere (other threads, other processes, other emulated servers): every
//! rank's input is computed from its rank, so each checks its own output against the host.

use crate::common::*;
use hccl_emu::{DType, RedOp};

fn input(t: DType, count: usize, rank: usize, salt: u64) -> Vec<u8> {
    data(t, count, rank as u64 * 1009 + salt)
}

/// Issues the operation through `f`, synchronises the rank's stream and fails on an error.
fn run(r: &Rank, what: &str, f: impl FnOnce() -> HcclResult) {
    ok(f());
    use_device(r.dev);
    let e = unsafe { aclrtSynchronizeStream(r.stream) };
    let m = take_msg();
    release(r.dev);
    assert_eq!(e, 0, "{what}: {m}");
}

/// Packed displacements of `counts` in reverse order (the last block first).
fn reversed(counts: &[u64]) -> (Vec<u64>, u64) {
    let mut d = vec![0u64; counts.len()];
    let mut at = 0;
    for j in (0..counts.len()).rev() {
        d[j] = at;
        at += counts[j];
    }
    (d, at)
}

/// Every operation as `rank` of `n`, with `big` elements for the large cases (several slots).
pub fn every_operation_as(rank: usize, n: usize, r: &Rank, big: usize) {
    let dev = r.dev;
    let f32_ = DType::F32;
    for count in [1usize, 7, big] {
        // All-reduce, out of place and in place.
        let ins: Vec<Vec<u8>> = (0..n).map(|i| input(f32_, count, i, 1)).collect();
        let s = DevBuf::from(dev, &ins[rank]);
        let d = DevBuf::new(dev, count * 4);
        run(r, "all-reduce", || unsafe {
            HcclAllReduce(
                s.ptr,
                d.ptr,
                count as u64,
                f32_.raw(),
                RedOp::Sum.raw(),
                r.comm,
                r.stream,
            )
        });
        assert_eq!(
            d.read(),
            reference(f32_, RedOp::Sum, &ins),
            "all-reduce x{count}"
        );
        let ins: Vec<Vec<u8>> = (0..n).map(|i| input(DType::I32, count, i, 2)).collect();
        let b = DevBuf::from(dev, &ins[rank]);
        run(r, "all-reduce in place", || unsafe {
            HcclAllReduce(
                b.ptr,
                b.ptr,
                count as u64,
                DType::I32.raw(),
                RedOp::Max.raw(),
                r.comm,
                r.stream,
            )
        });
        assert_eq!(
            b.read(),
            reference(DType::I32, RedOp::Max, &ins),
            "max x{count}"
        );
        // Broadcast from the last rank.
        let root = n - 1;
        let ins: Vec<Vec<u8>> = (0..n).map(|i| input(DType::U16, count, i, 3)).collect();
        let b = DevBuf::from(dev, &ins[rank]);
        run(r, "broadcast", || unsafe {
            HcclBroadcast(
                b.ptr,
                count as u64,
                DType::U16.raw(),
                root as u32,
                r.comm,
                r.stream,
            )
        });
        assert_eq!(b.read(), ins[root], "broadcast x{count}");
        // Reduce to rank 1: only the root's output is written.
        let ins: Vec<Vec<u8>> = (0..n).map(|i| input(DType::I64, count, i, 4)).collect();
        let s = DevBuf::from(dev, &ins[rank]);
        let filler = vec![0x5Au8; count * 8];
        let d = DevBuf::from(dev, &filler);
        run(r, "reduce", || unsafe {
            HcclReduce(
                s.ptr,
                d.ptr,
                count as u64,
                DType::I64.raw(),
                RedOp::Sum.raw(),
                1,
                r.comm,
                r.stream,
            )
        });
        let want = if rank == 1 {
            reference(DType::I64, RedOp::Sum, &ins)
        } else {
            filler
        };
        assert_eq!(d.read(), want, "reduce x{count}");
        // Reduce-scatter, all-gather, all-to-all and scatter, blocks of `count`.
        let bl = count * 4;
        let ins: Vec<Vec<u8>> = (0..n).map(|i| input(f32_, count * n, i, 5)).collect();
        let s = DevBuf::from(dev, &ins[rank]);
        let d = DevBuf::new(dev, bl);
        run(r, "reduce-scatter", || unsafe {
            HcclReduceScatter(
                s.ptr,
                d.ptr,
                count as u64,
                f32_.raw(),
                RedOp::Sum.raw(),
                r.comm,
                r.stream,
            )
        });
        let blocks: Vec<Vec<u8>> = ins
            .iter()
            .map(|x| x[rank * bl..(rank + 1) * bl].to_vec())
            .collect();
        assert_eq!(
            d.read(),
            reference(f32_, RedOp::Sum, &blocks),
            "reduce-scatter x{count}"
        );
        let parts: Vec<Vec<u8>> = (0..n).map(|i| input(DType::I32, count, i, 6)).collect();
        let s = DevBuf::from(dev, &parts[rank]);
        let d = DevBuf::new(dev, bl * n);
        run(r, "all-gather", || unsafe {
            HcclAllGather(
                s.ptr,
                d.ptr,
                count as u64,
                DType::I32.raw(),
                r.comm,
                r.stream,
            )
        });
        assert_eq!(d.read(), parts.concat(), "all-gather x{count}");
        let d = DevBuf::new(dev, bl * n);
        let s = DevBuf::from(dev, &ins[rank]);
        run(r, "all-to-all", || unsafe {
            HcclAlltoAll(
                s.ptr,
                count as u64,
                f32_.raw(),
                d.ptr,
                count as u64,
                f32_.raw(),
                r.comm,
                r.stream,
            )
        });
        let want: Vec<u8> = (0..n)
            .flat_map(|i| ins[i][rank * bl..(rank + 1) * bl].to_vec())
            .collect();
        assert_eq!(d.read(), want, "all-to-all x{count}");
        let d = DevBuf::new(dev, bl);
        run(r, "scatter", || unsafe {
            HcclScatter(s.ptr, d.ptr, count as u64, f32_.raw(), 0, r.comm, r.stream)
        });
        assert_eq!(
            d.read(),
            ins[0][rank * bl..(rank + 1) * bl].to_vec(),
            "scatter x{count}"
        );
        // The V forms: block j has (j + 1) * count / 2 elements (some empty), reversed.
        let counts: Vec<u64> = (0..n).map(|j| ((j + 1) * count / 2) as u64).collect();
        let (displs, total) = reversed(&counts);
        let ins: Vec<Vec<u8>> = (0..n)
            .map(|i| input(DType::I32, total as usize, i, 7))
            .collect();
        let s = DevBuf::from(dev, &ins[rank]);
        let mine = counts[rank] as usize;
        let d = DevBuf::new(dev, mine * 4);
        run(r, "reduce-scatter-v", || unsafe {
            HcclReduceScatterV(
                s.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                if mine == 0 { null_mut() } else { d.ptr },
                mine as u64,
                DType::I32.raw(),
                RedOp::Sum.raw(),
                r.comm,
                r.stream,
            )
        });
        let o = displs[rank] as usize * 4;
        let blocks: Vec<Vec<u8>> = ins.iter().map(|x| x[o..o + mine * 4].to_vec()).collect();
        let want = if mine == 0 {
            vec![]
        } else {
            reference(DType::I32, RedOp::Sum, &blocks)
        };
        assert_eq!(d.read()[..mine * 4], want[..], "reduce-scatter-v x{count}");
        let parts: Vec<Vec<u8>> = (0..n)
            .map(|i| input(DType::I32, counts[i] as usize, i, 8))
            .collect();
        let s = DevBuf::from(dev, &parts[rank]);
        let d = DevBuf::new(dev, total as usize * 4);
        run(r, "all-gather-v", || unsafe {
            HcclAllGatherV(
                if mine == 0 { null_mut() } else { s.ptr },
                mine as u64,
                d.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                DType::I32.raw(),
                r.comm,
                r.stream,
            )
        });
        let mut want = vec![0u8; total as usize * 4];
        for i in 0..n {
            let o = displs[i] as usize * 4;
            want[o..o + parts[i].len()].copy_from_slice(&parts[i]);
        }
        assert_eq!(d.read(), want, "all-gather-v x{count}");
        // All-to-all-v: rank i sends (i + 2j) % 3 + count elements to rank j.
        let amount = |i: usize, j: usize| ((i + 2 * j) % 3 + count) as u64;
        let sc: Vec<u64> = (0..n).map(|j| amount(rank, j)).collect();
        let rc: Vec<u64> = (0..n).map(|i| amount(i, rank)).collect();
        let (sd, st) = reversed(&sc);
        let (rd, rt) = reversed(&rc);
        let sends: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let c: Vec<u64> = (0..n).map(|j| amount(i, j)).collect();
                input(DType::U8, c.iter().sum::<u64>() as usize, i, 9)
            })
            .collect();
        let s = DevBuf::from(dev, &sends[rank]);
        let d = DevBuf::new(dev, rt as usize);
        assert_eq!(st as usize, sends[rank].len());
        run(r, "all-to-all-v", || unsafe {
            HcclAlltoAllV(
                s.ptr,
                sc.as_ptr().cast(),
                sd.as_ptr().cast(),
                DType::U8.raw(),
                d.ptr,
                rc.as_ptr().cast(),
                rd.as_ptr().cast(),
                DType::U8.raw(),
                r.comm,
                r.stream,
            )
        });
        let mut want = vec![0u8; rt as usize];
        for i in 0..n {
            let c: Vec<u64> = (0..n).map(|j| amount(i, j)).collect();
            let (dd, _) = reversed(&c);
            let from = &sends[i][dd[rank] as usize..][..c[rank] as usize];
            want[rd[i] as usize..][..rc[i] as usize].copy_from_slice(from);
        }
        assert_eq!(d.read(), want, "all-to-all-v x{count}");
        // All-to-all-vc: the same amounts as a matrix, packed.
        let matrix: Vec<u64> = (0..n * n).map(|k| amount(k / n, k % n)).collect();
        let row: u64 = (0..n).map(|j| matrix[rank * n + j]).sum();
        let col: u64 = (0..n).map(|i| matrix[i * n + rank]).sum();
        let packed: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                input(
                    DType::U8,
                    (0..n).map(|j| matrix[i * n + j]).sum::<u64>() as usize,
                    i,
                    10,
                )
            })
            .collect();
        let s = DevBuf::from(dev, &packed[rank]);
        let d = DevBuf::new(dev, col as usize);
        assert_eq!(row as usize, packed[rank].len());
        run(r, "all-to-all-vc", || unsafe {
            HcclAlltoAllVC(
                s.ptr,
                matrix.as_ptr().cast(),
                DType::U8.raw(),
                d.ptr,
                DType::U8.raw(),
                r.comm,
                r.stream,
            )
        });
        let mut want = Vec::new();
        for i in 0..n {
            let off: u64 = (0..rank).map(|k| matrix[i * n + k]).sum();
            want.extend_from_slice(&packed[i][off as usize..][..matrix[i * n + rank] as usize]);
        }
        assert_eq!(d.read(), want, "all-to-all-vc x{count}");
    }
    run(r, "barrier", || unsafe { HcclBarrier(r.comm, r.stream) });
    // Point to point: each rank exchanges with the rank half the communicator away (on another
    // server when the servers hold halves), as a batch, then sends to the next rank around.
    let peer = (rank + n / 2) % n;
    let mine = input(DType::F32, big, rank, 11);
    let theirs = input(DType::F32, big, peer, 11);
    let s = DevBuf::from(dev, &mine);
    let d = DevBuf::new(dev, big * 4);
    let mut items = [
        HcclSendRecvItem {
            sendRecvType: HCCL_SEND,
            remoteRank: peer as u32,
            buf: s.ptr,
            count: big as u64,
            dataType: DType::F32.raw(),
        },
        HcclSendRecvItem {
            sendRecvType: HCCL_RECV,
            remoteRank: peer as u32,
            buf: d.ptr,
            count: big as u64,
            dataType: DType::F32.raw(),
        },
    ];
    run(r, "batch send/recv", || unsafe {
        HcclBatchSendRecv(items.as_mut_ptr(), 2, r.comm, r.stream)
    });
    assert_eq!(d.read(), theirs, "batch send/recv with rank {peer}");
    let (next, prev) = ((rank + 1) % n, (rank + n - 1) % n);
    let d = DevBuf::new(dev, 13 * 4);
    let s = DevBuf::from(dev, &input(DType::F32, 13, rank, 12));
    // Even ranks send first and odd ones receive first, so the synchronous sends pair up.
    let send = || unsafe { HcclSend(s.ptr, 13, DType::F32.raw(), next as u32, r.comm, r.stream) };
    let recv = || unsafe { HcclRecv(d.ptr, 13, DType::F32.raw(), prev as u32, r.comm, r.stream) };
    if rank.is_multiple_of(2) {
        ok(send());
        ok(recv());
    } else {
        ok(recv());
        ok(send());
    }
    run(r, "send/recv around", || HCCL_SUCCESS);
    assert_eq!(
        d.read(),
        input(DType::F32, 13, prev, 12),
        "recv from rank {prev}"
    );
}
