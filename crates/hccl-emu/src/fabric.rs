//! A rank's connections to the other ranks of its communicator, made once every rank joined:
//! the shared regions of the ranks of its server (mapped), a TCP link to each rank of another
//! server, its hub watcher, and how it waits. Algorithms reach their peers only through it.

use crate::error::*;
use crate::rendezvous::member::{Join, Watch, Welcome};
use crate::transport::Shared;
use crate::transport::Waiter;
use crate::transport::bell::Patience;
use crate::transport::channel::{Rx, Tx};
use crate::transport::region::{Class, Layout, Region};
use crate::transport::tcp::{self, TcpLink};
use crate::wire::Member;
use ascendcl_emu::extension::AclFailure;
use hccl_sys::*;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What a rank prepares before it says hello: its region and its listener for peers on other
/// servers.
#[derive(Debug)]
pub(crate) struct Setup {
    pub own: Region,
    pub listener: TcpListener,
    pub me: Member,
}

impl Setup {
    /// Prepares rank `rank` of `n` on `device`, on the emulated server `server` whose address
    /// is `addr`.
    pub fn new(
        rank: u32,
        n: u32,
        device: i32,
        server: String,
        addr: IpAddr,
        slot: Option<usize>,
    ) -> R<Setup> {
        let own = Region::create(rank, Layout::new(n as usize, slot)).map_err(|e| Fail {
            code: HCCL_E_MEMORY,
            msg: format!("cannot create the shared-memory region of rank {rank}: {e}"),
        })?;
        let listener = crate::net::listen(addr, 0).map_err(|e| Fail {
            code: HCCL_E_SYSCALL,
            msg: format!("cannot listen on {addr} for the ranks of other servers: {e}"),
        })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let me = Member {
            rank,
            pid: std::process::id(),
            device,
            server,
            addr: addr.to_string(),
            port,
            region: own.name().to_string(),
            slot: own.layout().slot as u64,
        };
        Ok(Setup { own, listener, me })
    }
}

/// How this rank reaches another.
#[derive(Debug)]
enum Link {
    Me,
    Shm(Arc<Region>),
    Tcp(Arc<TcpLink>),
}

/// A rank's connections.
#[derive(Debug)]
pub(crate) struct Fabric {
    pub rank: u32,
    pub n: u32,
    pub layout: Layout,
    pub own: Arc<Region>,
    links: Vec<Link>,
    /// The ranks of this rank's server, ascending.
    pub local: Vec<u32>,
    pub shared: Arc<Shared>,
    watch: Watch,
    patience: Patience,
    /// One-shot exchanges run so far.
    pub oneshots: u64,
    /// Set once an operation broke the communicator: every later one fails with it.
    pub broken: Option<AclFailure>,
}

fn setup_fail(msg: String) -> Fail {
    Fail {
        code: HCCL_E_TIMEOUT,
        msg,
    }
}

