//! Communicators: their identity (rank, size, name, device), the registry of live ones (names
//! unique per device, one rank-table communicator per device), the order in which each rank's
//! operations run (every operation takes a ticket when it is issued, and runs only after the
//! operations issued before it on the same communicator, whatever stream it is on), and how an
//! operation runs on the rank's connections and fails.

use crate::algo::{self, Pref};
use crate::error::*;
use crate::fabric::{Fabric, Setup};
use crate::ops::Op;
use crate::rendezvous::member::Join;
use crate::sync::lock;
use crate::transport::{Shared, Stop};
use crate::wire::Key;
use ascendcl_emu::extension::AclFailure;
use hccl_sys::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant};

/// How a communicator was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    RootInfo,
    ClusterInfo,
}

/// A rank-table communicator before its first operation: joined, not linked up.
#[derive(Debug)]
pub(crate) struct Pending {
    pub setup: Setup,
    pub join: Join,
}

/// A rank's connections, as far as they got.
#[derive(Debug)]
pub(crate) enum Net {
    Pending(Box<Pending>),
    Ready(Box<Fabric>),
    /// Linking up failed: every operation fails with this.
    Failed(AclFailure),
    Closed,
}

/// A communicator (one rank of it).
#[derive(Debug)]
pub(crate) struct Comm {
    pub rank: u32,
    pub n: u32,
    pub device: i32,
    pub name: String,
    pub origin: Origin,
    /// How long a collective waits for its peers (`None`: forever).
    pub exec_timeout: Option<Duration>,
    /// How long the first operation of a rank-table communicator waits for every rank to join.
    pub connect_timeout: Duration,
    /// `HCCL_ALGO` (or the configuration's `hcclAlgo`).
    pub pref: Pref,
    net: Mutex<Net>,
    shared: Arc<Shared>,
    order: Mutex<Order>,
    turn: Mutex<u64>,
    turn_cv: Condvar,
    inflight: AtomicUsize,
    pub suspended: AtomicBool,
    /// `HCCL_DETERMINISTIC` for this communicator (the emulator is always deterministic; the
    /// value is kept for `HcclGetCommConfig`).
    pub deterministic: AtomicI32,
}

#[derive(Debug, Default)]
struct Order {
    next_ticket: u64,
    coll: u64,
    sends: HashMap<u32, u64>,
    recvs: HashMap<u32, u64>,
}

/// What one operation is, for sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Coll,
    Send(u32),
    Recv(u32),
}

/// An issued operation's place in its communicator's order. Dropping it without running (a
/// task discarded by its stream) lets the operations after it run.
#[derive(Debug)]
pub(crate) struct Ticket {
    comm: Arc<Comm>,
    k: u64,
    pub keys: Vec<Key>,
    finished: bool,
}

