//! The messages between ranks and the rendezvous hub, and their framing on a Unix socket: a
//! little-endian `u32` length, then a tag byte and the fields.

use std::io::{self, Read, Write};

/// What a meeting is: the k-th collective of a communicator, or the k-th transfer from one rank
/// to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Coll(u64),
    P2p { src: u32, dst: u32, seq: u64 },
}

impl Key {
    /// The ranks that meet, for a communicator of `n` ranks.
    pub fn participants(&self, n: u32) -> Vec<u32> {
        match *self {
            Key::Coll(_) => (0..n).collect(),
            Key::P2p { src, dst, .. } if src == dst => vec![src],
            Key::P2p { src, dst, .. } => vec![src, dst],
        }
    }

    /// For messages.
    pub fn describe(&self) -> String {
        match *self {
            Key::Coll(k) => format!("collective #{k}"),
            Key::P2p { src, dst, seq } => format!("transfer #{seq} from rank {src} to rank {dst}"),
        }
    }
}

/// Where one rank's contribution to a meeting lies: `len` bytes at `offset` in generation `generation`
/// of the shared-memory segment tagged `tag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    pub rank: u32,
    pub tag: u64,
    pub generation: u64,
    pub offset: u64,
    pub len: u64,
}

/// A message from a rank to the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToHub {
    /// Joins the communicator.
    Hello {
        n: u32,
        rank: u32,
        pid: u32,
        device: i32,
    },
    /// Arrives at a meeting with a contribution; `desc` must be the same for every participant.
    Arrive { key: Key, part: Part, desc: String },
    /// Done reading the other contributions of a meeting.
    Done { key: Key },
    /// Leaves (the communicator is destroyed).
    Bye,
}

/// A message from the hub to a rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FromHub {
    /// Every rank joined.
    Welcome { pids: Vec<u32>, devices: Vec<i32> },
    /// The join is refused, with an `HcclResult` code.
    Reject { code: u32, msg: String },
    /// Every participant arrived: their contributions.
    Go { key: Key, parts: Vec<Part> },
    /// The meeting cannot happen (participants disagree, or one left).
    Fail { key: Key, msg: String },
    /// Every participant is done: contributions may be overwritten.
    Free { key: Key },
    /// The communicator is broken (a rank went away).
    Abort { msg: String },
}

#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn key(&mut self, k: &Key) -> &mut Self {
        match *k {
            Key::Coll(seq) => self.u8(0).u32(0).u32(0).u64(seq),
            Key::P2p { src, dst, seq } => self.u8(1).u32(src).u32(dst).u64(seq),
        }
    }
    fn part(&mut self, p: &Part) -> &mut Self {
        self.u32(p.rank)
            .u64(p.tag)
            .u64(p.generation)
            .u64(p.offset)
            .u64(p.len)
    }
}

struct Dec<'a>(&'a [u8]);

fn short() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "truncated message")
}

impl Dec<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(short());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn str(&mut self) -> io::Result<String> {
        let n = self.u32()? as usize;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
    fn key(&mut self) -> io::Result<Key> {
        let kind = self.u8()?;
        let (a, b, seq) = (self.u32()?, self.u32()?, self.u64()?);
        match kind {
            0 => Ok(Key::Coll(seq)),
            1 => Ok(Key::P2p {
                src: a,
                dst: b,
                seq,
            }),
            _ => Err(io::Error::new(io::ErrorKind::InvalidData, "bad key")),
        }
    }
    fn part(&mut self) -> io::Result<Part> {
        Ok(Part {
            rank: self.u32()?,
            tag: self.u64()?,
            generation: self.u64()?,
            offset: self.u64()?,
            len: self.u64()?,
        })
    }
}

fn bad_tag(t: u8) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unknown message tag {t}"),
    )
}

