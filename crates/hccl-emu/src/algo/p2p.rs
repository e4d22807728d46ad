//! Sends and receives: each item a transfer on the point-to-point channel to or from its peer,
//! all of a batch progressing together (in order per peer); a send completes only when its
//! receiver took the data, so programs that would deadlock on hardware deadlock here too.

use super::direct::{Recv, Send, exchange};
use crate::fabric::Fabric;
use crate::ops::Item;
use crate::transport::region::Class;
use crate::transport::{Stop, Waiter};
use crate::wire::{Key, Kind, Sig, Tag};

/// Runs the transfers of a batch, `keys[i]` being item `i`'s.
pub(crate) fn run(f: &Fabric, w: &Waiter<'_>, items: &[Item], keys: &[Key]) -> Result<(), Stop> {
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    for (it, key) in items.iter().zip(keys) {
        let Key::P2p { seq, .. } = *key else {
            unreachable!("a transfer has a transfer's key");
        };
        let tag = Tag {
            seq,
            sig: Sig {
                kind: Kind::Transfer as u8,
                dtype: it.dt.raw() as u8,
                count: it.count,
                ..Sig::default()
            },
        };
        let total = it.count as usize * it.dt.size();
        let buf = &it.buf;
        if it.send {
            sends.push(Send {
                to: it.peer,
                tag,
                total,
                src: Box::new(move |off, b| buf.read(off, b)),
            });
        } else {
            recvs.push(Recv {
                from: it.peer,
                tag,
                total,
                dst: Box::new(move |off, b| buf.write(off, b)),
            });
        }
    }
    exchange(f, w, Class::P2p, sends, recvs, true)
}
