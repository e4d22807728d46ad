//! The one thing the stream engine knows about what it runs: a unit of [`Work`] — the memory it
//! touches, how it runs, and how it behaves when its stream fails or is torn down. Copies,
//! kernels, models, built-in tasks, notifies, event records and waits, host functions and the
//! work of libraries layered on the runtime each implement it beside their own concept.
//!
//! The memory a unit of work touches is named by [`Side`]s, which the memory concept made when it
//! validated the ranges at submission; before the work runs, the engine asks the memory concept
//! (through the check it registered, [`set_memory_check`]) whether each allocation is still live,
//! and fails the work with 507000 when one was freed meanwhile.

use super::trace::Task;
use crate::base::error::*;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;

/// Where one side of an access lies, as the runtime's location/kind check sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loc {
    /// Pinned or registered host memory.
    Host,
    /// Device memory of a device.
    Device(i32),
    /// Any other (pageable) host memory.
    Unreg,
}

/// One validated side of an access: where it lies and the allocation it lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Side {
    pub loc: Loc,
    /// Start of the allocation the side lies in (0 for unregistered memory).
    pub alloc: usize,
    /// What the memory concept adds to an address of the side to reach it from the emulator's
    /// own code (the distance to the alias of device memory; 0 for host memory).
    pub delta: isize,
}

impl Side {
    /// A side in memory the table knows nothing about (pageable host memory).
    pub(crate) const PAGEABLE: Side = Side {
        loc: Loc::Unreg,
        alloc: 0,
        delta: 0,
    };
}

/// What a unit of work is given when it runs.
#[derive(Debug)]
pub(crate) struct Cx<'a> {
    /// Set while the stream is aborted, stopped or destroyed by force (and, for a model's steps,
    /// while the execution is aborted): a wait gives up at once.
    pub cancel: &'a AtomicBool,
}

/// A unit of stream work.
pub(crate) trait Work: Send + Sync + 'static {
    /// The memory the work touches, validated when it was queued; checked again (still live)
    /// right before it runs.
    fn memory(&self) -> &[Side] {
        &[]
    }

    /// Whether the work waits for something that may never come on its own (an event, a notify,
    /// a value, a host function, a peer of a collective): a drain ([`super::stream::Stream::drain`])
    /// waits neither for it nor for what is queued behind it.
    fn gate(&self) -> bool {
        false
    }

    /// The devices whose memory the work may touch, one bit per device id ([`device_bit`]); by
    /// default those of [`Work::memory`]. A kernel, whose pointers are not known, names its
    /// device.
    fn devices(&self) -> u64 {
        self.memory().iter().fold(0, |m, s| match s.loc {
            Loc::Device(d) => m | device_bit(d),
            _ => m,
        })
    }

    /// Runs the work (on the stream's worker thread, or a model's); its `Err` is the task's
    /// error, reported by the next synchronisation of the stream (and, in STOP mode, the
    /// context's failure).
    fn run(&self, cx: &Cx<'_>) -> R;

    /// The work will not run (its stream was stopped and destroyed, or aborted): whatever waits
    /// for it must not wait forever (an event record completes).
    fn discard(&self) {}

    /// Whether the work still runs after a task of its context failed in STOP mode, when the rest
    /// of the stream is discarded (event records and waits do, so that no waiter hangs).
    fn runs_after_failure(&self) -> bool {
        false
    }

    /// The kind of work (a task group update must keep the kinds of the group's tasks).
    fn kind(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// What the work is, for a trace (asked only while profiling records tasks): by default its
    /// type's name, of kind `task`.
    fn describe(&self) -> Task {
        Task::new(super::trace::short_name(self.kind()), "task")
    }
}

/// The bit of device `d` in [`Work::devices`] (ids past 63 share the last bit).
pub(crate) fn device_bit(d: i32) -> u64 {
    1u64 << d.clamp(0, 63)
}

/// The memory concept's check: the first side whose allocation is no longer live, if any.
type MemoryCheck = fn(&[Side]) -> Option<Side>;

static MEMORY_CHECK: OnceLock<MemoryCheck> = OnceLock::new();

/// Registers the memory concept's liveness check (the first registration wins).
pub(crate) fn set_memory_check(check: MemoryCheck) {
    let _ = MEMORY_CHECK.set(check);
}

/// Runs `work`: its memory is checked first (507000 when an allocation it touches was freed
/// after it was queued: free does not wait for work in flight).
pub(crate) fn run(work: &dyn Work, cx: &Cx<'_>) -> R {
    let memory = work.memory();
    if memory.iter().any(|s| s.loc != Loc::Unreg)
        && let Some(check) = MEMORY_CHECK.get()
        && let Some(gone) = check(memory)
    {
        return fail(
            RT_INTERNAL_ERROR,
            format!(
                "a queued memory task touches the allocation at {:#x}, which was freed before the \
                 task ran (free does not wait for work in flight)",
                gone.alloc
            ),
        );
    }
    work.run(cx)
}
