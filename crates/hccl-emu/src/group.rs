//! `HcclGroupStart` / `HcclGroupEnd`: between them, initialisations, collectives, sends,
//! receives and destroys are captured (before any check, returning success) and run at the
//! outermost end: initialisations each on a thread of its own with the caller's context,
//! collectives in order (then every stream they used is synchronised), the sends and receives
//! of each communicator fused into one batch, destroys last. Failures of captured calls are
//! reported as messages only; the end itself succeeds. A group belongs to the thread that
//! started it.

use crate::error::*;
use ascendcl_emu::extension;
use hccl_sys::*;
use std::cell::RefCell;

type Call = Box<dyn FnOnce() -> R>;
type SendCall = Box<dyn FnOnce() -> R + Send>;

/// A captured send or receive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct P2p {
    pub send: bool,
    pub buf: usize,
    pub count: u64,
    pub dt: HcclDataType,
    pub peer: u32,
    pub comm: usize,
    pub stream: usize,
}

#[derive(Default)]
struct Group {
    depth: u32,
    inits: Vec<(Option<usize>, SendCall)>,
    colls: Vec<(usize, Call)>,
    p2p: Vec<P2p>,
    destroys: Vec<Call>,
}

thread_local! {
    static GROUP: RefCell<Group> = RefCell::new(Group::default());
}

/// Whether the calling thread is inside a group.
pub(crate) fn capturing() -> bool {
    GROUP.with(|g| g.borrow().depth > 0)
}

/// Captures an initialisation with the caller's current context.
pub(crate) fn capture_init(f: impl FnOnce() -> R + Send + 'static) -> R {
    let ctx = extension::current_context().ok();
    GROUP.with(|g| g.borrow_mut().inits.push((ctx, Box::new(f))));
    Ok(())
}

/// Captures a collective issued on `stream`.
pub(crate) fn capture_coll(stream: usize, f: impl FnOnce() -> R + 'static) -> R {
    GROUP.with(|g| g.borrow_mut().colls.push((stream, Box::new(f))));
    Ok(())
}

/// Captures a send or receive.
pub(crate) fn capture_p2p(p: P2p) -> R {
    GROUP.with(|g| g.borrow_mut().p2p.push(p));
    Ok(())
}

/// Captures a destroy.
pub(crate) fn capture_destroy(f: impl FnOnce() -> R + 'static) {
    GROUP.with(|g| g.borrow_mut().destroys.push(Box::new(f)));
}

/// `HcclGroupStart`.
pub(crate) fn start() {
    GROUP.with(|g| g.borrow_mut().depth += 1);
}

fn note(what: &str, r: R) {
    if let Err(e) = r {
        record(&format!("HcclGroupEnd ({what})"), &e);
    }
}

/// `HcclGroupEnd`.
pub(crate) fn end() -> R {
    let taken = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.depth == 0 {
            return Err(Fail {
                code: HCCL_E_NOT_SUPPORT,
                msg: "HcclGroupEnd without HcclGroupStart".to_string(),
            });
        }
        g.depth -= 1;
        if g.depth > 0 {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut *g)))
    })?;
    let Some(g) = taken else {
        return Ok(());
    };
    // Initialisations: one thread each, with the caller's context current.
    let results: Vec<R> = std::thread::scope(|s| {
        let hs: Vec<_> = g
            .inits
            .into_iter()
            .map(|(ctx, f)| {
                s.spawn(move || {
                    if let Some(c) = ctx {
                        extension::set_current_context(c).map_err(runtime)?;
                    }
                    f()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| fail(HCCL_E_INTERNAL, "an initialisation panicked"))
            })
            .collect()
    });
    for r in results {
        note("initialisation", r);
    }
    let mut streams = Vec::new();
    for (stream, f) in g.colls {
        note("collective", f());
        if !streams.contains(&stream) {
            streams.push(stream);
        }
    }
    // Sends and receives: one batch per communicator, on its first stream.
    let mut comms: Vec<usize> = Vec::new();
    for p in &g.p2p {
        if !comms.contains(&p.comm) {
            comms.push(p.comm);
        }
    }
    for c in comms {
        let items: Vec<P2p> = g.p2p.iter().filter(|p| p.comm == c).copied().collect();
        note(
            "send/receive",
            crate::capi::batch(c, items[0].stream, &items),
        );
    }
    for f in g.destroys {
        note("destroy", f());
    }
    for s in streams {
        let r = extension::stream(s)
            .and_then(|s| s.synchronize())
            .map_err(|f| Fail {
                code: HCCL_E_RUNTIME,
                msg: format!("synchronising stream {s:#x}: {f}"),
            });
        note("stream synchronisation", r);
    }
    Ok(())
}
