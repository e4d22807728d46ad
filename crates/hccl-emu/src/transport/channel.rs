//! A channel from one rank to another: a window of [`SLOTS`] chunks of at most one slot each.
//! The sender waits for a free slot, writes the chunk and its metadata, publishes it and rings
//! the receiver; the receiver waits for the chunk, checks the metadata (the operation's tag and
//! the lengths both sides expect), uses the bytes and acknowledges, which frees the slot and
//! rings the sender. Between ranks of one server the slots and counters are in the sender's
//! shared region; between servers the chunk goes over TCP and the acknowledgement comes back as
//! a credit ([`super::tcp`]).
//!
//! [`relay`] receives, combines and forwards in one step, waiting for both ends first, so a
//! ring never holds a received chunk while it waits for room to send.

use super::region::{Class, Region, SLOTS, SlotMeta};
use super::tcp::TcpLink;
use super::{Stop, Waiter};
use crate::wire::Tag;
use ascendcl_emu::extension::AclFailure;
use std::sync::atomic::Ordering;

/// The sending end of a channel.
#[derive(Debug)]
pub(crate) enum Tx<'a> {
    /// Through shared memory: the sender's own region, the receiver's index and region.
    Shm {
        own: &'a Region,
        to: usize,
        peer: &'a Region,
        class: Class,
    },
    Tcp {
        link: &'a TcpLink,
        class: Class,
    },
}

/// The receiving end of a channel.
#[derive(Debug)]
pub(crate) enum Rx<'a> {
    /// Through shared memory: the sender's region and this rank's index in it.
    Shm {
        peer: &'a Region,
        me: usize,
        from: u32,
        class: Class,
    },
    Tcp {
        link: &'a TcpLink,
        class: Class,
    },
}

/// What a chunk is: its tag, its bytes and the bytes of the transfer it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub tag: Tag,
    pub len: usize,
    pub total: usize,
}

impl Chunk {
    fn meta(&self) -> SlotMeta {
        SlotMeta {
            len: self.len as u64,
            total: self.total as u64,
            tag: self.tag,
        }
    }
}

impl Tx<'_> {
    /// The largest chunk.
    pub fn slot_len(&self) -> usize {
        match self {
            Tx::Shm { own, .. } => own.layout().slot,
            Tx::Tcp { link, .. } => link.slot_len(),
        }
    }

    /// Whether a chunk can be sent without waiting.
    pub fn ready(&self) -> bool {
        match self {
            Tx::Shm { own, to, class, .. } => {
                let c = own.chan(*to, *class);
                c.sent.0.load(Ordering::Relaxed) < c.acked.0.load(Ordering::Acquire) + SLOTS as u64
            }
            Tx::Tcp { link, class } => link.can_send(*class),
        }
    }

    /// Writes a chunk with `fill` and publishes it (the caller saw [`Tx::ready`]).
    fn put(
        &self,
        c: Chunk,
        fill: impl FnOnce(&mut [u8]) -> Result<(), AclFailure>,
    ) -> Result<(), Stop> {
        assert!(c.len <= self.slot_len(), "a chunk larger than a slot");
        match self {
            Tx::Shm {
                own,
                to,
                peer,
                class,
            } => {
                let ctl = own.chan(*to, *class);
                let k = ctl.sent.0.load(Ordering::Relaxed);
                let i = (k % SLOTS as u64) as usize;
                // SAFETY: slot i is free (the receiver acknowledged it, Acquire in `ready`) and
                // only this rank, the channel's one sender, writes it until it is published.
                let bytes =
                    unsafe { std::slice::from_raw_parts_mut(own.slot(*to, *class, i), c.len) };
                fill(bytes)?;
                // SAFETY: as above: the slot's metadata is the sender's until published.
                unsafe { ctl.meta[i].get().write(c.meta()) };
                ctl.sent.0.store(k + 1, Ordering::Release);
                peer.header().bell.0.ring();
                Ok(())
            }
            Tx::Tcp { link, class } => link.send(*class, c.meta(), fill),
        }
    }

    /// Sends one chunk written by `fill`.
    pub fn send(
        &self,
        w: &Waiter<'_>,
        c: Chunk,
        fill: impl FnOnce(&mut [u8]) -> Result<(), AclFailure>,
    ) -> Result<(), Stop> {
        w.until(|| self.ready().then_some(()))?;
        self.put(c, fill)
    }

    /// Waits until the receiver took every chunk sent (a send completes only then).
    pub fn flush(&self, w: &Waiter<'_>) -> Result<(), Stop> {
        match self {
            Tx::Shm { own, to, class, .. } => {
                let c = own.chan(*to, *class);
                w.until(|| {
                    (c.acked.0.load(Ordering::Acquire) >= c.sent.0.load(Ordering::Relaxed))
                        .then_some(())
                })
            }
            Tx::Tcp { link, class } => w.until(|| link.drained(*class).then_some(())),
        }
    }
}

