//! A rank's side of the hub: joining, and meeting the other ranks for an operation — write the
//! contribution into the rank's shared-memory segment, arrive, wait for "go", compute this
//! rank's output from every contribution, say done, wait for "free".

use crate::error::stream_code;
use crate::error::*;
use crate::hub;
use crate::segment::{Peers, Segment};
use crate::wire::{FromHub, Key, Part, ToHub, read_frame, write_frame};
use ascendcl_emu::extension::AclFailure;
use hccl_sys::*;
use std::collections::HashMap;
use std::io::{self, ErrorKind};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Writes a rank's contribution to a meeting.
pub(crate) type Fill<'a> = Box<dyn FnOnce(&mut [u8]) -> Result<(), AclFailure> + 'a>;
/// Computes a rank's output from every contribution (indexed by rank).
pub(crate) type Compute<'a> = Box<dyn FnOnce(&[&[u8]]) -> Result<(), AclFailure> + 'a>;

/// One meeting of an operation, from this rank's side.
pub(crate) struct Meeting<'a> {
    pub key: Key,
    /// Must be equal on every participant.
    pub desc: String,
    /// Bytes this rank contributes.
    pub len: usize,
    /// Writes the contribution (`len` bytes).
    pub fill: Fill<'a>,
    /// Computes this rank's output from the contributions, indexed by rank (empty for ranks
    /// that do not take part).
    pub compute: Compute<'a>,
}

/// Why a meeting failed.
#[derive(Debug, Clone)]
pub(crate) struct MeetError {
    pub failure: AclFailure,
    /// The communicator's asynchronous error that goes with it, if any.
    pub async_error: Option<HcclResult>,
}

fn link_err(msg: String) -> MeetError {
    MeetError {
        failure: AclFailure::new(stream_code::LINK, msg),
        async_error: Some(HCCL_E_TCP_TRANSFER),
    }
}

fn internal(msg: String) -> MeetError {
    MeetError {
        failure: AclFailure::new(stream_code::INTERNAL, msg),
        async_error: None,
    }
}

/// A rank's connection to its communicator's hub.
#[derive(Debug)]
pub(crate) struct Link {
    sock: UnixStream,
    n: u32,
    rank: u32,
    seg: Segment,
    peers: Peers,
    welcomed: bool,
    pub pids: Vec<u32>,
    /// Set once the link cannot be used any more; every later operation fails with it.
    broken: Option<MeetError>,
}

