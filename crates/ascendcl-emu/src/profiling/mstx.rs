//! mstx (`mstx/ms_tools_ext.h`): marks and ranges in the default domain or in named domains.
//! The header's calls go to a tool when one is attached; the emulator is that tool while a
//! collection runs (a started session, or `ASCENDCL_EMU_TRACE`): a mark is an instant (and, with
//! a stream, a marker task of the stream), a range a complete event of the host thread that
//! started it, named `<domain>: <message>` outside the default domain. With nothing collecting,
//! every call does nothing and range starts return 0, as with no tool attached.

use super::log::{self, Entry};
use super::stamps::Marker;
use super::with;
use crate::engine::exception::thread_id;
use crate::engine::stream::Stream;
use std::sync::Arc;
use std::time::Instant;

/// An open range: its name, thread and start.
#[derive(Debug)]
pub(crate) struct Open {
    name: String,
    tid: u32,
    start: Instant,
    /// The domain it was started in (0: the default domain).
    domain: usize,
}

/// The name of `message` in `domain` (0: the default domain); None for a domain that is not
/// live.
fn name(domain: usize, message: &str) -> Option<String> {
    if domain == 0 {
        return Some(message.to_string());
    }
    with(|s| s.domains.get(&domain).map(|d| format!("{d}: {message}")))
}

/// `mstxDomainCreateA`: a domain named `name` (never the default one's handle, 0).
pub(crate) fn create_domain(name: &str) -> usize {
    let h = crate::base::hub::new_handle();
    with(|s| s.domains.insert(h, name.to_string()));
    h
}

/// `mstxDomainDestroy` (an unknown domain is ignored).
pub(crate) fn destroy_domain(h: usize) {
    with(|s| s.domains.remove(&h));
}

/// `mstxMarkA` / `mstxDomainMarkA`.
pub(crate) fn mark(domain: usize, message: &str, stream: Option<Arc<Stream>>) {
    let at = Instant::now();
    if !with(|s| s.collecting()) {
        return;
    }
    let Some(name) = name(domain, message) else {
        return;
    };
    if let Some(st) = stream {
        // A stream being destroyed takes no marker; the host's instant is still recorded.
        let _ = st.enqueue(Marker(name.clone()));
    }
    log::push(Entry::Mark {
        name,
        tid: thread_id(),
        at,
        cat: "mstx",
    });
}

/// `mstxRangeStartA` / `mstxDomainRangeStartA`: the range's id, 0 when nothing collects or the
/// domain is not live.
pub(crate) fn range_start(domain: usize, message: &str) -> u64 {
    let start = Instant::now();
    let Some(name) = name(domain, message) else {
        return 0;
    };
    with(|s| {
        if !s.collecting() {
            return 0;
        }
        s.next_mstx = s.next_mstx.wrapping_add(1).max(1);
        let id = s.next_mstx;
        s.mstx_ranges.insert(
            id,
            Open {
                name,
                tid: thread_id(),
                start,
                domain,
            },
        );
        id
    })
}

/// `mstxRangeEnd` / `mstxDomainRangeEnd`: ends range `id` of `domain` (an unknown id, or one
/// of another domain, is ignored).
pub(crate) fn range_end(domain: usize, id: u64) {
    let end = Instant::now();
    let open = with(|s| match s.mstx_ranges.get(&id) {
        Some(o) if o.domain == domain => s.mstx_ranges.remove(&id),
        _ => None,
    });
    if let Some(o) = open {
        log::push(Entry::Range {
            name: o.name,
            tid: o.tid,
            start: o.start,
            end,
            kind: "mstx",
        });
    }
}
