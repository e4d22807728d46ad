//! The ranks of one communicator, one persistent thread each, driven from the bench's thread:
//! each command makes every rank enqueue the same collective `iters` times on its stream and
//! wait for it; the command's wall time covers all ranks.

use hccl::{Collectives, Comm, ReduceOp};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

/// The collectives the suite measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::AllReduce, Op::AllGather, Op::ReduceScatter];

    /// The criterion group: `hccl_<op>`.
    pub fn group(self) -> &'static str {
        match self {
            Op::AllReduce => "hccl_all_reduce",
            Op::AllGather => "hccl_all_gather",
            Op::ReduceScatter => "hccl_reduce_scatter",
        }
    }

    /// The f32 elements of the send and receive buffers of one rank for a nominal `bytes`,
    /// as HCCL's and NCCL's benchmarks count them: all-reduce moves `bytes` per rank;
    /// all-gather's output and reduce-scatter's input are `bytes` in all, `⌈count / n⌉`
    /// elements per rank.
    pub fn elements(self, bytes: usize, n: usize) -> (usize, usize) {
        let count = (bytes / 4).max(1);
        let per = count.div_ceil(n);
        match self {
            Op::AllReduce => (count, count),
            Op::AllGather => (per, per * n),
            Op::ReduceScatter => (per * n, per),
        }
    }
}

struct Work {
    op: Op,
    bytes: usize,
    iters: u64,
    /// After the collectives, compare the result with the known one (every rank sends
    /// `rank + 1`, so a sum is `n (n + 1) / 2` and a gather holds `i / per + 1` at `i`).
    verify: bool,
}

/// `n` ranks on devices `0..n`, with send and receive buffers of `max_bytes`.
pub struct Ranks {
    n: usize,
    to: Vec<Sender<Work>>,
    done: Receiver<hccl::Result<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Ranks {
    pub fn new(devices: &[ascendcl::Device], max_bytes: usize) -> hccl::Result<Ranks> {
        let n = devices.len();
        let comms = Comm::init_all(devices)?;
        let (done_tx, done) = channel();
        let (mut to, mut threads) = (Vec::new(), Vec::new());
        for comm in comms {
            let (tx, rx) = channel::<Work>();
            let done_tx = done_tx.clone();
            let dev = comm.device().clone();
            let stream = dev.create_stream()?;
            let elems = (max_bytes / 4).max(n);
            let send = dev.clone_htod(&vec![comm.rank() as f32 + 1.0; elems])?;
            let mut recv = dev.alloc_zeros::<f32>(elems)?;
            to.push(tx);
            threads.push(std::thread::spawn(move || {
                for w in rx {
                    let (s_len, r_len) = w.op.elements(w.bytes, n);
                    let r = (|| {
                        let send = send.slice(..s_len)?;
                        let mut recv = recv.slice_mut(..r_len)?;
                        hccl::scope(&stream, |s| {
                            let out = s.claim(&mut recv);
                            for _ in 0..w.iters {
                                match w.op {
                                    Op::AllReduce => {
                                        s.all_reduce(&comm, &send, out, ReduceOp::Sum)?
                                    }
                                    Op::AllGather => s.all_gather(&comm, &send, out)?,
                                    Op::ReduceScatter => {
                                        s.reduce_scatter(&comm, &send, out, ReduceOp::Sum)?
                                    }
                                }
                            }
                            Ok(())
                        })?;
                        if w.verify {
                            verify(w.op, &recv.as_view().to_vec()?, n, s_len)?;
                        }
                        Ok(())
                    })();
                    if done_tx.send(r).is_err() {
                        break;
                    }
                }
                let _ = comm.destroy();
            }));
        }
        let ranks = Ranks {
            n,
            to,
            done,
            threads,
        };
        ranks.check()?;
        Ok(ranks)
    }

    /// Runs `iters` back-to-back collectives on every rank and returns the wall time.
    pub fn run(&self, op: Op, bytes: usize, iters: u64) -> Duration {
        self.command(op, bytes, iters, false)
    }

    fn command(&self, op: Op, bytes: usize, iters: u64, verify: bool) -> Duration {
        let start = Instant::now();
        for tx in &self.to {
            let w = Work {
                op,
                bytes,
                iters,
                verify,
            };
            tx.send(w).expect("a rank thread is gone");
        }
        for _ in 0..self.n {
            let r = self.done.recv().expect("a rank thread is gone");
            if let Err(e) = r {
                panic!("{op:?} of {bytes} bytes on {} ranks failed: {e}", self.n);
            }
        }
        start.elapsed()
    }

    /// Each collective once at an odd size, its result checked on every rank, before any
    /// timing (a failed check panics in [`Ranks::command`]).
    fn check(&self) -> hccl::Result<()> {
        for op in Op::ALL {
            self.command(op, 4 * 1001, 1, true);
        }
        Ok(())
    }
}

fn verify(op: Op, got: &[f32], n: usize, sent: usize) -> hccl::Result<()> {
    let bad = |i: usize, want: f32| {
        Err(hccl::Error::Backend(format!(
            "{op:?} on {n} ranks: element {i} is {}, expected {want}",
            got[i]
        )))
    };
    let sum = (n * (n + 1) / 2) as f32;
    for (i, x) in got.iter().enumerate() {
        let want = match op {
            Op::AllReduce | Op::ReduceScatter => sum,
            Op::AllGather => (i / sent + 1) as f32,
        };
        if *x != want {
            return bad(i, want);
        }
    }
    Ok(())
}

impl Drop for Ranks {
    fn drop(&mut self) {
        self.to.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
