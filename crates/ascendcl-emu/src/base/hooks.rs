//! What a concept does when the runtime creates a stream, destroys one, releases a device or is
//! finalized: [`Hooks`] each concept registers ([`Registration::ensure`]) the first time it keeps
//! state those events must tear down, so that the code that releases a device or destroys a stream
//! names no concept. Hooks run with no lock of the emulator held.

use super::leak::LeakReport;
use super::lock::{Rank, RwLock};
use std::sync::Once;

/// A device being released.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Release {
    /// The device.
    pub device: i32,
    /// Its incarnation (a device set again after the release is a new one).
    pub epoch: u64,
}

/// When a device-release hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Before the device's streams are closed: their queued work has yet to run.
    BeforeStreams,
    /// After every stream of the device was closed: nothing runs on the device any more.
    AfterStreams,
}

/// A device-release hook: what it tears down, counted in the report.
pub(crate) type DeviceHook = fn(&Release, &mut LeakReport);

/// One concept's hooks.
#[derive(Debug)]
pub(crate) struct Hooks {
    /// The concept, for messages.
    pub name: &'static str,
    /// A device is released: what the concept kept for it goes (counted in the report).
    pub device_released: Option<(Phase, DeviceHook)>,
    /// A stream was created (default streams included), on the creating thread.
    pub stream_created: Option<fn(usize)>,
    /// A stream is about to be destroyed (default streams included): told first, before any
    /// concept forgets what it kept for the stream (the stream state callbacks).
    pub stream_destroying: Option<fn(usize)>,
    /// A stream is destroyed: what the concept kept for it goes (before its queue closes).
    pub stream_destroyed: Option<fn(usize)>,
    /// The runtime is finalized, after every device was released.
    pub finalized: Option<fn(&mut LeakReport)>,
    /// Counts what is alive now, for one device or (None) the whole process.
    pub live: Option<fn(Option<i32>, &mut LeakReport)>,
}

impl Hooks {
    /// No hooks (fill in what the concept needs).
    pub(crate) const NONE: Hooks = Hooks {
        name: "",
        device_released: None,
        stream_created: None,
        stream_destroying: None,
        stream_destroyed: None,
        finalized: None,
        live: None,
    };
}

/// A concept's hooks and whether they are registered.
#[derive(Debug)]
pub(crate) struct Registration {
    once: Once,
    hooks: Hooks,
}

static HOOKS: RwLock<Vec<&'static Hooks>> = RwLock::new(Rank::Hooks, Vec::new());

impl Registration {
    /// A registration of `hooks`, not yet made.
    pub(crate) const fn new(hooks: Hooks) -> Registration {
        Registration {
            once: Once::new(),
            hooks,
        }
    }

    /// Registers the hooks, once; a concept calls it before it first keeps state they tear down.
    #[inline]
    pub(crate) fn ensure(&'static self) {
        if !self.once.is_completed() {
            self.once.call_once(|| HOOKS.write().push(&self.hooks));
        }
    }
}

/// The registered hooks (a copy: they run without the lock).
fn all() -> Vec<&'static Hooks> {
    HOOKS.read().clone()
}

/// Runs the device-release hooks of `phase`.
pub(crate) fn device_released(r: &Release, phase: Phase, report: &mut LeakReport) {
    for h in all() {
        if let Some((p, f)) = h.device_released
            && p == phase
        {
            f(r, report);
        }
    }
}

/// Runs the stream-created hooks.
pub(crate) fn stream_created(stream: usize) {
    for h in all() {
        if let Some(f) = h.stream_created {
            f(stream);
        }
    }
}

/// Runs the stream-destroying hooks (the stream is still live).
pub(crate) fn stream_destroying(stream: usize) {
    for h in all() {
        if let Some(f) = h.stream_destroying {
            f(stream);
        }
    }
}

/// Runs the stream-destroyed hooks (the stream is no longer live).
pub(crate) fn stream_destroyed(stream: usize) {
    for h in all() {
        if let Some(f) = h.stream_destroyed {
            f(stream);
        }
    }
}

/// Runs the finalize hooks.
pub(crate) fn finalized(report: &mut LeakReport) {
    for h in all() {
        if let Some(f) = h.finalized {
            f(report);
        }
    }
}

/// Counts what is alive now through the hooks.
pub(crate) fn live(device: Option<i32>, report: &mut LeakReport) {
    for h in all() {
        if let Some(f) = h.live {
            f(device, report);
        }
    }
}

/// The names of the registered hooks, in registration order (for tests and messages).
pub(crate) fn registered() -> Vec<&'static str> {
    all().iter().map(|h| h.name).collect()
}
