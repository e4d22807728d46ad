//! What ranks tell each other: the signature of an operation (which every participant must
//! agree on), the tag that goes with every chunk, and the messages between ranks and the
//! rendezvous hub with their framing (a little-endian `u32` length, then postcard).

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::io::{self, Read, Write};

/// What a meeting of ranks is: the k-th collective of a communicator, or the k-th transfer from
/// one rank to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Coll(u64),
    P2p { src: u32, dst: u32, seq: u64 },
}

impl Key {
    /// For messages.
    pub fn describe(&self) -> String {
        match *self {
            Key::Coll(k) => format!("collective #{k}"),
            Key::P2p { src, dst, seq } => format!("transfer #{seq} from rank {src} to rank {dst}"),
        }
    }
}

/// What an operation is: equal on every participant of a collective, and on both sides of a
/// transfer, or the operation cannot complete.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Sig {
    /// [`Kind`] as a byte.
    pub kind: u8,
    /// `HcclDataType` (the send type of the all-to-alls).
    pub dtype: u8,
    /// `HcclReduceOp`, or 0.
    pub redop: u8,
    /// The algorithm that runs it ([`crate::algo::Algorithm`] as a byte).
    pub algo: u8,
    pub root: u32,
    pub count: u64,
    /// A hash of the per-rank counts of the V forms (0 otherwise).
    pub extra: u64,
}

/// The operation kinds, for [`Sig::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    AllReduce = 1,
    Broadcast,
    Reduce,
    ReduceScatter,
    ReduceScatterV,
    AllGather,
    AllGatherV,
    AlltoAll,
    AlltoAllV,
    AlltoAllVC,
    Scatter,
    Barrier,
    Transfer,
}

impl Kind {
    fn api(k: u8) -> &'static str {
        match k {
            1 => "HcclAllReduce",
            2 => "HcclBroadcast",
            3 => "HcclReduce",
            4 => "HcclReduceScatter",
            5 => "HcclReduceScatterV",
            6 => "HcclAllGather",
            7 => "HcclAllGatherV",
            8 => "HcclAlltoAll",
            9 => "HcclAlltoAllV",
            10 => "HcclAlltoAllVC",
            11 => "HcclScatter",
            12 => "HcclBarrier",
            13 => "a transfer",
            _ => "an unknown operation",
        }
    }
}

impl Sig {
    /// Says what the operation is, for messages.
    pub fn describe(&self) -> String {
        let dt = crate::dtype::DType::from_raw(self.dtype as hccl_sys::HcclDataType)
            .map_or("?", |t| t.name());
        let op = crate::dtype::RedOp::from_raw(self.redop as hccl_sys::HcclReduceOp)
            .map_or("?", |o| o.name());
        let count = self.count;
        let root = self.root;
        match self.kind {
            k if k == Kind::Transfer as u8 => format!("{count} x {dt}"),
            k if k == Kind::Barrier as u8 => "HcclBarrier".to_string(),
            k if k == Kind::AllReduce as u8 || k == Kind::ReduceScatter as u8 => {
                format!("{}(count {count}, {dt}, {op})", Kind::api(k))
            }
            k if k == Kind::Reduce as u8 => {
                format!("HcclReduce(count {count}, {dt}, {op}, root {root})")
            }
            k if k == Kind::Broadcast as u8 || k == Kind::Scatter as u8 => {
                format!("{}(count {count}, {dt}, root {root})", Kind::api(k))
            }
            k if k == Kind::ReduceScatterV as u8 => format!(
                "HcclReduceScatterV(sendCounts hash {:016x}, {dt}, {op})",
                self.extra
            ),
            k if k == Kind::AllGatherV as u8 || k == Kind::AlltoAllVC as u8 => {
                format!("{}(counts hash {:016x}, {dt})", Kind::api(k), self.extra)
            }
            k => format!("{}(count {count}, {dt})", Kind::api(k)),
        }
    }
}

/// Goes with every chunk and every published contribution: the operation's number on its
/// channel class (the k-th collective, or the k-th transfer from one rank to another) and its
/// signature.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Tag {
    pub seq: u64,
    pub sig: Sig,
}

/// One rank as it joins: what the others need to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Member {
    pub rank: u32,
    pub pid: u32,
    pub device: i32,
    /// The emulated server the rank is on: ranks of one server exchange data through shared
    /// memory, ranks of different servers over TCP.
    pub server: String,
    /// The server's address, where the rank listens for its peers on other servers.
    pub addr: String,
    pub port: u16,
    /// The name of the rank's shared region.
    pub region: String,
    /// The bytes of its channel slots (equal on every rank).
    pub slot: u64,
}

/// A message from a rank to the hub.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ToHub {
    /// Joins a communicator of `n` ranks; `key` names what the ranks must agree on (the
    /// rendezvous, or the rank table).
    Hello { n: u32, key: Vec<u8>, me: Member },
    /// This rank's operations on the communicator failed: the others' are to fail at once.
    Abort { msg: String },
    /// The rank destroys its communicator.
    Bye,
}

/// A message from the hub to a rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FromHub {
    /// Every rank joined: the communicator's id and every member, in rank order.
    Welcome { id: u64, members: Vec<Member> },
    /// The join is refused, with an `HcclResult` code.
    Reject { code: u32, msg: String },
    /// A rank aborted the communicator.
    Abort { rank: u32, msg: String },
    /// A rank destroyed its communicator.
    Left { rank: u32 },
    /// A rank's connection closed without a goodbye (its process died).
    Lost { rank: u32, pid: u32 },
}

/// The largest message accepted (a welcome of many ranks is the largest).
const MAX_FRAME: usize = 16 << 20;

/// Writes one framed message.
pub(crate) fn send(w: &mut impl Write, msg: &impl Serialize) -> io::Result<()> {
    let body = postcard::to_stdvec(msg).map_err(io::Error::other)?;
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_le_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)
}

/// Reads one framed message.
pub(crate) fn recv<T: DeserializeOwned>(r: &mut impl Read) -> io::Result<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {n} bytes"),
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    postcard::from_bytes(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_signatures_describe_themselves() {
        let me = Member {
            rank: 3,
            pid: 99,
            device: 1,
            server: "127.0.0.2".into(),
            addr: "127.0.0.2".into(),
            port: 4000,
            region: "hccl-emu-00-3".into(),
            slot: 4096,
        };
        let mut buf = Vec::new();
        let hello = ToHub::Hello {
            n: 4,
            key: vec![1, 2],
            me: me.clone(),
        };
        send(&mut buf, &hello).unwrap();
        send(
            &mut buf,
            &FromHub::Welcome {
                id: 7,
                members: vec![me],
            },
        )
        .unwrap();
        let mut r = buf.as_slice();
        assert_eq!(recv::<ToHub>(&mut r).unwrap(), hello);
        assert!(matches!(
            recv::<FromHub>(&mut r).unwrap(),
            FromHub::Welcome { id: 7, .. }
        ));
        assert!(recv::<FromHub>(&mut r).is_err(), "end of input");
        let sig = Sig {
            kind: Kind::AllReduce as u8,
            dtype: 4,
            redop: 0,
            count: 16,
            ..Sig::default()
        };
        assert_eq!(sig.describe(), "HcclAllReduce(count 16, FP32, SUM)");
        let t = Sig {
            kind: Kind::Transfer as u8,
            dtype: 3,
            count: 5,
            ..Sig::default()
        };
        assert_eq!(t.describe(), "5 x FP16");
    }
}