impl Ticket {
    /// Waits for this operation's turn, runs it on the rank's connections, and finishes.
    pub fn run(mut self, op: &Op) -> Result<(), AclFailure> {
        let comm = Arc::clone(&self.comm);
        {
            let mut t = lock(&comm.turn);
            while *t < self.k {
                t = comm.turn_cv.wait(t).unwrap_or_else(|e| e.into_inner());
            }
        }
        let keys = std::mem::take(&mut self.keys);
        let r = comm.execute(op, &keys);
        self.finish();
        r
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let c = &self.comm;
        {
            let mut t = lock(&c.turn);
            while *t < self.k {
                // An earlier operation still runs: this one's turn is taken after it.
                t = c.turn_cv.wait(t).unwrap_or_else(|e| e.into_inner());
            }
            *t = self.k + 1;
        }
        c.turn_cv.notify_all();
        c.inflight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Comm {
    /// Issues an operation made of `steps`: its ticket and meeting keys.
    pub fn issue(self: &Arc<Self>, steps: &[Step]) -> Ticket {
        let mut o = lock(&self.order);
        let k = o.next_ticket;
        o.next_ticket += 1;
        let keys = steps
            .iter()
            .map(|s| match *s {
                Step::Coll => {
                    o.coll += 1;
                    Key::Coll(o.coll - 1)
                }
                Step::Send(peer) => {
                    let seq = o.sends.entry(peer).or_default();
                    *seq += 1;
                    Key::P2p {
                        src: self.rank,
                        dst: peer,
                        seq: *seq - 1,
                    }
                }
                Step::Recv(peer) => {
                    let seq = o.recvs.entry(peer).or_default();
                    *seq += 1;
                    Key::P2p {
                        src: peer,
                        dst: self.rank,
                        seq: *seq - 1,
                    }
                }
            })
            .collect();
        self.inflight.fetch_add(1, Ordering::AcqRel);
        Ticket {
            comm: Arc::clone(self),
            k,
            keys,
            finished: false,
        }
    }

    /// Runs `op` on this rank: links up first if the communicator is a rank table's that has
    /// not yet; a failure breaks the communicator and, unless the cause is another rank's,
    /// fails the other ranks' operations too.
    fn execute(&self, op: &Op, keys: &[Key]) -> Result<(), AclFailure> {
        // This rank's own buffers first: a bad one fails this rank's stream and it never
        // arrives (the others wait, as on hardware).
        op.check_buffers(self.rank, self.n)?;
        let mut net = lock(&self.net);
        if matches!(&*net, Net::Pending(_)) {
            let Net::Pending(p) = std::mem::replace(&mut *net, Net::Closed) else {
                unreachable!()
            };
            *net = match self.link_up(*p) {
                Ok(f) => Net::Ready(Box::new(f)),
                Err(e) => {
                    self.shared.set_async_error(e.code);
                    Net::Failed(AclFailure::new(
                        stream_code::TIMEOUT,
                        format!(
                            "rank {} of the rank-table communicator {:?} could not link up with \
                             the others: {} ({})",
                            self.rank,
                            self.name,
                            e.msg,
                            code_name(e.code)
                        ),
                    ))
                }
            };
        }
        let f = match &mut *net {
            Net::Ready(f) => f,
            Net::Failed(e) => return Err(e.clone()),
            Net::Pending(_) | Net::Closed => {
                return Err(AclFailure::new(
                    stream_code::INTERNAL,
                    "the communicator is closed",
                ));
            }
        };
        if let Some(b) = &f.broken {
            return Err(b.clone());
        }
        let deadline = self.exec_timeout.map(|t| Instant::now() + t);
        match algo::run(f, op, keys, deadline, &self.pref) {
            Ok(_) => Ok(()),
            Err(stop) => {
                let (failure, async_error, tell) = self.explain(f, op, keys, stop);
                if let Some(code) = async_error {
                    self.shared.set_async_error(code);
                }
                if tell {
                    f.abort_others(&failure.message);
                }
                f.broken = Some(AclFailure::new(
                    failure.code,
                    format!(
                        "an earlier operation broke the communicator: {}",
                        failure.message
                    ),
                ));
                Err(failure)
            }
        }
    }

    /// A rank-table communicator's first operation: waits for every rank and connects.
    fn link_up(&self, p: Pending) -> R<Fabric> {
        let Pending { setup, mut join } = p;
        let deadline = Instant::now() + self.connect_timeout;
        let welcome = join.welcome(deadline)?;
        Fabric::connect(setup, join, welcome, Arc::clone(&self.shared), deadline)
    }

    /// What a stopped operation reports: its failure, the asynchronous error that goes with it,
    /// and whether the other ranks are to be told.
    fn explain(
        &self,
        f: &Fabric,
        op: &Op,
        keys: &[Key],
        stop: Stop,
    ) -> (AclFailure, Option<HcclResult>, bool) {
        let r = self.rank;
        let what = match keys.first() {
            Some(k @ Key::Coll(_)) => format!("{} ({})", k.describe(), op.sig().describe()),
            Some(k) if keys.len() == 1 => k.describe(),
            _ => "the transfers of a batch".to_string(),
        };
        let notes = f.shared.notes();
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        match stop {
            Stop::Deadline => (
                AclFailure::new(
                    stream_code::TIMEOUT,
                    format!(
                        "rank {r}: the peers did not reach {what} within the execution timeout \
                         (HCCL_EXEC_TIMEOUT){notes}; the communicator is unusable from now on"
                    ),
                ),
                Some(HCCL_E_TIMEOUT),
                true,
            ),
            Stop::Aborted => (
                AclFailure::new(
                    stream_code::TIMEOUT,
                    format!(
                        "rank {r}: {what} cannot complete: {}; the communicator is unusable \
                         from now on",
                        f.shared
                            .reason()
                            .unwrap_or_else(|| "the communicator was aborted".into())
                    ),
                ),
                Some(HCCL_E_TIMEOUT),
                false,
            ),
            Stop::Mismatch { from, theirs, mine } => {
                let msg = match keys.first() {
                    Some(Key::P2p { src, dst, seq }) => {
                        let (s, d) = if *src == r {
                            (mine, theirs)
                        } else {
                            (theirs, mine)
                        };
                        format!(
                            "transfer #{seq} from rank {src} to rank {dst} does not match: rank \
                             {src} sends {}, rank {dst} receives {} (hardware waits until \
                             HCCL_EXEC_TIMEOUT and fails the same way)",
                            s.0.sig.describe(),
                            d.0.sig.describe()
                        )
                    }
                    _ if theirs.0 == mine.0 => format!(
                        "{what}: rank {from} sends {} bytes where rank {r} expects {} (the ranks \
                         passed different counts; the library checks this when the ranks \
                         exchange their counts, HCCL_E_PARA)",
                        theirs.1, mine.1
                    ),
                    _ => format!(
                        "the ranks issued different collectives as {}: rank {r} issued {}, rank \
                         {from} issued {} (every rank must issue the same collectives in the same \
                         order, with the same counts, types, operation and root; hardware waits \
                         until HCCL_EXEC_TIMEOUT and fails the same way)",
                        Key::Coll(mine.0.seq).describe(),
                        mine.0.sig.describe(),
                        theirs.0.sig.describe()
                    ),
                };
                (
                    AclFailure::new(stream_code::TIMEOUT, msg),
                    Some(HCCL_E_TIMEOUT),
                    true,
                )
            }
            Stop::Fault(e) => (e, None, true),
        }
    }

    /// `HcclGetCommAsyncError`: the first link failure seen, or success.
    pub fn async_error(&self) -> HcclResult {
        HcclResult(self.shared.async_error.load(Ordering::Acquire))
    }

    /// Operations issued and not finished.
    pub fn inflight(&self) -> usize {
        self.inflight.load(Ordering::Acquire)
    }
}

#[derive(Debug, Default)]
struct Registry {
    comms: HashMap<usize, Arc<Comm>>,
    /// (device, name) of every live communicator.
    names: HashSet<(i32, String)>,
    /// Devices holding a rank-table communicator.
    rank_table: HashSet<i32>,
    next: usize,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

/// A name reserved on a device while a communicator is created; released on drop unless the
/// communicator was registered.
#[derive(Debug)]
pub(crate) struct Reservation {
    device: i32,
    name: String,
    rank_table: bool,
    kept: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.kept {
            let mut r = lock(&REGISTRY);
            r.names.remove(&(self.device, self.name.clone()));
            if self.rank_table {
                r.rank_table.remove(&self.device);
            }
        }
    }
}

/// Reserves `name` on `device` (E_PARA when a live communicator of the device has it) and, for a
/// rank-table communicator, the device's one slot (E_UNAVAIL when taken).
pub(crate) fn reserve(device: i32, name: &str, rank_table: bool) -> R<Reservation> {
    let mut r = lock(&REGISTRY);
    if rank_table && r.rank_table.contains(&device) {
        return fail(
            HCCL_E_UNAVAIL,
            format!(
                "device {device} already has a communicator created from a rank table (one per \
                 device and process)"
            ),
        );
    }
    if r.names.contains(&(device, name.to_string())) {
        return fail(
            HCCL_E_PARA,
            format!(
                "device {device} already has a communicator named {name:?} (names are unique per \
                 device: use a fresh HcclGetRootInfo, or name the communicator in its config)"
            ),
        );
    }
    r.names.insert((device, name.to_string()));
    if rank_table {
        r.rank_table.insert(device);
    }
    Ok(Reservation {
        device,
        name: name.to_string(),
        rank_table,
        kept: false,
    })
}

/// What a new communicator is.
#[derive(Debug)]
pub(crate) struct NewComm {
    pub rank: u32,
    pub n: u32,
    pub device: i32,
    pub origin: Origin,
    pub exec_timeout: Option<Duration>,
    pub connect_timeout: Duration,
    pub deterministic: i32,
    pub pref: Pref,
    pub net: Net,
    pub shared: Arc<Shared>,
}

/// Registers a communicator under its reserved name; returns its handle.
pub(crate) fn register(mut res: Reservation, c: NewComm) -> usize {
    let mut r = lock(&REGISTRY);
    r.next += 1;
    let handle = 0x4cc1_0000_0000 + r.next * 0x40;
    res.kept = true;
    let comm = Arc::new(Comm {
        rank: c.rank,
        n: c.n,
        device: c.device,
        name: res.name.clone(),
        origin: c.origin,
        exec_timeout: c.exec_timeout,
        connect_timeout: c.connect_timeout,
        pref: c.pref,
        net: Mutex::new(c.net),
        shared: c.shared,
        order: Mutex::new(Order::default()),
        turn: Mutex::new(0),
        turn_cv: Condvar::new(),
        inflight: AtomicUsize::new(0),
        suspended: AtomicBool::new(false),
        deterministic: AtomicI32::new(c.deterministic),
    });
    r.comms.insert(handle, comm);
    handle
}

/// Resolves a communicator handle: NULL is E_PTR, a handle that is not a live communicator
/// (destroyed, or never one) E_PARA.
pub(crate) fn get(handle: usize) -> R<Arc<Comm>> {
    if handle == 0 {
        return fail(HCCL_E_PTR, "comm is NULL");
    }
    match lock(&REGISTRY).comms.get(&handle) {
        Some(c) => Ok(Arc::clone(c)),
        None => fail(
            HCCL_E_PARA,
            format!("comm {handle:#x} is not a live communicator (destroyed, or never created)"),
        ),
    }
}

/// `HcclCommDestroy` after its checks: E_AGAIN while operations are in flight.
pub(crate) fn destroy(handle: usize) -> R {
    let comm = {
        let mut r = lock(&REGISTRY);
        let Some(c) = r.comms.get(&handle).cloned() else {
            return fail(
                HCCL_E_PARA,
                format!("comm {handle:#x} is not a live communicator (destroyed already?)"),
            );
        };
        let busy = c.inflight();
        if busy > 0 {
            return fail(
                HCCL_E_AGAIN,
                format!(
                    "comm {handle:#x} has {busy} operation(s) in flight; synchronize its \
                     streams first"
                ),
            );
        }
        r.comms.remove(&handle);
        r.names.remove(&(c.device, c.name.clone()));
        if c.origin == Origin::ClusterInfo {
            r.rank_table.remove(&c.device);
        }
        c
    };
    let net = std::mem::replace(&mut *lock(&comm.net), Net::Closed);
    match net {
        Net::Ready(f) => f.close(),
        Net::Pending(p) => p.join.bye(),
        Net::Failed(_) | Net::Closed => {}
    }
    Ok(())
}

/// The number of live communicators (for tests).
pub fn live_count() -> usize {
    lock(&REGISTRY).comms.len()
}