impl Fabric {
    /// Connects to every peer of the welcome: maps the regions of the ranks of this server,
    /// connects to the ranks of the others (dialling those above, accepting those below), and
    /// unlinks this rank's region name once its server's ranks have mapped it.
    pub fn connect(
        setup: Setup,
        join: Join,
        welcome: Welcome,
        shared: Arc<Shared>,
        deadline: Instant,
    ) -> R<Fabric> {
        let Setup { own, listener, me } = setup;
        let rank = me.rank;
        let n = welcome.members.len() as u32;
        let layout = *own.layout();
        let own = Arc::new(own);
        let mine = &welcome.members[rank as usize];
        if mine.region != me.region {
            return fail(
                HCCL_E_INTERNAL,
                "the rendezvous sent another rank's description",
            );
        }
        if let Some(m) = welcome.members.iter().find(|m| m.slot != me.slot) {
            return fail(
                HCCL_E_PARA,
                format!(
                    "rank {} uses channel slots of {} bytes and rank {rank} of {} \
                     (HCCL_EMU_SLOT_BYTES must be the same for every rank)",
                    m.rank, m.slot, me.slot
                ),
            );
        }
        let mut links = Vec::with_capacity(n as usize);
        let mut local = Vec::new();
        for m in &welcome.members {
            if m.rank == rank {
                links.push(Some(Link::Me));
                local.push(m.rank);
            } else if m.server == me.server {
                let r = Region::open(&m.region, m.rank, layout).map_err(|e| {
                    setup_fail(format!(
                        "cannot map rank {}'s shared-memory region {} (process {}): {e}",
                        m.rank, m.region, m.pid
                    ))
                })?;
                links.push(Some(Link::Shm(Arc::new(r))));
                local.push(m.rank);
            } else {
                links.push(None);
            }
        }
        // Ranks of other servers: dial the ones above, accept the ones below.
        for m in welcome
            .members
            .iter()
            .filter(|m| m.rank > rank && m.server != me.server)
        {
            let ip: IpAddr = m.addr.parse().map_err(|_| {
                setup_fail(format!(
                    "rank {} has no usable address ({:?})",
                    m.rank, m.addr
                ))
            })?;
            let s = tcp::dial(SocketAddr::new(ip, m.port), rank, welcome.id, deadline).map_err(
                |e| {
                    setup_fail(format!(
                        "cannot connect to rank {} on server {} at {}:{}: {e}",
                        m.rank, m.server, m.addr, m.port
                    ))
                },
            )?;
            links[m.rank as usize] = Some(Link::Tcp(start(s, m.rank, &layout, &own, &shared)?));
        }
        let below = welcome
            .members
            .iter()
            .filter(|m| m.rank < rank && m.server != me.server)
            .count();
        for _ in 0..below {
            let (s, from) = tcp::accept(&listener, welcome.id, deadline).map_err(|e| {
                setup_fail(format!(
                    "rank {rank}: a rank of another server did not connect within the connect \
                     timeout: {e}"
                ))
            })?;
            let ok = (from as usize) < links.len()
                && from < rank
                && links[from as usize].is_none()
                && welcome.members[from as usize].server != me.server;
            if !ok {
                return Err(setup_fail(format!(
                    "an unexpected connection from rank {from}"
                )));
            }
            links[from as usize] = Some(Link::Tcp(start(s, from, &layout, &own, &shared)?));
        }
        drop(listener);
        let links: Vec<Link> = links
            .into_iter()
            .map(|l| l.expect("every rank linked"))
            .collect();
        // Tell the server's ranks this one mapped them (the last to map a region unlinks its
        // name: the memory lives as long as a mapping does), and wait until all mapped this one.
        let want = local.len() as u32 - 1;
        for l in &links {
            if let Link::Shm(r) = l {
                r.mapped_by_one_more(want);
            }
        }
        while own.header().mapped.0.load(Ordering::Acquire) < want {
            if Instant::now() >= deadline {
                return Err(setup_fail(format!(
                    "rank {rank}: the other ranks of its server did not map its region within \
                     the connect timeout"
                )));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        own.unlink();
        let leader = match &links[local[0] as usize] {
            Link::Shm(r) => Arc::clone(r),
            _ => Arc::clone(&own),
        };
        let watch = join
            .watch(Arc::clone(&shared), Arc::clone(&own), leader)
            .map_err(|e| Fail {
                code: HCCL_E_SYSCALL,
                msg: format!("cannot start the rendezvous watcher: {e}"),
            })?;
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let patience = Patience {
            poll: Duration::from_micros(if local.len() <= cores { 50 } else { 10 }),
            spin: local.len() <= cores && cores > 1,
        };
        Ok(Fabric {
            rank,
            n,
            layout,
            own,
            links,
            local,
            shared,
            watch,
            patience,
            oneshots: 0,
            broken: None,
        })
    }

    /// Whether every rank is on this rank's server.
    pub fn single_server(&self) -> bool {
        self.local.len() == self.n as usize
    }

    /// The region of `rank` when it is on this server.
    pub fn region(&self, rank: u32) -> Option<&Region> {
        match &self.links[rank as usize] {
            Link::Me => Some(&self.own),
            Link::Shm(r) => Some(r),
            Link::Tcp(_) => None,
        }
    }

    /// The sending end of the channel to `to`.
    pub fn tx(&self, to: u32, class: Class) -> Tx<'_> {
        match &self.links[to as usize] {
            Link::Shm(peer) => Tx::Shm {
                own: &self.own,
                to: to as usize,
                peer,
                class,
            },
            Link::Tcp(link) => Tx::Tcp { link, class },
            Link::Me => panic!("a channel to oneself"),
        }
    }

    /// The receiving end of the channel from `from`.
    pub fn rx(&self, from: u32, class: Class) -> Rx<'_> {
        match &self.links[from as usize] {
            Link::Shm(peer) => Rx::Shm {
                peer,
                me: self.rank as usize,
                from,
                class,
            },
            Link::Tcp(link) => Rx::Tcp { link, class },
            Link::Me => panic!("a channel from oneself"),
        }
    }

    /// How this rank waits until `deadline`.
    pub fn waiter(&self, deadline: Option<Instant>) -> Waiter<'_> {
        Waiter {
            bell: &self.own.header().bell.0,
            shared: &self.shared,
            patience: self.patience,
            deadline,
        }
    }

    /// Tells the other ranks that this one's operations failed.
    pub fn abort_others(&self, msg: &str) {
        self.watch.abort(msg);
    }

    /// Leaves: says goodbye, closes the links and stops their threads.
    pub fn close(mut self) {
        self.watch.close();
        for l in &self.links {
            if let Link::Tcp(t) = l {
                t.close();
            }
        }
    }
}

fn start(
    s: std::net::TcpStream,
    peer: u32,
    layout: &Layout,
    own: &Arc<Region>,
    shared: &Arc<Shared>,
) -> R<Arc<TcpLink>> {
    TcpLink::start(s, peer, layout.slot, Arc::clone(own), Arc::clone(shared)).map_err(|e| Fail {
        code: HCCL_E_SYSCALL,
        msg: format!("cannot start the link to rank {peer}: {e}"),
    })
}