impl ToHub {
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        match self {
            ToHub::Hello {
                n,
                rank,
                pid,
                device,
            } => e.u8(1).u32(*n).u32(*rank).u32(*pid).u32(*device as u32),
            ToHub::Arrive { key, part, desc } => e.u8(2).key(key).part(part).str(desc),
            ToHub::Done { key } => e.u8(3).key(key),
            ToHub::Bye => e.u8(4),
        };
        e.0
    }

    pub fn decode(b: &[u8]) -> io::Result<ToHub> {
        let mut d = Dec(b);
        Ok(match d.u8()? {
            1 => ToHub::Hello {
                n: d.u32()?,
                rank: d.u32()?,
                pid: d.u32()?,
                device: d.u32()? as i32,
            },
            2 => ToHub::Arrive {
                key: d.key()?,
                part: d.part()?,
                desc: d.str()?,
            },
            3 => ToHub::Done { key: d.key()? },
            4 => ToHub::Bye,
            t => return Err(bad_tag(t)),
        })
    }
}

impl FromHub {
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        match self {
            FromHub::Welcome { pids, devices } => {
                e.u8(1).u32(pids.len() as u32);
                for (p, d) in pids.iter().zip(devices) {
                    e.u32(*p).u32(*d as u32);
                }
            }
            FromHub::Reject { code, msg } => {
                e.u8(2).u32(*code).str(msg);
            }
            FromHub::Go { key, parts } => {
                e.u8(3).key(key).u32(parts.len() as u32);
                for p in parts {
                    e.part(p);
                }
            }
            FromHub::Fail { key, msg } => {
                e.u8(4).key(key).str(msg);
            }
            FromHub::Free { key } => {
                e.u8(5).key(key);
            }
            FromHub::Abort { msg } => {
                e.u8(6).str(msg);
            }
        }
        e.0
    }

    pub fn decode(b: &[u8]) -> io::Result<FromHub> {
        let mut d = Dec(b);
        Ok(match d.u8()? {
            1 => {
                let n = d.u32()? as usize;
                let (mut pids, mut devices) = (Vec::new(), Vec::new());
                for _ in 0..n {
                    pids.push(d.u32()?);
                    devices.push(d.u32()? as i32);
                }
                FromHub::Welcome { pids, devices }
            }
            2 => FromHub::Reject {
                code: d.u32()?,
                msg: d.str()?,
            },
            3 => {
                let key = d.key()?;
                let n = d.u32()? as usize;
                let mut parts = Vec::new();
                for _ in 0..n {
                    parts.push(d.part()?);
                }
                FromHub::Go { key, parts }
            }
            4 => FromHub::Fail {
                key: d.key()?,
                msg: d.str()?,
            },
            5 => FromHub::Free { key: d.key()? },
            6 => FromHub::Abort { msg: d.str()? },
            t => return Err(bad_tag(t)),
        })
    }
}

/// The largest message accepted (a Welcome of many ranks is the largest).
const MAX_FRAME: usize = 64 << 20;

/// Writes one framed message.
pub(crate) fn write_frame(w: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_le_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf)
}

/// Reads one framed message.
pub(crate) fn read_frame(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("message of {n} bytes"),
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let part = Part {
            rank: 3,
            tag: 0xdead_beef,
            generation: 2,
            offset: 64,
            len: 4096,
        };
        let to = [
            ToHub::Hello {
                n: 4,
                rank: 3,
                pid: 99,
                device: -1,
            },
            ToHub::Arrive {
                key: Key::P2p {
                    src: 1,
                    dst: 3,
                    seq: 7,
                },
                part,
                desc: "4 x FP32".into(),
            },
            ToHub::Done { key: Key::Coll(9) },
            ToHub::Bye,
        ];
        for m in to {
            assert_eq!(ToHub::decode(&m.encode()).unwrap(), m);
        }
        let from = [
            FromHub::Welcome {
                pids: vec![1, 2],
                devices: vec![0, 1],
            },
            FromHub::Reject {
                code: 9,
                msg: "late".into(),
            },
            FromHub::Go {
                key: Key::Coll(1),
                parts: vec![part, part],
            },
            FromHub::Fail {
                key: Key::Coll(2),
                msg: "x".into(),
            },
            FromHub::Free { key: Key::Coll(3) },
            FromHub::Abort { msg: "gone".into() },
        ];
        for m in from {
            assert_eq!(FromHub::decode(&m.encode()).unwrap(), m);
        }
        let mut buf = Vec::new();
        write_frame(&mut buf, b"abc").unwrap();
        assert_eq!(read_frame(&mut buf.as_slice()).unwrap(), b"abc");
        assert!(ToHub::decode(&[2, 0]).is_err());
    }
}
