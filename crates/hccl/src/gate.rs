//! The process-wide gate between an open [`group`](crate::group) and every other call HCCL
//! would capture into it (initialisations, destroys, collectives, sends and receives).
//!
//! HCCL counts group depth per process in some versions and per thread in others. Where it is
//! per process, a collective another thread issues while a group is open would be captured and
//! run at the group's end, after that thread's scope had released the buffers. So while a group
//! is open the other threads' capturable calls wait here, and a group waits for the calls in
//! progress to return. The thread that opened the group may issue only the group's own calls.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

#[derive(Debug)]
struct State {
    /// Capturable calls in progress.
    calls: usize,
    /// Whether a group is open.
    group: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    calls: 0,
    group: false,
});
static CHANGED: Condvar = Condvar::new();

thread_local! {
    static IN_GROUP: Cell<bool> = const { Cell::new(false) };
}

fn state() -> MutexGuard<'static, State> {
    // The state is two counters updated in single statements: a panic cannot leave it torn.
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wait(s: MutexGuard<'static, State>) -> MutexGuard<'static, State> {
    CHANGED.wait(s).unwrap_or_else(PoisonError::into_inner)
}

/// Whether this thread has a group open.
pub(crate) fn in_group() -> bool {
    IN_GROUP.with(Cell::get)
}

/// One capturable call in progress; dropping it lets a waiting group open.
#[derive(Debug)]
pub(crate) struct CallGuard(());

/// Admits one capturable call of `api`: refused on the thread that has a group open, and
/// waits while another thread has one open.
pub(crate) fn call(api: &'static str) -> Result<CallGuard> {
    if in_group() {
        return Err(Error::argument(
            api,
            "this thread has an hccl::group open: inside it, issue collectives, sends and \
             receives through Group::on, and create or destroy communicators outside it",
        ));
    }
    let mut s = state();
    while s.group {
        s = wait(s);
    }
    s.calls += 1;
    Ok(CallGuard(()))
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut s = state();
        s.calls -= 1;
        if s.calls == 0 {
            CHANGED.notify_all();
        }
    }
}

/// The open group of this thread; dropping it closes the gate's side of it.
#[derive(Debug)]
pub(crate) struct GroupGuard(());

/// Opens the gate for a group on this thread: refused when this thread already has one (groups
/// do not nest: the inner one's end would run nothing), else waits until no other group is open
/// and no capturable call is in progress.
pub(crate) fn open_group() -> Result<GroupGuard> {
    if in_group() {
        return Err(Error::argument(
            "hccl::group",
            "groups do not nest: this thread already has one open",
        ));
    }
    let mut s = state();
    while s.group || s.calls > 0 {
        s = wait(s);
    }
    s.group = true;
    IN_GROUP.with(|g| g.set(true));
    Ok(GroupGuard(()))
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        IN_GROUP.with(|g| g.set(false));
        state().group = false;
        CHANGED.notify_all();
    }
}
