//! Groups: one thread driving every rank, ranks that group their own sends and receives, and a
//! group left by an error or a panic.

use crate::common::{devices, per_rank};
use hccl::{Blocks, Collectives, Comm, ReduceOp};

/// Every rank of a communicator on this thread: communicators, streams and inputs.
struct Ranks {
    comms: Vec<Comm>,
    streams: Vec<ascendcl::Stream>,
}

fn ranks(n: u32) -> Ranks {
    let comms = Comm::init_all(&devices(n)).unwrap();
    let streams = comms
        .iter()
        .map(|c| c.device().create_stream().unwrap())
        .collect();
    Ranks { comms, streams }
}

fn upload<T: ascendcl::DeviceRepr>(
    r: &Ranks,
    f: impl Fn(usize) -> Vec<T>,
) -> Vec<ascendcl::DeviceBuffer<T>> {
    r.comms
        .iter()
        .enumerate()
        .map(|(i, c)| c.device().clone_htod(&f(i)).unwrap())
        .collect()
}

fn download<T: ascendcl::DeviceRepr>(bufs: &[ascendcl::DeviceBuffer<T>]) -> Vec<Vec<T>> {
    bufs.iter().map(|b| b.copy_to_vec().unwrap()).collect()
}

#[test]
fn one_thread_drives_every_rank() {
    let r = ranks(4);
    let n = 4;
    let send = upload(&r, |i| vec![i as i32 + 1; 5]);
    let mut sum = upload(&r, |_| vec![0i32; 5]);
    let blocks = Blocks::packed(&[1, 2, 3, 4]).unwrap();
    let part = upload(&r, |i| vec![10.0 * i as f32; i + 1]);
    let mut gathered = upload(&r, |_| vec![-1f32; 10]);
    let big = upload(&r, |i| (0..2 * n).map(|k| (i * 100 + k) as i64).collect());
    let mut scattered = upload(&r, |_| vec![0i64; 2]);
    hccl::group(|g| {
        for (i, ((comm, stream), out)) in r.comms.iter().zip(&r.streams).zip(&mut sum).enumerate() {
            g.on(stream)
                .all_reduce(comm, &send[i], out, ReduceOp::Sum)?;
        }
        for (i, ((comm, stream), out)) in r
            .comms
            .iter()
            .zip(&r.streams)
            .zip(&mut gathered)
            .enumerate()
        {
            g.on(stream).all_gather_v(comm, &part[i], out, &blocks)?;
        }
        for (i, ((comm, stream), out)) in r
            .comms
            .iter()
            .zip(&r.streams)
            .zip(&mut scattered)
            .enumerate()
        {
            g.on(stream)
                .reduce_scatter(comm, &big[i], out, ReduceOp::Max)?;
        }
        Ok(())
    })
    .unwrap();
    for v in download(&sum) {
        assert_eq!(v, [10; 5]);
    }
    for v in download(&gathered) {
        assert_eq!(
            v,
            [0.0, 10.0, 10.0, 20.0, 20.0, 20.0, 30.0, 30.0, 30.0, 30.0]
        );
    }
    for (i, v) in download(&scattered).into_iter().enumerate() {
        // The largest of block i over the ranks is rank 3's.
        assert_eq!(v, [300 + 2 * i as i64, 301 + 2 * i as i64]);
    }
}

#[test]
fn each_rank_groups_its_own_sends_and_receives() {
    // Every rank sends first and receives second: without the group this ring would deadlock
    // (a send completes only when its peer receives); the group fuses them into one batch.
    let got = per_rank(3, |comm| {
        let dev = comm.device().clone();
        let stream = dev.create_stream()?;
        let (r, n) = (comm.rank(), comm.size());
        let send = dev.clone_htod(&[r as u8 + 1; 7])?;
        let mut recv = dev.alloc_zeros::<u8>(7)?;
        hccl::group(|g| {
            let s = g.on(&stream);
            s.send(&comm, &send, (r + 1) % n)?;
            s.recv(&comm, &mut recv, (r + n - 1) % n)
        })?;
        Ok(recv.copy_to_vec()?)
    });
    for (r, v) in got.into_iter().enumerate() {
        assert_eq!(v, [((r + 2) % 3) as u8 + 1; 7], "rank {r}");
    }
}

