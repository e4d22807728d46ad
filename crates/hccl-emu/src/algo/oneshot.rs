//! The one-shot mesh, for small operations on one server: each rank writes its contribution
//! into its region's one-shot buffer of the exchange's parity, publishes it with its tag, and
//! counts in on the server's first region; the last to arrive wakes the others (one futex
//! wake for all). Then every rank
//! reads what it needs from every contribution and computes its own output (the reductions in
//! rank order). One synchronisation, whatever the number of ranks.
//!
//! A buffer is rewritten two exchanges later, by which time every rank has finished reading it:
//! a rank starts exchange `m + 2` only after every rank arrived at `m + 1`, which each did after
//! it finished `m`.

use crate::fabric::Fabric;
use crate::ops::Op;
use crate::transport::{Stop, Waiter};
use crate::wire::Tag;
use std::sync::atomic::Ordering;

/// One rank alone: its output from its own contribution.
pub(crate) fn local(op: &Op) -> Result<(), Stop> {
    let part = op.part(0, 1);
    let mut b = vec![0u8; part.len];
    (part.fill)(&mut b)?;
    (part.compute)(&[&b]).map_err(Stop::Fault)
}

/// Runs one-shot exchange number `number` (from 1) of `op`.
pub(crate) fn run(f: &Fabric, w: &Waiter<'_>, number: u64, op: &Op, tag: Tag) -> Result<(), Stop> {
    let (r, n) = (f.rank, f.n);
    let part = op.part(r, n);
    let parity = (number % 2) as usize;
    assert!(
        part.len <= f.layout.oneshot,
        "a one-shot contribution larger than its buffer"
    );
    // SAFETY: this rank's own buffer of this parity: nobody reads it until it is published below,
    // and every rank finished reading its previous contents (see the module comment).
    let mine = unsafe { std::slice::from_raw_parts_mut(f.own.oneshot(parity), part.len) };
    (part.fill)(mine)?;
    let p = &f.own.header().published[parity];
    // SAFETY: as above: the published tag is this rank's to write until `number` is stored.
    unsafe { p.tag.get().write(tag) };
    p.len.store(part.len as u64, Ordering::Relaxed);
    p.number.store(number, Ordering::Release);
    let leader = f
        .region(f.local[0])
        .expect("the server's first rank is mapped");
    let arrivals = &leader.header().arrivals.0;
    let target = n.wrapping_mul(number as u32);
    arrivals.arrive(target);
    w.until_count(arrivals, target)?;
    let mut views: Vec<&[u8]> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let reg = f.region(i).expect("one server");
        let p = &reg.header().published[parity];
        let published = p.number.load(Ordering::Acquire);
        // SAFETY: published (Acquire of `number`, or of the arrivals that followed it) and not
        // rewritten before this exchange ends on every rank.
        let theirs = unsafe { p.tag.get().read() };
        if published != number || theirs != tag {
            return Err(Stop::Mismatch {
                from: i,
                theirs: (theirs, p.len.load(Ordering::Relaxed)),
                mine: (tag, part.len as u64),
            });
        }
        let len = p.len.load(Ordering::Relaxed) as usize;
        // SAFETY: as above; `len` bytes of the buffer were written by rank `i`.
        views.push(unsafe {
            std::slice::from_raw_parts(reg.oneshot(parity), len.min(f.layout.oneshot))
        });
    }
    (part.compute)(&views).map_err(Stop::Fault)
}
