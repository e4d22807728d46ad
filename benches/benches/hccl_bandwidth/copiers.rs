//! The host's cores copying at once: one persistent thread per CPU, each with buffers of its
//! own; a command makes every thread copy `bytes` `iters` times and returns the wall time.

use std::hint::black_box;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

/// `k` copying threads.
pub struct Copiers {
    to: Vec<Sender<(usize, u64)>>,
    done: Receiver<()>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Copiers {
    /// `k` threads with buffers of `max_bytes`.
    pub fn new(k: usize, max_bytes: usize) -> Copiers {
        let (done_tx, done) = channel();
        let (mut to, mut threads) = (Vec::new(), Vec::new());
        for _ in 0..k {
            let (tx, rx) = channel::<(usize, u64)>();
            let done_tx = done_tx.clone();
            to.push(tx);
            threads.push(std::thread::spawn(move || {
                let src = vec![1u8; max_bytes];
                let mut dst = vec![0u8; max_bytes];
                for (bytes, iters) in rx {
                    for _ in 0..iters {
                        dst[..bytes].copy_from_slice(black_box(&src[..bytes]));
                    }
                    black_box(&dst);
                    if done_tx.send(()).is_err() {
                        break;
                    }
                }
            }));
        }
        Copiers { to, done, threads }
    }

    /// Every thread copies `bytes` `iters` times; the wall time of all.
    pub fn run(&self, bytes: usize, iters: u64) -> Duration {
        let start = Instant::now();
        for t in &self.to {
            t.send((bytes, iters)).expect("a copier is gone");
        }
        for _ in &self.to {
            self.done.recv().expect("a copier is gone");
        }
        start.elapsed()
    }
}

impl Drop for Copiers {
    fn drop(&mut self) {
        self.to.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
