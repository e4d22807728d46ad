//! Ranks in separate processes: this test binary runs itself again as ranks 1..n (the role in
//! `HCCL_TEST_RANK`), passing the root info that rank 0 (the test) created through a file; each
//! rank runs collectives through the safe API and checks them against the host.

use crate::common::cases::{Num, input};
use hccl::{Blocks, Collectives, Comm, CountMatrix, ReduceOp, RootInfo, SendRecv};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RANK: &str = "HCCL_TEST_RANK";
const NRANKS: &str = "HCCL_TEST_NRANKS";
const ROOT_INFO: &str = "HCCL_TEST_ROOT_INFO";
/// The emulator's rendezvous and execution timeouts in every rank: a rank that never comes is
/// an error after this long, not a hang. (They are set for the whole process; no other test of
/// the binary waits that long for a peer, and their own configurations beat them.)
const TIMEOUT_MS: &str = "15000";

fn bounded_timeouts() {
    hccl_emu::set_config(hccl_emu::Config {
        connect_timeout: Some(Duration::from_millis(TIMEOUT_MS.parse().unwrap())),
        exec_timeout: Some(Duration::from_millis(TIMEOUT_MS.parse().unwrap())),
    });
}

/// What every rank does, checked against every rank's input computed on the host.
fn rank_work(comm: &Comm) -> hccl::Result<()> {
    let dev = comm.device().clone();
    let stream = dev.create_stream()?;
    let (r, n) = (comm.rank() as usize, comm.size() as usize);
    // An all-reduce large enough to grow the shared segments, and an odd-sized one.
    let big_len = 100_003;
    let mut big = dev.clone_htod(&input::<f32>(r, big_len, 1))?;
    let small = dev.clone_htod(&input::<i32>(r, 7, 2))?;
    let mut small_min = dev.alloc_zeros::<i32>(7)?;
    let agv = Blocks::new(
        &(0..n).map(|i| i + 1).collect::<Vec<_>>(),
        &(0..n).map(|i| 3 * i).collect::<Vec<_>>(),
    )?;
    let part = dev.clone_htod(&input::<i16>(r, r + 1, 3))?;
    let mut gathered = dev.clone_htod(&vec![-1i16; agv.extent()])?;
    let m = CountMatrix::from_fn(n, |i, j| (i + j) % 3)?;
    let a2a_in = dev.clone_htod(&input::<u8>(r, m.sent_by(r), 4))?;
    let mut a2a_out = dev.alloc_zeros::<u8>(m.received_by(r))?;
    let ring_in = dev.clone_htod(&input::<i64>(r, 5, 5))?;
    let mut ring_out = dev.alloc_zeros::<i64>(5)?;
    let (next, prev) = (((r + 1) % n) as u32, ((r + n - 1) % n) as u32);
    hccl::scope(&stream, |s| {
        s.all_reduce_in_place(comm, &mut big, ReduceOp::Sum)?;
        s.all_reduce(comm, &small, &mut small_min, ReduceOp::Min)?;
        s.all_gather_v(comm, &part, &mut gathered, &agv)?;
        s.all_to_all_vc(comm, &a2a_in, &mut a2a_out, &m)?;
        s.batch_send_recv(
            comm,
            [
                SendRecv::send(&ring_in, next),
                SendRecv::recv(&mut ring_out, prev),
            ],
        )
    })?;
    let fold = |len, salt, op| {
        (1..n).fold(input::<f32>(0, len, salt), |acc, i| {
            acc.into_iter()
                .zip(input::<f32>(i, len, salt))
                .map(|(a, b)| f32::op(a, b, op))
                .collect()
        })
    };
    assert_eq!(
        big.copy_to_vec()?,
        fold(big_len, 1, ReduceOp::Sum),
        "rank {r}: all-reduce"
    );
    let want_min: Vec<i32> = (0..7)
        .map(|k| (0..n).map(|i| input::<i32>(i, 7, 2)[k]).min().unwrap())
        .collect();
    assert_eq!(
        small_min.copy_to_vec()?,
        want_min,
        "rank {r}: all-reduce min"
    );
    let mut want = vec![-1i16; agv.extent()];
    for i in 0..n {
        let d = agv.displacement(i).unwrap();
        want[d..d + i + 1].copy_from_slice(&input::<i16>(i, i + 1, 3));
    }
    assert_eq!(gathered.copy_to_vec()?, want, "rank {r}: all-gather-v");
    let want: Vec<u8> = (0..n)
        .flat_map(|i| {
            let at: usize = (0..r).map(|k| m.get(i, k).unwrap()).sum();
            input::<u8>(i, m.sent_by(i), 4)[at..at + m.get(i, r).unwrap()].to_vec()
        })
        .collect();
    assert_eq!(a2a_out.copy_to_vec()?, want, "rank {r}: all-to-all-vc");
    assert_eq!(
        ring_out.copy_to_vec()?,
        input::<i64>(prev as usize, 5, 5),
        "rank {r}: batch"
    );
    Ok(())
}

/// The rank of a child process: joins through the root info in the file, works, leaves.
#[test]
fn child_rank_entry_point() {
    let Ok(rank) = std::env::var(RANK) else {
        return; // the ordinary test run
    };
    bounded_timeouts();
    let rank: u32 = rank.parse().unwrap();
    let n: u32 = std::env::var(NRANKS).unwrap().parse().unwrap();
    let bytes = std::fs::read(std::env::var(ROOT_INFO).unwrap()).unwrap();
    let info = RootInfo::from_bytes(&bytes).unwrap();
    let dev = crate::common::rt()
        .device((rank % crate::common::DEVICES) as i32)
        .unwrap();
    let comm = Comm::init_root_info(&dev, n, &info, rank, None).unwrap();
    rank_work(&comm).unwrap();
    comm.destroy().unwrap();
}

/// The child processes; killed and reaped if the test fails before they exit.
struct Children(Vec<Child>);

impl Children {
    /// Waits for every child, at most until `deadline`; returns their failures.
    fn wait(&mut self, deadline: Instant) -> Vec<String> {
        let mut failures = Vec::new();
        for (i, c) in self.0.iter_mut().enumerate() {
            loop {
                match c.try_wait().unwrap() {
                    Some(st) if st.success() => break,
                    Some(st) => {
                        failures.push(format!("rank {}: {st}", i + 1));
                        break;
                    }
                    None if Instant::now() > deadline => {
                        failures.push(format!("rank {} did not finish in time", i + 1));
                        break;
                    }
                    None => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }
        failures
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            if c.try_wait().ok().flatten().is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

fn run_ranks(n: u32) {
    bounded_timeouts();
    let dev = crate::common::rt().device(0).unwrap();
    let info = RootInfo::new(&dev).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("root_info.bin");
    std::fs::write(&path, info.as_bytes()).unwrap();
    let mut children = Children(
        (1..n)
            .map(|rank| {
                Command::new(std::env::current_exe().unwrap())
                    .args([
                        "--exact",
                        "multiprocess::child_rank_entry_point",
                        "--test-threads",
                        "1",
                    ])
                    .env(RANK, rank.to_string())
                    .env(NRANKS, n.to_string())
                    .env(ROOT_INFO, &path)
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("start a rank")
            })
            .collect(),
    );
    let comm = Comm::init_root_info(&dev, n, &info, 0, None).unwrap();
    assert_eq!((comm.rank(), comm.size()), (0, n));
    let mine = rank_work(&comm);
    let failures = children.wait(Instant::now() + Duration::from_secs(30));
    mine.unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    comm.destroy().unwrap();
}

#[test]
fn three_processes_run_collectives_through_the_safe_api() {
    run_ranks(3);
}