impl Link {
    /// Connects to the hub `name` (retrying until `deadline` while it is not up yet) and says
    /// hello. E_TIMEOUT when no hub answers in time.
    pub fn join(name: &str, deadline: Instant, n: u32, rank: u32, device: i32) -> R<Link> {
        let sock = loop {
            match hub::connect(name) {
                Ok(s) => break s,
                Err(e)
                    if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::NotFound)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => {
                    return fail(
                        HCCL_E_TIMEOUT,
                        format!(
                            "no rendezvous answered within the connect timeout \
                             (HCCL_CONNECT_TIMEOUT): {e}; the process that called \
                             HcclGetRootInfo must stay alive until every rank has joined"
                        ),
                    );
                }
            }
        };
        let mut link = Link {
            sock,
            n,
            rank,
            seg: Segment::new(),
            peers: Peers::default(),
            welcomed: false,
            pids: Vec::new(),
            broken: None,
        };
        let hello = ToHub::Hello {
            n,
            rank,
            pid: std::process::id(),
            device,
        };
        link.send(&hello).map_err(|e| Fail {
            code: HCCL_E_TCP_TRANSFER,
            msg: format!("cannot reach the rendezvous: {e}"),
        })?;
        Ok(link)
    }

    fn send(&mut self, m: &ToHub) -> io::Result<()> {
        write_frame(&mut self.sock, &m.encode())
    }

    fn recv(&mut self, deadline: Option<Instant>) -> io::Result<FromHub> {
        let timeout = match deadline {
            None => None,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::from(ErrorKind::TimedOut));
                }
                Some(left)
            }
        };
        self.sock.set_read_timeout(timeout)?;
        let b = read_frame(&mut self.sock)?;
        FromHub::decode(&b)
    }

    /// Waits until every rank joined (E_TIMEOUT at `deadline`, or the hub's refusal).
    pub fn await_welcome(&mut self, deadline: Instant) -> R {
        if self.welcomed {
            return Ok(());
        }
        loop {
            match self.recv(Some(deadline)) {
                Ok(FromHub::Welcome { pids, .. }) => {
                    self.welcomed = true;
                    self.pids = pids;
                    return Ok(());
                }
                Ok(FromHub::Reject { code, msg }) => return fail(HcclResult(code), msg),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return fail(
                        HCCL_E_TIMEOUT,
                        format!(
                            "rank {} of {}: not every rank joined within the connect timeout \
                             (HCCL_CONNECT_TIMEOUT)",
                            self.rank, self.n
                        ),
                    );
                }
                Err(e) => {
                    return fail(
                        HCCL_E_TCP_TRANSFER,
                        format!("the rendezvous closed the connection: {e}"),
                    );
                }
            }
        }
    }

    /// Says goodbye (the communicator is destroyed).
    pub fn bye(&mut self) {
        let _ = self.send(&ToHub::Bye);
    }

    /// Runs the meetings of one operation, all at once (a batch's transfers progress
    /// together). `deadline` bounds the wait for the peers.
    pub fn meet(
        &mut self,
        meetings: Vec<Meeting<'_>>,
        deadline: Option<Instant>,
    ) -> Result<(), MeetError> {
        if let Some(b) = &self.broken {
            return Err(b.clone());
        }
        const ALIGN: usize = 64;
        let mut offsets = Vec::with_capacity(meetings.len());
        let mut total = 0usize;
        for m in &meetings {
            offsets.push(total);
            total += m.len.div_ceil(ALIGN) * ALIGN;
        }
        self.seg
            .ensure(total)
            .map_err(|e| internal(format!("cannot grow the shared-memory segment: {e}")))?;
        let mut first_err: Option<MeetError> = None;
        let mut computes = HashMap::new();
        let mut arrivals = Vec::new();
        for (m, off) in meetings.into_iter().zip(&offsets) {
            let bytes = &mut self.seg.bytes_mut()[*off..*off + m.len];
            if let Err(f) = (m.fill)(bytes) {
                // This rank's input is bad: its stream fails and it never arrives (the peers
                // time out, as they would on hardware).
                return Err(MeetError {
                    failure: f,
                    async_error: None,
                });
            }
            let part = Part {
                rank: self.rank,
                tag: self.seg.tag(),
                generation: self.seg.generation(),
                offset: *off as u64,
                len: m.len as u64,
            };
            arrivals.push(ToHub::Arrive {
                key: m.key,
                part,
                desc: m.desc,
            });
            computes.insert(m.key, m.compute);
        }
        for a in &arrivals {
            if let Err(e) = self.send(a) {
                return Err(self.broke(link_err(format!("the rendezvous hub is gone: {e}"))));
            }
        }
        let mut waiting_go: usize = computes.len();
        let mut waiting_free: Vec<Key> = Vec::new();
        let mut failed_keys: Vec<Key> = Vec::new();
        while waiting_go > 0 || !waiting_free.is_empty() {
            let msg = match self.recv(deadline) {
                Ok(m) => m,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    let what: Vec<String> = computes
                        .keys()
                        .chain(waiting_free.iter())
                        .map(|k| k.describe())
                        .collect();
                    return Err(self.broke(MeetError {
                        failure: AclFailure::new(
                            stream_code::TIMEOUT,
                            format!(
                                "rank {}: the peers did not reach {} within the execution \
                                 timeout (HCCL_EXEC_TIMEOUT); the communicator is unusable from \
                                 now on",
                                self.rank,
                                what.join(", ")
                            ),
                        ),
                        async_error: Some(HCCL_E_TIMEOUT),
                    }));
                }
                Err(e) => {
                    return Err(self.broke(link_err(format!("the rendezvous hub is gone: {e}"))));
                }
            };
            match msg {
                FromHub::Go { key, parts } => {
                    let Some(compute) = computes.remove(&key) else {
                        continue;
                    };
                    waiting_go -= 1;
                    let mut views: Vec<&[u8]> = vec![&[]; self.n as usize];
                    let mut mapped = Ok(());
                    for p in &parts {
                        if let Err(e) = self.peers.map(p) {
                            mapped = Err(e);
                        }
                    }
                    let r = match mapped {
                        Ok(()) => {
                            for p in &parts {
                                if let Some(v) = views.get_mut(p.rank as usize) {
                                    *v = self.peers.slice(p);
                                }
                            }
                            compute(&views).map_err(|f| MeetError {
                                failure: f,
                                async_error: None,
                            })
                        }
                        Err(e) => Err(internal(format!(
                            "cannot map a peer's shared-memory segment: {e}"
                        ))),
                    };
                    if let Err(e) = r {
                        first_err.get_or_insert(e);
                    }
                    if let Err(e) = self.send(&ToHub::Done { key }) {
                        return Err(
                            self.broke(link_err(format!("the rendezvous hub is gone: {e}")))
                        );
                    }
                    waiting_free.push(key);
                }
                FromHub::Free { key } => waiting_free.retain(|k| *k != key),
                FromHub::Fail { key, msg } => {
                    if computes.remove(&key).is_some() {
                        waiting_go -= 1;
                        failed_keys.push(key);
                        first_err.get_or_insert(MeetError {
                            failure: AclFailure::new(stream_code::TIMEOUT, msg),
                            async_error: Some(HCCL_E_TIMEOUT),
                        });
                    }
                }
                FromHub::Abort { msg } => return Err(self.broke(link_err(msg))),
                FromHub::Welcome { .. } | FromHub::Reject { .. } => {}
            }
        }
        match first_err {
            Some(e) if !failed_keys.is_empty() => Err(self.broke(e)),
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Marks the link unusable with `e` and returns it.
    fn broke(&mut self, e: MeetError) -> MeetError {
        self.broken = Some(e.clone());
        e
    }
}
