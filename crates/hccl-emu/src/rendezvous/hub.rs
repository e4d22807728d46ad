//! The rendezvous hub: a thread listening on a TCP port of the root's address. Ranks connect
//! and say hello; when all `n` are in, each gets the list of members (and the communicator's
//! id). Afterwards the hub only relays: a rank's abort to the others, a rank's goodbye, and the
//! loss of a rank whose connection closed without one (its process died). It carries no data,
//! and ends when every rank's connection has closed.

use crate::sync::lock;
use crate::wire::{self, FromHub, Member, ToHub};
use hccl_sys::*;
use std::collections::{BTreeMap, HashSet};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Conn {
    me: Member,
    w: Arc<Mutex<TcpStream>>,
}

#[derive(Default)]
struct State {
    key: Vec<u8>,
    n: Option<u32>,
    members: BTreeMap<u32, Conn>,
    welcomed: bool,
    closed: bool,
    left: HashSet<u32>,
}

fn send(w: &Mutex<TcpStream>, msg: &FromHub) {
    // A failed write means the rank is gone; its reader sees that and cleans up.
    let _ = wire::send(&mut *lock(w), msg);
}

impl State {
    fn others(&self, rank: u32, msg: &FromHub) {
        for (r, c) in &self.members {
            if *r != rank && !self.left.contains(r) {
                send(&c.w, msg);
            }
        }
    }
}

type Hub = Arc<Mutex<State>>;

/// Starts a hub on `listener` for the rendezvous `key`: ranks may join until `deadline` (then
/// the ones waiting are refused with E_TIMEOUT). `n` is the size when known in advance (a rank
/// table).
pub(crate) fn spawn(
    listener: TcpListener,
    key: Vec<u8>,
    n: Option<u32>,
    deadline: Instant,
) -> io::Result<()> {
    let hub: Hub = Arc::new(Mutex::new(State {
        key,
        n,
        ..State::default()
    }));
    std::thread::Builder::new()
        .name("hccl-emu-hub".into())
        .spawn(move || accept_loop(listener, hub, deadline))?;
    Ok(())
}

fn accept_loop(listener: TcpListener, hub: Hub, deadline: Instant) {
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
            let msg = format!(
                "only {} of {} ranks joined the rendezvous within the connect timeout \
                 (HCCL_CONNECT_TIMEOUT)",
                st.members.len(),
                st.n.map_or("the".to_string(), |n| n.to_string())
            );
            for c in st.members.values() {
                send(
                    &c.w,
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
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, wait.as_millis().max(1) as libc::c_int) };
        if r <= 0 {
            continue;
        }
        if let Ok((stream, _)) = listener.accept() {
            let _ = stream.set_nodelay(true);
            let hub = Arc::clone(&hub);
            let _ = std::thread::Builder::new()
                .name("hccl-emu-hub-rank".into())
                .spawn(move || serve(stream, hub));
        }
    }
}

/// Serves one rank's connection.
fn serve(stream: TcpStream, hub: Hub) {
    let Ok(w) = stream.try_clone() else {
        return;
    };
    let w = Arc::new(Mutex::new(w));
    let mut r = stream;
    let reject = |code: HcclResult, msg: String| send(&w, &FromHub::Reject { code: code.0, msg });
    // A connection that says nothing within a while is not a rank.
    let _ = r.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(ToHub::Hello { n, key, me }) = wire::recv::<ToHub>(&mut r) else {
        return;
    };
    let _ = r.set_read_timeout(None);
    let rank = me.rank;
    {
        let mut st = lock(&hub);
        if key != st.key {
            return reject(
                HCCL_E_PARA,
                "this is another communicator's rendezvous (the root info or rank table differs)"
                    .into(),
            );
        }
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
        if let Some(c) = st.members.get(&rank) {
            return reject(
                HCCL_E_PARA,
                format!(
                    "rank {rank} already joined (process {}, device {}); every rank id must be \
                     used once",
                    c.me.pid, c.me.device
                ),
            );
        }
        st.members.insert(
            rank,
            Conn {
                me,
                w: Arc::clone(&w),
            },
        );
        if st.members.len() == n as usize {
            st.welcomed = true;
            let id = u64::from_le_bytes(crate::rootinfo::random_id()[..8].try_into().expect("8"));
            let members: Vec<Member> = st.members.values().map(|c| c.me.clone()).collect();
            let msg = FromHub::Welcome { id, members };
            for c in st.members.values() {
                send(&c.w, &msg);
            }
        }
    }
    loop {
        let msg = wire::recv::<ToHub>(&mut r);
        let mut st = lock(&hub);
        match msg {
            Ok(ToHub::Abort { msg }) => st.others(rank, &FromHub::Abort { rank, msg }),
            Ok(ToHub::Bye) => {
                st.left.insert(rank);
                st.others(rank, &FromHub::Left { rank });
            }
            Ok(ToHub::Hello { .. }) => {}
            Err(_) => {
                if !st.welcomed {
                    // It gave up waiting for the others (or died): it may join again.
                    st.members.remove(&rank);
                } else if st.left.insert(rank) {
                    let pid = st.members.get(&rank).map_or(0, |c| c.me.pid);
                    st.others(rank, &FromHub::Lost { rank, pid });
                }
                return;
            }
        }
    }
}