#[test]
fn a_group_left_early_still_runs_what_it_captured() {
    let r = ranks(2);
    let mut bufs = upload(&r, |i| vec![i as i16 + 1; 3]);
    let e = hccl::group(|g| {
        for ((comm, stream), b) in r.comms.iter().zip(&r.streams).zip(&mut bufs) {
            g.on(stream).all_reduce_in_place(comm, b, ReduceOp::Max)?;
        }
        Err::<(), _>(hccl::Error::Backend("the closure gave up".into()))
    })
    .unwrap_err();
    assert!(e.to_string().contains("the closure gave up"), "{e}");
    // HCCL has no way to drop captured operations: the end ran them.
    for v in download(&bufs) {
        assert_eq!(v, [2; 3]);
    }
    // A panic ends the group too, and the next group starts afresh.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = hccl::group(|g| -> hccl::Result<()> {
            for ((comm, stream), b) in r.comms.iter().zip(&r.streams).zip(&mut bufs) {
                g.on(stream).all_reduce_in_place(comm, b, ReduceOp::Sum)?;
            }
            panic!("inside the group");
        });
    }));
    assert!(panicked.is_err());
    for v in download(&bufs) {
        assert_eq!(v, [4; 3]);
    }
    hccl::group(|g| {
        for ((comm, stream), b) in r.comms.iter().zip(&r.streams).zip(&mut bufs) {
            g.on(stream).all_reduce_in_place(comm, b, ReduceOp::Sum)?;
        }
        Ok(())
    })
    .unwrap();
    for v in download(&bufs) {
        assert_eq!(v, [8; 3]);
    }
}

#[test]
fn a_refusal_only_the_library_makes_is_silent_in_a_group() {
    // Unsigned reductions are refused by the A2/A3 library, which in a group only logs it: the
    // group succeeds and the buffers are left as they were.
    let r = ranks(2);
    let mut bufs = upload(&r, |i| vec![i as u32 + 5; 4]);
    hccl::group(|g| {
        for ((comm, stream), b) in r.comms.iter().zip(&r.streams).zip(&mut bufs) {
            g.on(stream).all_reduce_in_place(comm, b, ReduceOp::Sum)?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(download(&bufs), [[5; 4], [6; 4]]);
}

#[test]
fn other_threads_wait_while_a_group_is_open() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let devs = devices(2);
    let solo = |d: &ascendcl::Device| {
        let info = hccl::RootInfo::new(d).unwrap();
        Comm::init_root_info(d, 1, &info, 0, None).unwrap()
    };
    let (mine, theirs) = (solo(&devs[0]), solo(&devs[1]));
    let ended = AtomicBool::new(false);
    let (opened, wait_open) = std::sync::mpsc::channel();
    std::thread::scope(|t| {
        let ended = &ended;
        let other = t.spawn(move || {
            wait_open.recv().unwrap();
            let dev = theirs.device().clone();
            let stream = dev.create_stream().unwrap();
            let mut buf = dev.alloc_zeros::<f32>(2).unwrap();
            // Captured by a process-wide group count, this would run at the other thread's
            // group end, after this scope gave the buffer back: it waits instead.
            hccl::scope(&stream, |s| {
                s.all_reduce_in_place(&theirs, &mut buf, ReduceOp::Sum)
            })
            .unwrap();
            ended.load(Ordering::SeqCst)
        });
        let stream = mine.device().create_stream().unwrap();
        let mut buf = mine.device().alloc_zeros::<f32>(2).unwrap();
        hccl::group(|g| {
            g.on(&stream)
                .all_reduce_in_place(&mine, &mut buf, ReduceOp::Sum)?;
            opened.send(()).unwrap();
            // Long enough for the other thread to reach its collective.
            std::thread::sleep(std::time::Duration::from_millis(50));
            ended.store(true, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert!(
            other.join().unwrap(),
            "the other thread's collective ran inside the group"
        );
    });
}
