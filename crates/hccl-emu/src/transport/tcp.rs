//! Channels between ranks of different servers: one TCP connection per pair of ranks, carrying
//! both directions. The sender writes a frame (a fixed header, then the chunk) once it holds a
//! credit; a reader thread per connection puts each chunk into a slot of the receiving side's
//! inbox and rings its rank's doorbell; the receiver, done with a chunk, returns a credit.
//! Credits bound what is in flight to [`SLOTS`] chunks per class, so the reader never blocks
//! and neither side's writes can wedge the other's.
//!
//! A connection that closes marks the link dead: what is sent on it is dropped and nothing
//! arrives, so an operation that needs the peer waits for its execution timeout, as on
//! hardware.

use super::Shared;
use super::Stop;
use super::channel::{Chunk, check};
use super::region::{Class, Region, SLOTS, SlotMeta};
use crate::sync::lock;
use crate::wire::Tag;
use ascendcl_emu::extension::AclFailure;
use bytemuck::{Pod, Zeroable};
use std::cell::UnsafeCell;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const DATA: u32 = 1;
const CREDIT: u32 = 2;
const HELLO: u32 = 3;

/// The header of every frame.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
struct Frame {
    kind: u32,
    /// The channel class (data, credit) or the sender's rank (hello).
    class: u32,
    /// Payload bytes (data).
    len: u64,
    /// The bytes of the transfer the chunk belongs to (data).
    total: u64,
    /// Chunks consumed (credit) or the communicator's id (hello).
    value: u64,
    tag: Tag,
}

/// Writes a frame's payload.
type Filler<'a> = &'a mut dyn FnMut(&mut [u8]) -> Result<(), AclFailure>;

/// One class's receiving side.
#[derive(Debug)]
struct Inbox {
    /// Chunks the reader stored.
    sent: AtomicU64,
    /// Chunks the receiver consumed.
    acked: AtomicU64,
    meta: [UnsafeCell<SlotMeta>; SLOTS],
    data: Box<[UnsafeCell<u8>]>,
}

/// One class's sending side.
#[derive(Debug, Default)]
struct Outbox {
    sent: AtomicU64,
    /// Chunks the peer consumed (from its credits).
    acked: AtomicU64,
}

#[derive(Debug)]
struct Writer {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// A connection to a rank on another server.
#[derive(Debug)]
pub(crate) struct TcpLink {
    peer: u32,
    slot: usize,
    writer: Mutex<Writer>,
    inbox: [Inbox; 2],
    outbox: [Outbox; 2],
    dead: AtomicBool,
    closing: AtomicBool,
    reader: Mutex<Option<JoinHandle<()>>>,
}

// SAFETY: the inbox slots are written by the reader thread only while free (between the
// consumer's acknowledgement and the next store of `sent`) and read by the consumer only while
// published; the rest is atomics and mutexes.
unsafe impl Sync for TcpLink {}

impl TcpLink {
    /// Takes over a connected and greeted stream to `peer`; starts its reader, which rings
    /// `own`'s doorbell whenever something arrives.
    pub fn start(
        stream: TcpStream,
        peer: u32,
        slot: usize,
        own: Arc<Region>,
        shared: Arc<Shared>,
    ) -> io::Result<Arc<TcpLink>> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(None)?;
        let read = stream.try_clone()?;
        let inbox = || Inbox {
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            meta: Default::default(),
            data: (0..SLOTS * slot).map(|_| UnsafeCell::new(0)).collect(),
        };
        let link = Arc::new(TcpLink {
            peer,
            slot,
            writer: Mutex::new(Writer {
                stream,
                buf: Vec::new(),
            }),
            inbox: [inbox(), inbox()],
            outbox: Default::default(),
            dead: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            reader: Mutex::new(None),
        });
        let l = Arc::clone(&link);
        let h = std::thread::Builder::new()
            .name(format!("hccl-emu-tcp-{peer}"))
            .spawn(move || {
                let why = l.read_loop(read, &own);
                l.dead.store(true, Ordering::Release);
                if !l.closing.load(Ordering::Acquire) {
                    shared.note(format!("the connection to rank {} closed ({why})", l.peer));
                }
                own.header().bell.0.ring();
            })?;
        *lock(&link.reader) = Some(h);
        Ok(link)
    }