impl Rx<'_> {
    /// Whether a chunk is there.
    pub fn ready(&self) -> bool {
        match self {
            Rx::Shm {
                peer, me, class, ..
            } => {
                let c = peer.chan(*me, *class);
                c.sent.0.load(Ordering::Acquire) > c.acked.0.load(Ordering::Relaxed)
            }
            Rx::Tcp { link, class } => link.can_recv(*class),
        }
    }

    /// Checks the next chunk, hands its bytes (writable: the slot is this rank's until
    /// acknowledged) to `take`, and acknowledges it (the caller saw [`Rx::ready`]).
    fn take<T>(
        &self,
        c: Chunk,
        take: impl FnOnce(&mut [u8]) -> Result<T, AclFailure>,
    ) -> Result<T, Stop> {
        match self {
            Rx::Shm {
                peer,
                me,
                from,
                class,
            } => {
                let ctl = peer.chan(*me, *class);
                let k = ctl.acked.0.load(Ordering::Relaxed);
                let i = (k % SLOTS as u64) as usize;
                // SAFETY: published by the sender (Acquire of `sent` in `ready`), not reused until
                // acknowledged below.
                let meta = unsafe { ctl.meta[i].get().read() };
                check(*from, meta, c)?;
                // SAFETY: as above; `len` bytes were written (the metadata says so), and the
                // sender does not touch the slot until it is acknowledged.
                let bytes =
                    unsafe { std::slice::from_raw_parts_mut(peer.slot(*me, *class, i), c.len) };
                let r = take(bytes);
                ctl.acked.0.store(k + 1, Ordering::Release);
                peer.header().bell.0.ring();
                Ok(r?)
            }
            Rx::Tcp { link, class } => link.recv(*class, c.meta(), take),
        }
    }

    /// Receives one chunk described by `c` and hands it to `take`.
    pub fn recv<T>(
        &self,
        w: &Waiter<'_>,
        c: Chunk,
        take: impl FnOnce(&mut [u8]) -> Result<T, AclFailure>,
    ) -> Result<T, Stop> {
        w.until(|| self.ready().then_some(()))?;
        self.take(c, take)
    }
}

/// Receives chunk `c` on `rx` and sends a chunk of the same length on `tx`, written by `f` from
/// the received bytes, once both ends are ready.
pub(crate) fn relay(
    w: &Waiter<'_>,
    rx: &Rx<'_>,
    tx: &Tx<'_>,
    c: Chunk,
    f: impl FnOnce(&mut [u8], &mut [u8]) -> Result<(), AclFailure>,
) -> Result<(), Stop> {
    w.until(|| (rx.ready() && tx.ready()).then_some(()))?;
    rx.take(c, |got| {
        let mut err = None;
        let sent = tx.put(c, |out| f(got, out).inspect_err(|e| err = Some(e.clone())));
        match (sent, err) {
            (_, Some(e)) => Err(e),
            (Err(Stop::Fault(e)), None) => Err(e),
            _ => Ok(()),
        }
    })
}

/// A chunk that is not what the receiver expects means the ranks issued different operations.
pub(super) fn check(from: u32, meta: SlotMeta, c: Chunk) -> Result<(), Stop> {
    if meta.tag != c.tag || meta.len != c.len as u64 || meta.total != c.total as u64 {
        return Err(Stop::Mismatch {
            from,
            theirs: (meta.tag, meta.total),
            mine: (c.tag, c.total as u64),
        });
    }
    Ok(())
}
