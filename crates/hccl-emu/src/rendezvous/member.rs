//! A rank's side of the rendezvous: connecting to the hub and saying hello, waiting for the
//! welcome, and afterwards a watcher thread that listens to the hub for the rest of the
//! communicator's life (another rank's abort fails this rank's operations at once; a rank that
//! left or died is remembered for the messages of the operations that then wait for it).

use crate::error::*;
use crate::sync::lock;
use crate::transport::Shared;
use crate::transport::region::Region;
use crate::wire::{self, FromHub, Member, ToHub};
use hccl_sys::*;
use std::io::{self, ErrorKind};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A joined rank waiting for (or given) the welcome.
#[derive(Debug)]
pub(crate) struct Join {
    sock: TcpStream,
    rank: u32,
    n: u32,
}

/// What the welcome says.
#[derive(Debug, Clone)]
pub(crate) struct Welcome {
    pub id: u64,
    pub members: Vec<Member>,
}

impl Join {
    /// Connects to the hub at `hub` (retrying until `deadline` while it is not up yet) and says
    /// hello. E_TIMEOUT when no hub answers in time.
    pub fn start(hub: SocketAddr, deadline: Instant, n: u32, key: Vec<u8>, me: Member) -> R<Join> {
        let rank = me.rank;
        let mut sock = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match crate::net::connect(hub, left) {
                Ok(s) => break s,
                Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                    return fail(HCCL_E_NOT_SUPPORT, e.to_string());
                }
                Err(e)
                    if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::TimedOut)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => {
                    return fail(
                        HCCL_E_TIMEOUT,
                        format!(
                            "no rendezvous answered at {hub} within the connect timeout \
                             (HCCL_CONNECT_TIMEOUT): {e}; the process that created the root \
                             info must stay alive until every rank has joined"
                        ),
                    );
                }
            }
        };
        let _ = sock.set_nodelay(true);
        wire::send(&mut sock, &ToHub::Hello { n, key, me }).map_err(|e| Fail {
            code: HCCL_E_TCP_TRANSFER,
            msg: format!("cannot reach the rendezvous at {hub}: {e}"),
        })?;
        Ok(Join { sock, rank, n })
    }

    /// Waits until every rank joined (E_TIMEOUT at `deadline`, or the hub's refusal).
    pub fn welcome(&mut self, deadline: Instant) -> R<Welcome> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return self.timed_out();
            }
            let _ = self.sock.set_read_timeout(Some(left));
            match wire::recv::<FromHub>(&mut self.sock) {
                Ok(FromHub::Welcome { id, members }) => {
                    let _ = self.sock.set_read_timeout(None);
                    if members.len() != self.n as usize
                        || members.iter().enumerate().any(|(i, m)| m.rank != i as u32)
                    {
                        return fail(
                            HCCL_E_INTERNAL,
                            "the rendezvous sent a malformed member list",
                        );
                    }
                    return Ok(Welcome { id, members });
                }
                Ok(FromHub::Reject { code, msg }) => return fail(HcclResult(code), msg),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return self.timed_out();
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

    fn timed_out<T>(&self) -> R<T> {
        fail(
            HCCL_E_TIMEOUT,
            format!(
                "rank {} of {}: not every rank joined within the connect timeout \
                 (HCCL_CONNECT_TIMEOUT)",
                self.rank, self.n
            ),
        )
    }

    /// Leaves before linking up (a rank-table communicator destroyed before its first
    /// operation).
    pub fn bye(mut self) {
        let _ = wire::send(&mut self.sock, &ToHub::Bye);
        let _ = self.sock.shutdown(Shutdown::Both);
    }

    /// Hands the connection to a watcher thread for the rest of the communicator's life; it
    /// wakes this rank's waits (on its own doorbell, and on `leader`'s one-shot arrivals) when
    /// something changes.
    pub fn watch(
        self,
        shared: Arc<Shared>,
        own: Arc<Region>,
        leader: Arc<Region>,
    ) -> io::Result<Watch> {
        let w = self.sock.try_clone()?;
        let mut r = self.sock;
        let me = self.rank;
        let closing = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&closing);
        let thread = std::thread::Builder::new()
            .name(format!("hccl-emu-watch-{me}"))
            .spawn(move || {
                loop {
                    match wire::recv::<FromHub>(&mut r) {
                        Ok(FromHub::Abort { rank, msg }) => {
                            shared.abort(format!("rank {rank} failed: {msg}"));
                        }
                        Ok(FromHub::Left { rank }) => {
                            shared.note(format!("rank {rank} destroyed its communicator"));
                        }
                        Ok(FromHub::Lost { rank, pid }) => {
                            shared.note(format!(
                                "rank {rank} (process {pid}) went away without destroying its \
                                 communicator (did the process exit?)"
                            ));
                            shared.set_async_error(HCCL_E_TCP_TRANSFER);
                        }
                        Ok(_) => continue,
                        Err(_) => {
                            if !stopping.load(Ordering::Acquire) {
                                shared.note(
                                    "the connection to the rendezvous closed (the process that \
                                     hosts it went away)"
                                        .to_string(),
                                );
                                shared.set_async_error(HCCL_E_TCP_TRANSFER);
                                own.header().bell.0.ring();
                            }
                            break;
                        }
                    }
                    own.header().bell.0.ring();
                    leader.header().arrivals.0.wake();
                }
            })?;
        Ok(Watch {
            w: Mutex::new(w),
            closing,
            thread: Some(thread),
        })
    }
}

/// The rank's connection to the hub after the welcome, and the thread that listens to it.
#[derive(Debug)]
pub(crate) struct Watch {
    w: Mutex<TcpStream>,
    closing: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Tells the others that this rank's operations failed: theirs fail at once too.
    pub fn abort(&self, msg: &str) {
        let _ = wire::send(
            &mut *lock(&self.w),
            &ToHub::Abort {
                msg: msg.to_string(),
            },
        );
    }

    /// Says goodbye and stops the watcher.
    pub fn close(&mut self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        {
            let mut w = lock(&self.w);
            let _ = wire::send(&mut *w, &ToHub::Bye);
            let _ = w.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.close();
    }
}
