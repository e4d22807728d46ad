//! The rendezvous hub: a listener on an abstract Unix socket, run by a thread of the process
//! that created the root info (or, for a rank table, of the first process that needed it).
//!
//! Ranks connect and say hello; when all `n` are in, each is told who the others are. Then the
//! hub matches meetings: it collects every participant's arrival (with its contribution's place
//! in shared memory and a description of the operation), sends "go" when all arrived — or "fail"
//! when their descriptions differ — and "free" when all are done. It carries no data. A rank
//! whose connection closes without a goodbye (its process died) aborts the communicator for the
//! others. The hub ends when every rank has left.

use crate::sync::lock;
use crate::wire::{FromHub, Key, Part, ToHub, read_frame, write_frame};
use hccl_sys::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Binds the abstract socket `name`; `AddrInUse` when a hub of that name runs.
pub(crate) fn bind(name: &str) -> io::Result<UnixListener> {
    UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes())?)
}

/// Connects to the hub named `name`.
pub(crate) fn connect(name: &str) -> io::Result<UnixStream> {
    UnixStream::connect_addr(&SocketAddr::from_abstract_name(name.as_bytes())?)
}

struct Member {
    pid: u32,
    device: i32,
    w: Arc<Mutex<UnixStream>>,
}

#[derive(Default)]
struct Meeting {
    parts: BTreeMap<u32, Part>,
    descs: BTreeMap<u32, String>,
    failed: bool,
    went: bool,
    done: HashSet<u32>,
}

#[derive(Default)]
struct State {
    n: Option<u32>,
    members: HashMap<u32, Member>,
    welcomed: bool,
    closed: bool,
    meetings: HashMap<Key, Meeting>,
    left: HashSet<u32>,
    aborted: Option<String>,
}

fn send(m: &Member, msg: &FromHub) {
    // A failed write means the rank is gone; its reader thread sees that and cleans up.
    let _ = write_frame(&mut *lock(&m.w), &msg.encode());
}

impl State {
    fn send_to(&self, rank: u32, msg: &FromHub) {
        if let Some(m) = self.members.get(&rank) {
            send(m, msg);
        }
    }

    fn fail_meeting(&mut self, key: Key, msg: String) {
        if let Some(m) = self.meetings.get_mut(&key) {
            m.failed = true;
            let ranks: Vec<u32> = m.parts.keys().copied().collect();
            for r in ranks {
                self.send_to(
                    r,
                    &FromHub::Fail {
                        key,
                        msg: msg.clone(),
                    },
                );
            }
        }
    }

    fn arrive(&mut self, rank: u32, key: Key, part: Part, desc: String) {
        let n = self.n.unwrap_or(0);
        let participants = key.participants(n);
        if let Some(why) = &self.aborted {
            let msg = why.clone();
            self.send_to(rank, &FromHub::Fail { key, msg });
            return;
        }
        if let Some(gone) = participants.iter().find(|r| self.left.contains(r)) {
            let msg = format!(
                "rank {gone} destroyed its communicator before joining {}",
                key.describe()
            );
            self.send_to(rank, &FromHub::Fail { key, msg });
            return;
        }
        let m = self.meetings.entry(key).or_default();
        if m.failed {
            let msg = format!("{} failed before rank {rank} arrived", key.describe());
            self.send_to(rank, &FromHub::Fail { key, msg });
            return;
        }
        m.parts.insert(rank, part);
        m.descs.insert(rank, desc);
        let first = m.descs.iter().next().map(|(r, d)| (*r, d.clone()));
        if let Some((r0, d0)) = first
            && let Some((r1, d1)) = m.descs.iter().find(|(_, d)| **d != d0)
        {
            let msg = mismatch(key, r0, &d0, *r1, d1);
            self.fail_meeting(key, msg);
            return;
        }
        if m.parts.len() == participants.len() {
            m.went = true;
            let parts: Vec<Part> = m.parts.values().copied().collect();
            for r in participants {
                self.send_to(
                    r,
                    &FromHub::Go {
                        key,
                        parts: parts.clone(),
                    },
                );
            }
        }
    }

    fn done(&mut self, rank: u32, key: Key) {
        let n = self.n.unwrap_or(0);
        let Some(m) = self.meetings.get_mut(&key) else {
            return;
        };
        m.done.insert(rank);
        let participants = key.participants(n);
        if m.done.len() == participants.len() {
            self.meetings.remove(&key);
            for r in participants {
                self.send_to(r, &FromHub::Free { key });
            }
        }
    }

    /// A rank left cleanly: the meetings that wait for it cannot happen.
    fn bye(&mut self, rank: u32) {
        self.left.insert(rank);
        let n = self.n.unwrap_or(0);
        let stuck: Vec<Key> = self
            .meetings
            .iter()
            .filter(|(k, m)| {
                !m.went && !m.failed && k.participants(n).contains(&rank) && !m.parts.is_empty()
            })
            .map(|(k, _)| *k)
            .collect();
        for k in stuck {
            let msg = format!(
                "rank {rank} destroyed its communicator while {} waited for it",
                k.describe()
            );
            self.fail_meeting(k, msg);
        }
    }

    /// A rank's connection closed without a goodbye.
    fn lost(&mut self, rank: u32) {
        if !self.welcomed {
            // It gave up waiting for the others (or died): it may join again.
            self.members.remove(&rank);
            return;
        }
        if self.left.contains(&rank) {
            return;
        }
        let pid = self.members.get(&rank).map_or(0, |m| m.pid);
        let msg = format!(
            "rank {rank} (process {pid}) closed its connection without destroying its \
             communicator (did the process exit?)"
        );
        self.left.insert(rank);
        if self.aborted.is_none() {
            self.aborted = Some(msg.clone());
        }
        for (r, m) in &self.members {
            if *r != rank && !self.left.contains(r) {
                send(m, &FromHub::Abort { msg: msg.clone() });
            }
        }
    }
}