    fn read_loop(&self, mut r: TcpStream, own: &Region) -> String {
        loop {
            let mut f = Frame::default();
            if let Err(e) = r.read_exact(bytemuck::bytes_of_mut(&mut f)) {
                return e.to_string();
            }
            match f.kind {
                DATA if (f.class as usize) < 2 && f.len as usize <= self.slot => {
                    let b = &self.inbox[f.class as usize];
                    let k = b.sent.load(Ordering::Relaxed);
                    if k >= b.acked.load(Ordering::Acquire) + SLOTS as u64 {
                        return "the peer sent past its credits".into();
                    }
                    let i = (k % SLOTS as u64) as usize;
                    let start = i * self.slot;
                    let cells = &b.data[start..start + f.len as usize];
                    // SAFETY: slot i is free (acknowledged, Acquire above) and only this thread
                    // writes inbox slots; UnsafeCell<u8> has the layout of u8.
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(
                            cells.as_ptr().cast::<u8>().cast_mut(),
                            cells.len(),
                        )
                    };
                    if let Err(e) = r.read_exact(bytes) {
                        return e.to_string();
                    }
                    // SAFETY: as above: the metadata of a free slot is the reader's.
                    unsafe {
                        b.meta[i].get().write(SlotMeta {
                            len: f.len,
                            total: f.total,
                            tag: f.tag,
                        })
                    };
                    b.sent.store(k + 1, Ordering::Release);
                    own.header().bell.0.ring();
                }
                CREDIT if (f.class as usize) < 2 => {
                    self.outbox[f.class as usize]
                        .acked
                        .fetch_max(f.value, Ordering::AcqRel);
                    own.header().bell.0.ring();
                }
                k => return format!("an unexpected frame of kind {k}"),
            }
        }
    }

    pub fn slot_len(&self) -> usize {
        self.slot
    }

    pub fn can_send(&self, class: Class) -> bool {
        let o = &self.outbox[class as usize];
        o.sent.load(Ordering::Relaxed) < o.acked.load(Ordering::Acquire) + SLOTS as u64
    }

    pub fn drained(&self, class: Class) -> bool {
        let o = &self.outbox[class as usize];
        o.acked.load(Ordering::Acquire) >= o.sent.load(Ordering::Relaxed)
    }

    pub fn can_recv(&self, class: Class) -> bool {
        let b = &self.inbox[class as usize];
        b.sent.load(Ordering::Acquire) > b.acked.load(Ordering::Relaxed)
    }

    /// Writes a frame; a failure marks the link dead (what follows is dropped).
    fn write(
        &self,
        w: &mut Writer,
        f: Frame,
        len: usize,
        fill: Option<Filler<'_>>,
    ) -> Result<(), AclFailure> {
        let head = std::mem::size_of::<Frame>();
        w.buf.resize(head + len, 0);
        w.buf[..head].copy_from_slice(bytemuck::bytes_of(&f));
        if let Some(fill) = fill {
            fill(&mut w.buf[head..])?;
        }
        if !self.dead.load(Ordering::Acquire) {
            let Writer { stream, buf } = w;
            if stream.write_all(buf).is_err() {
                self.dead.store(true, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Sends one chunk (the caller waited for [`TcpLink::can_send`]).
    pub fn send(
        &self,
        class: Class,
        meta: SlotMeta,
        fill: impl FnOnce(&mut [u8]) -> Result<(), AclFailure>,
    ) -> Result<(), Stop> {
        let mut fill = Some(fill);
        let mut once = |b: &mut [u8]| (fill.take().expect("filled once"))(b);
        let f = Frame {
            kind: DATA,
            class: class as u32,
            len: meta.len,
            total: meta.total,
            value: 0,
            tag: meta.tag,
        };
        let mut w = lock(&self.writer);
        self.write(&mut w, f, meta.len as usize, Some(&mut once))?;
        self.outbox[class as usize]
            .sent
            .fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Receives one chunk (the caller waited for [`TcpLink::can_recv`]) and returns a credit.
    pub fn recv<T>(
        &self,
        class: Class,
        want: SlotMeta,
        take: impl FnOnce(&mut [u8]) -> Result<T, AclFailure>,
    ) -> Result<T, Stop> {
        let b = &self.inbox[class as usize];
        let k = b.acked.load(Ordering::Relaxed);
        let i = (k % SLOTS as u64) as usize;
        // SAFETY: published by the reader (Acquire of `sent` in `can_recv`).
        let meta = unsafe { b.meta[i].get().read() };
        let len = want.len as usize;
        check(
            self.peer,
            meta,
            Chunk {
                tag: want.tag,
                len,
                total: want.total as usize,
            },
        )?;
        let cells = &b.data[i * self.slot..i * self.slot + len];
        // SAFETY: the slot is published and the reader does not rewrite it until it is
        // acknowledged below; only this rank's one consumer touches it meanwhile.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(cells.as_ptr().cast::<u8>().cast_mut(), len) };
        let r = take(bytes);
        b.acked.store(k + 1, Ordering::Release);
        let f = Frame {
            kind: CREDIT,
            class: class as u32,
            len: 0,
            total: 0,
            value: k + 1,
            tag: Tag::default(),
        };
        self.write(&mut lock(&self.writer), f, 0, None)?;
        Ok(r?)
    }

    /// Closes the connection and waits for the reader to end.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        let _ = lock(&self.writer).stream.shutdown(Shutdown::Both);
        if let Some(h) = lock(&self.reader).take() {
            let _ = h.join();
        }
    }
}

/// Connects to `peer` at `addr` (retrying while it does not listen yet, until `deadline`) and
/// greets it as `me` of communicator `id`.
pub(crate) fn dial(addr: SocketAddr, me: u32, id: u64, deadline: Instant) -> io::Result<TcpStream> {
    let mut s = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{addr} did not answer"),
            ));
        }
        match crate::net::connect(addr, left) {
            Ok(s) => break s,
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(e),
        }
    };
    let f = Frame {
        kind: HELLO,
        class: me,
        len: 0,
        total: 0,
        value: id,
        tag: Tag::default(),
    };
    s.write_all(bytemuck::bytes_of(&f))?;
    Ok(s)
}

/// Accepts connections on `listener` until one greets as a rank of communicator `id`; returns
/// it and that rank.
pub(crate) fn accept(
    listener: &TcpListener,
    id: u64,
    deadline: Instant,
) -> io::Result<(TcpStream, u32)> {
    listener.set_nonblocking(true)?;
    loop {
        match listener.accept() {
            Ok((mut s, _)) => {
                s.set_nonblocking(false)?;
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1));
                s.set_read_timeout(Some(left))?;
                let mut f = Frame::default();
                if s.read_exact(bytemuck::bytes_of_mut(&mut f)).is_ok()
                    && f.kind == HELLO
                    && f.value == id
                {
                    return Ok((s, f.class));
                }
                // Not one of ours: drop it and go on.
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "a peer did not connect",
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}
