//! The algorithms that run an operation on every rank at once, and which one runs when.
//!
//! | algorithm | used for |
//! |---|---|
//! | one-shot mesh | every collective whose largest contribution is small, on one server: each rank publishes its contribution in its region, the ranks count in on the server's first region, and each computes its own output from every contribution (one synchronisation, no chunking) |
//! | ring | all-reduce, reduce-scatter, all-gather (and their V forms, and the reduce-scatter of a reduce) beyond that, for any number of ranks: the data in `n` segments, each pipelined in slot-sized chunks around the ring, reduce-scatter then all-gather |
//! | recursive halving-doubling | all-reduce, reduce-scatter and all-gather of medium sizes on a power-of-two number of ranks: `log2 n` exchanges with partners `r ^ 2^k`, halving the data while reducing, doubling it while gathering |
//! | pipelined chain | broadcast beyond one-shot sizes: chunks flow from the root around the ranks |
//! | pairwise direct | scatter, the all-to-alls and barrier beyond one-shot sizes (and the gather of a reduce): every rank streams what each peer needs straight to it |
//! | point-to-point | send, receive, batches of them |
//!
//! [`select`] decides from what every rank knows alike (the operation's signature, the number
//! of ranks, whether they share a server) and the communicator's `HCCL_ALGO`; the choice is
//! part of every chunk's tag, so ranks that chose differently fail with a mismatch.

mod choice;
mod direct;
mod hd;
mod oneshot;
mod p2p;
mod ring;
mod segs;

pub use choice::{Algorithm, Collective, algorithm};
pub(crate) use choice::{Pref, select};

use crate::fabric::Fabric;
use crate::ops::Op;
use crate::transport::Stop;
use crate::wire::{Key, Tag};
use std::time::Instant;

/// Runs `op` (with the keys its ticket got) on this rank until `deadline`.
pub(crate) fn run(
    f: &mut Fabric,
    op: &Op,
    keys: &[Key],
    deadline: Option<Instant>,
    pref: &Pref,
) -> Result<Algorithm, Stop> {
    let algo = select(op, f.n, f.single_server(), f.layout.oneshot, pref);
    if algo == Algorithm::OneShot {
        f.oneshots += 1;
    }
    let number = f.oneshots;
    let f = &*f;
    let w = f.waiter(deadline);
    if let Op::Batch(items) = op {
        p2p::run(f, &w, items, keys)?;
        return Ok(algo);
    }
    let mut sig = op.sig();
    sig.algo = algo as u8;
    let seq = match keys.first() {
        Some(Key::Coll(k)) => *k,
        _ => 0,
    };
    let tag = Tag { seq, sig };
    match algo {
        Algorithm::Local => oneshot::local(op)?,
        Algorithm::OneShot => oneshot::run(f, &w, number, op, tag)?,
        Algorithm::Ring => ring::run(f, &w, op, tag)?,
        Algorithm::HalvingDoubling => hd::run(f, &w, op, tag)?,
        Algorithm::Chain => direct::broadcast(f, &w, op, tag)?,
        Algorithm::Direct => direct::run(f, &w, op, tag)?,
        Algorithm::Transfer => unreachable!("transfers are batches"),
    }
    Ok(algo)
}
