//! How bytes move between the ranks of a communicator: each rank's shared region (its doorbell,
//! the control words and slots of the channels it sends on, its one-shot buffers), channels
//! between two ranks with a window of [`region::SLOTS`] chunks — through the sender's region for
//! ranks of one server, over TCP for ranks of different servers — and how a rank waits.

pub(crate) mod bell;
pub(crate) mod channel;
mod futex;
pub(crate) mod region;
pub(crate) mod tcp;

use bell::{Bell, Interrupt, Patience};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

/// What a rank's watchers (the rendezvous connection, the TCP readers) learn about the
/// communicator while operations run.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    aborted: AtomicBool,
    reason: Mutex<Option<String>>,
    /// What is known about peers that went away, for the messages of operations that wait.
    notes: Mutex<Vec<String>>,
    /// `HcclGetCommAsyncError`'s value.
    pub async_error: AtomicU32,
}

impl Shared {
    /// Fails every operation of the communicator from now on with `why`.
    pub fn abort(&self, why: String) {
        let mut r = crate::sync::lock(&self.reason);
        if r.is_none() {
            *r = Some(why);
        }
        self.aborted.store(true, Ordering::Release);
    }

    pub fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    pub fn reason(&self) -> Option<String> {
        crate::sync::lock(&self.reason).clone()
    }

    /// Remembers what happened to a peer.
    pub fn note(&self, what: String) {
        let mut n = crate::sync::lock(&self.notes);
        if !n.contains(&what) {
            n.push(what);
        }
    }

    pub fn notes(&self) -> Vec<String> {
        crate::sync::lock(&self.notes).clone()
    }

    /// Records the first asynchronous error.
    pub fn set_async_error(&self, code: hccl_sys::HcclResult) {
        let _ = self.async_error.compare_exchange(
            hccl_sys::HCCL_SUCCESS.0,
            code.0,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// Why a wait of an operation ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The execution timeout passed.
    Deadline,
    /// The communicator was aborted (by this rank or another).
    Aborted,
    /// A chunk's tag or length was not what this rank expected: the ranks issued different
    /// operations.
    /// (The sender's and this rank's tag and transfer length.)
    Mismatch {
        from: u32,
        theirs: (crate::wire::Tag, u64),
        mine: (crate::wire::Tag, u64),
    },
    /// This rank's own buffer could not be read or written.
    Fault(ascendcl_emu::extension::AclFailure),
}

impl From<Interrupt> for Stop {
    fn from(i: Interrupt) -> Stop {
        match i {
            Interrupt::Deadline => Stop::Deadline,
            Interrupt::Stopped => Stop::Aborted,
        }
    }
}

impl From<ascendcl_emu::extension::AclFailure> for Stop {
    fn from(f: ascendcl_emu::extension::AclFailure) -> Stop {
        Stop::Fault(f)
    }
}

/// How one rank waits during an operation: on its own doorbell, until the operation's deadline,
/// unless the communicator is aborted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waiter<'a> {
    pub bell: &'a Bell,
    pub shared: &'a Shared,
    pub patience: Patience,
    pub deadline: Option<Instant>,
}

impl Waiter<'_> {
    /// Waits until `counter` reaches `target`.
    pub fn until_count(&self, counter: &bell::Counter, target: u32) -> Result<(), Stop> {
        counter
            .wait(target, self.patience, self.deadline, || {
                self.shared.aborted()
            })
            .map_err(Stop::from)
    }

    /// Waits until `ready` gives a value.
    pub fn until<T>(&self, ready: impl FnMut() -> Option<T>) -> Result<T, Stop> {
        self.bell
            .wait(
                self.patience,
                self.deadline,
                || self.shared.aborted(),
                ready,
            )
            .map_err(|i| match i {
                Interrupt::Deadline => Stop::Deadline,
                Interrupt::Stopped => Stop::Aborted,
            })
    }
}
