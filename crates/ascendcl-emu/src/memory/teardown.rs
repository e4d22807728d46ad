//! What the rest of the runtime asks of the allocation table without naming the memory concept:
//! the hooks of a device release (its memory goes, after its streams stopped), of finalize (pinned
//! and registered host memory goes) and of the live counts, and the stream engine's check that a
//! queued task's memory is still allocated. Registered on the table's first use.

use super::table::{Side, read, write};
use crate::base::hooks::{Hooks, Phase, Registration, Release};
use crate::base::leak::LeakReport;
use std::sync::Once;

static HOOKS: Registration = Registration::new(Hooks {
    name: "memory",
    device_released: Some((Phase::AfterStreams, device_released)),
    finalized: Some(finalized),
    live: Some(live),
    ..Hooks::NONE
});

static ONCE: Once = Once::new();

/// Registers the hooks and the engine's check, once.
#[inline]
pub(super) fn ensure() {
    if !ONCE.is_completed() {
        ONCE.call_once(|| {
            HOOKS.ensure();
            crate::engine::work::set_memory_check(first_gone);
        });
    }
}

/// The first side whose allocation is no longer live.
fn first_gone(sides: &[Side]) -> Option<Side> {
    let t = read();
    sides.iter().copied().find(|s| !t.still_live(*s))
}

/// Only this incarnation's memory goes: the device may already have been set again.
fn device_released(r: &Release, report: &mut LeakReport) {
    let (allocations, bytes) = write().release_device(r.device, r.epoch);
    report.allocations += allocations;
    report.allocation_bytes += bytes;
}

fn finalized(report: &mut LeakReport) {
    let (pinned, registered) = write().release_host();
    report.host_allocations += pinned;
    report.host_registrations += registered;
}

fn live(device: Option<i32>, report: &mut LeakReport) {
    let (allocations, bytes, pinned, registered) = read().counts(device);
    report.allocations += allocations;
    report.allocation_bytes += bytes;
    if device.is_none() {
        report.host_allocations += pinned;
        report.host_registrations += registered;
    }
}