fn mismatch(key: Key, r0: u32, d0: &str, r1: u32, d1: &str) -> String {
    match key {
        Key::Coll(_) => format!(
            "the ranks issued different collectives as {}: rank {r0} issued {d0}, rank {r1} \
             issued {d1} (every rank must issue the same collectives in the same order, with the \
             same counts, types, operation and root; hardware waits until HCCL_EXEC_TIMEOUT and \
             fails the same way)",
            key.describe()
        ),
        Key::P2p { src, dst, .. } => {
            let (s, r) = if r0 == src { (d0, d1) } else { (d1, d0) };
            format!(
                "{} does not match: rank {src} sends {s}, rank {dst} receives {r} (hardware waits \
                 until HCCL_EXEC_TIMEOUT and fails the same way)",
                key.describe()
            )
        }
    }
}

type Hub = Arc<Mutex<State>>;

/// Starts a hub on `listener`: ranks may join until `deadline` (then the ones waiting are
/// refused with E_TIMEOUT). `n` is the expected size when known in advance (a rank table).
pub(crate) fn spawn(listener: UnixListener, n: Option<u32>, deadline: Instant) -> io::Result<()> {
    let hub: Hub = Arc::new(Mutex::new(State {
        n,
        ..State::default()
    }));
    std::thread::Builder::new()
        .name("hccl-emu-hub".into())
        .spawn(move || accept_loop(listener, hub, deadline))?;
    Ok(())
}

fn accept_loop(listener: UnixListener, hub: Hub, deadline: Instant) {
    loop {
        {
            let st = lock(&hub);
            if st.welcomed || st.closed {
                return;
            }
        }
        let now = Instant::now();
        if now >= deadline {
            let mut st = lock(&hub);
            st.closed = true;
            let joined = st.members.len();
            let msg = format!(
                "only {joined} of {} ranks joined the rendezvous within the connect timeout \
                 (HCCL_CONNECT_TIMEOUT)",
                st.n.map_or("the".to_string(), |n| n.to_string())
            );
            for m in st.members.values() {
                send(
                    m,
                    &FromHub::Reject {
                        code: HCCL_E_TIMEOUT.0,
                        msg: msg.clone(),
                    },
                );
            }
            return;
        }
        let wait = (deadline - now).min(Duration::from_millis(50));
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, wait.as_millis().max(1) as libc::c_int) };
        if r <= 0 {
            continue;
        }
        if let Ok((stream, _)) = listener.accept() {
            let hub = Arc::clone(&hub);
            let _ = std::thread::Builder::new()
                .name("hccl-emu-hub-rank".into())
                .spawn(move || serve(stream, hub));
        }
    }
}

/// Serves one rank's connection.
fn serve(stream: UnixStream, hub: Hub) {
    let Ok(w) = stream.try_clone() else {
        return;
    };
    let w = Arc::new(Mutex::new(w));
    let mut r = stream;
    let reject = |code: HcclResult, msg: String| {
        let _ = write_frame(
            &mut *lock(&w),
            &FromHub::Reject { code: code.0, msg }.encode(),
        );
    };
    let Ok(Ok(ToHub::Hello {
        n,
        rank,
        pid,
        device,
    })) = read_frame(&mut r).map(|b| ToHub::decode(&b))
    else {
        return;
    };
    {
        let mut st = lock(&hub);
        if st.closed || st.welcomed {
            return reject(
                HCCL_E_PARA,
                "the rendezvous is over (every rank already joined, or it timed out); call \
                 HcclGetRootInfo again for a new communicator"
                    .into(),
            );
        }
        match st.n {
            Some(m) if m != n => {
                return reject(
                    HCCL_E_PARA,
                    format!(
                        "rank {rank} passed nRanks {n}, but the communicator has {m} ranks \
                         (every rank must pass the same nRanks)"
                    ),
                );
            }
            _ => st.n = Some(n),
        }
        if rank >= n {
            return reject(HCCL_E_PARA, format!("rank {rank} is not below nRanks {n}"));
        }
        if let Some(m) = st.members.get(&rank) {
            return reject(
                HCCL_E_PARA,
                format!(
                    "rank {rank} already joined (process {}, device {}); every rank id must be \
                     used once",
                    m.pid, m.device
                ),
            );
        }
        st.members.insert(
            rank,
            Member {
                pid,
                device,
                w: Arc::clone(&w),
            },
        );
        if st.members.len() == n as usize {
            st.welcomed = true;
            let pids: Vec<u32> = (0..n).map(|i| st.members[&i].pid).collect();
            let devices: Vec<i32> = (0..n).map(|i| st.members[&i].device).collect();
            let msg = FromHub::Welcome { pids, devices };
            for m in st.members.values() {
                send(m, &msg);
            }
        }
    }
    loop {
        let msg = match read_frame(&mut r).map(|b| ToHub::decode(&b)) {
            Ok(Ok(m)) => m,
            _ => {
                lock(&hub).lost(rank);
                return;
            }
        };
        let mut st = lock(&hub);
        match msg {
            ToHub::Arrive { key, part, desc } => st.arrive(rank, key, part, desc),
            ToHub::Done { key } => st.done(rank, key),
            ToHub::Bye => st.bye(rank),
            ToHub::Hello { .. } => {}
        }
    }
}
