//! Profiling: scoped ranges and marks in the profiler's timeline (msproftx, `aclprofRangeStart` /
//! `aclprofRangeStop`, `aclprofMark`, `aclprofMarkEx`), and a collection session
//! ([`Session`]: `aclprofInit` … `aclprofStart` … `aclprofStop`, `aclprofFinalize`).
//!
//! On CANN the ranges and marks appear in msprof's timeline; on the emulator in its trace (a
//! Chrome trace / Perfetto JSON file written by [`Session::stop`], or for a whole program by
//! `ASCENDCL_EMU_TRACE=<file>`), next to every stream task. Outside a collection (no started
//! session, no tool attached) a range or a mark records nothing and is not an error, as with
//! `mstx`: instrumented code runs the same with profiling off.
//!
//! ```
//! use ascendcl::{Runtime, profile};
//!
//! let rt = Runtime::new()?;
//! {
//!     let _step = profile::range(&rt, "step")?; // ends when dropped
//!     profile::mark(&rt, "inputs ready")?;
//! }
//! # Ok::<(), ascendcl::Error>(())
//! ```

use crate::{AclError, Error, Result, Runtime, Stream, raw, sys};
use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};

/// Whether `r` failed only because no collection is running (100043): a range or mark outside
/// one records nothing.
fn outside_collection<T>(r: Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code() == Some(AclError::PROF_NOT_RUN) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A stamp carrying `msg` (`aclprofCreateStamp`, `aclprofSetStampTraceMessage`), destroyed when
/// dropped.
struct Stamp(*mut c_void);

impl Stamp {
    fn new(msg: &str) -> Result<Stamp> {
        // SAFETY: no arguments; the stamp returned (or NULL) is ours.
        let p = unsafe { raw::aclprofCreateStamp() };
        if p.is_null() {
            return Err(crate::error::failure(
                "aclprofCreateStamp",
                sys::ACL_ERROR_PROFILING_FAILURE as sys::aclError,
            ));
        }
        let stamp = Stamp(p);
        let len = u32::try_from(msg.len()).map_err(|_| {
            Error::argument("aclprofSetStampTraceMessage", "the message is too long")
        })?;
        // SAFETY: a live stamp and a message valid for `len` bytes.
        unsafe { raw::aclprofSetStampTraceMessage(stamp.0, msg.as_ptr().cast(), len) }?;
        Ok(stamp)
    }
}

impl Drop for Stamp {
    fn drop(&mut self) {
        // SAFETY: a stamp this value created and nothing else destroys.
        unsafe { raw::aclprofDestroyStamp(self.0) };
    }
}

/// A range of the profiler's timeline, from [`range`] until it is dropped or [`Range::end`]ed.
/// It may end on another thread than the one that started it.
#[derive(Debug)]
#[must_use = "a range ends when it is dropped: bind it (`let _r = profile::range(..)?`)"]
pub struct Range {
    /// The range's id and its stamp (as an address), when a collection recorded its start.
    open: Option<(u32, usize)>,
    _rt: Runtime,
}

/// Starts a range named `name` (`aclprofCreateStamp`, `aclprofSetStampTraceMessage`,
/// `aclprofRangeStart`). Outside a collection it records nothing ([`Range::is_recording`] is
/// false).
pub fn range(rt: &Runtime, name: &str) -> Result<Range> {
    let stamp = Stamp::new(name)?;
    let mut id = 0u32;
    // SAFETY: a live stamp and a valid out-pointer.
    let started = outside_collection(unsafe { raw::aclprofRangeStart(stamp.0, &mut id) })?;
    let open = started.map(|()| {
        let p = stamp.0 as usize;
        // The stamp lives until the range stops.
        std::mem::forget(stamp);
        (id, p)
    });
    Ok(Range {
        open,
        _rt: rt.clone(),
    })
}

impl Range {
    /// Whether a collection recorded the range's start (the end will be recorded too).
    pub fn is_recording(&self) -> bool {
        self.open.is_some()
    }

    /// Ends the range now (`aclprofRangeStop`), reporting a failure; dropping it does the same
    /// and keeps a failure for [`take_drop_errors`](crate::take_drop_errors).
    pub fn end(mut self) -> Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> Result<()> {
        let Some((id, stamp)) = self.open.take() else {
            return Ok(());
        };
        let stamp = Stamp(stamp as *mut c_void);
        // SAFETY: a plain id; the stamp is destroyed after the stop, when `stamp` drops.
        let r = unsafe { raw::aclprofRangeStop(id) };
        drop(stamp);
        r
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        crate::drop_errors::report(self.stop());
    }
}

/// Puts an instant named `msg` in the timeline (`aclprofMark`); outside a collection it records
/// nothing. Returns whether it was recorded.
pub fn mark(_rt: &Runtime, msg: &str) -> Result<bool> {
    let stamp = Stamp::new(msg)?;
    // SAFETY: a live stamp.
    Ok(outside_collection(unsafe { raw::aclprofMark(stamp.0) })?.is_some())
}

/// Puts a mark named `msg` both on the host and as a task of `stream`, where the stream's work
/// reaches it (`aclprofMarkEx`; at most 127 bytes). Returns whether it was recorded.
pub fn mark_on(stream: &Stream, msg: &str) -> Result<bool> {
    stream.make_current()?;
    // SAFETY: a message valid for its length and a live stream.
    let r = unsafe { raw::aclprofMarkEx(msg.as_ptr().cast(), msg.len(), stream.as_raw()) };
    Ok(outside_collection(r)?.is_some())
}

/// A collection: from [`Session::start`] to [`Session::stop`], the profiler records the given
/// devices' tasks and the ranges and marks of every thread (`ACL_PROF_TASK_TIME`,
/// `ACL_PROF_MSPROFTX`), and writes them under the session's directory. One session runs at a
/// time in a process.
#[derive(Debug)]
pub struct Session {
    /// The configuration's address (0 once the session ended).
    config: usize,
    dir: PathBuf,
    _rt: Runtime,
}

impl Session {
    /// Starts a collection of `devices` into the directory `dir` (made when missing):
    /// `aclprofInit`, `aclprofCreateConfig`, `aclprofStart`. A second session while one runs is
    /// an error (100002 or 100042).
    pub fn start(rt: &Runtime, dir: &Path, devices: &[u32]) -> Result<Session> {
        let path = dir
            .to_str()
            .ok_or_else(|| Error::argument("aclprofInit", "the directory is not valid UTF-8"))?;
        let c = CString::new(path)
            .map_err(|_| Error::argument("aclprofInit", "the directory contains a NUL byte"))?;
        let n = u32::try_from(devices.len())
            .map_err(|_| Error::argument("aclprofCreateConfig", "too many devices"))?;
        // SAFETY: a string valid for its length.
        unsafe { raw::aclprofInit(c.as_ptr(), path.len()) }?;
        let mut ids = devices.to_vec();
        let flags = u64::from(sys::ACL_PROF_TASK_TIME | sys::ACL_PROF_MSPROFTX);
        // SAFETY: a list valid for `n` reads (NULL when empty), no AI-core events.
        let config = unsafe {
            raw::aclprofCreateConfig(
                if n == 0 {
                    std::ptr::null_mut()
                } else {
                    ids.as_mut_ptr()
                },
                n,
                sys::ACL_AICORE_NONE,
                std::ptr::null(),
                flags,
            )
        };
        if config.is_null() {
            let e = crate::error::failure("aclprofCreateConfig", sys::ACL_ERROR_INVALID_PARAM);
            // SAFETY: pairs the aclprofInit above.
            let _ = unsafe { raw::aclprofFinalize() };
            return Err(e);
        }
        // SAFETY: the configuration just created.
        if let Err(e) = unsafe { raw::aclprofStart(config) } {
            // SAFETY: the configuration, and the init above, are ours to undo.
            let _ = unsafe { raw::aclprofDestroyConfig(config) };
            // SAFETY: as above.
            let _ = unsafe { raw::aclprofFinalize() };
            return Err(e);
        }
        Ok(Session {
            config: config as usize,
            dir: dir.to_path_buf(),
            _rt: rt.clone(),
        })
    }

    /// The directory the collection is written under.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Ends the collection and writes it (`aclprofStop`, `aclprofDestroyConfig`,
    /// `aclprofFinalize`); the first failure is returned, every step is still taken.
    pub fn stop(mut self) -> Result<()> {
        self.end()
    }

    fn end(&mut self) -> Result<()> {
        if self.config == 0 {
            return Ok(());
        }
        let config = std::mem::replace(&mut self.config, 0) as *const sys::aclprofConfig;
        // SAFETY: the configuration the session was started with, stopped and destroyed once.
        let stop = unsafe { raw::aclprofStop(config) };
        // SAFETY: as above.
        let destroy = unsafe { raw::aclprofDestroyConfig(config) };
        // SAFETY: pairs the session's aclprofInit.
        let finalize = unsafe { raw::aclprofFinalize() };
        stop.and(destroy).and(finalize)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        crate::drop_errors::report(self.end());
    }
}
