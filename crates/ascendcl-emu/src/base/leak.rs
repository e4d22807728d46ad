//! Leak reports: what was still alive when a device was released or the runtime finalized.

use crate::base::lock::{Mutex, Rank};
use std::fmt;

/// Counts of resources alive at one moment, for one device or the whole process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeakReport {
    /// The device, or `None` for the whole process.
    pub device: Option<i32>,
    /// Live device allocations.
    pub allocations: usize,
    /// Their total size in bytes (as requested).
    pub allocation_bytes: u64,
    /// Live pinned host allocations (`aclrtMallocHost`); process-wide reports only.
    pub host_allocations: usize,
    /// Live host registrations (`aclrtHostRegister`); process-wide reports only.
    pub host_registrations: usize,
    /// Live streams created with `aclrtCreateStream*` (default streams are not counted).
    pub streams: usize,
    /// Live events.
    pub events: usize,
    /// Live contexts created with `aclrtCreateContext` (default contexts are not counted).
    pub contexts: usize,
}

impl LeakReport {
    /// Whether nothing was alive.
    pub fn is_clean(&self) -> bool {
        self.allocations == 0
            && self.host_allocations == 0
            && self.host_registrations == 0
            && self.streams == 0
            && self.events == 0
            && self.contexts == 0
    }
}

impl fmt::Display for LeakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.device {
            Some(d) => write!(f, "device {d}: ")?,
            None => write!(f, "process: ")?,
        }
        write!(
            f,
            "{} device allocation(s) ({} bytes), {} pinned host allocation(s), {} host \
             registration(s), {} stream(s), {} event(s), {} context(s) still alive",
            self.allocations,
            self.allocation_bytes,
            self.host_allocations,
            self.host_registrations,
            self.streams,
            self.events,
            self.contexts
        )
    }
}

static REPORTS: Mutex<Vec<LeakReport>> = Mutex::new(Rank::Leaks, Vec::new());

/// Keeps a report made at a release, and prints it when `ASCENDCL_EMU_LEAK_REPORT=1`.
pub(crate) fn keep(r: LeakReport, when: &str) {
    if crate::base::config::with(|c| c.leak_report) {
        eprintln!("ascendcl-emu leak report at {when}: {r}");
    }
    let mut v = REPORTS.lock();
    if v.len() >= 256 {
        v.remove(0);
    }
    v.push(r);
}

/// The reports made when devices were released (`aclrtResetDevice*`) and at `aclFinalize`, oldest
/// first (the last 256).
pub fn release_reports() -> Vec<LeakReport> {
    REPORTS.lock().clone()
}
