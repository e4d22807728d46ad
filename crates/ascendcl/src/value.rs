//! Stream-ordered writes of, and waits on, 64-bit words of device memory (`aclrtValueWrite`,
//! `aclrtValueWait`), as [`Scope`] operations, and [`DeviceWord`], a word that several streams
//! signal each other through.
//!
//! Both calls touch device memory when the stream reaches them, after the call returned, so
//! they are scope operations: the memory is borrowed until the scope has waited for its stream.
//! A write needs the word exclusively (like any destination), a wait reads it (like any
//! source) — except for a [`DeviceWord`], whose only device accesses are these atomic word
//! operations, so that any number of scopes, on any streams and threads, may write and wait on
//! it at once, like threads sharing an `AtomicU64`.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, MallocPolicy};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::scope::{AsyncDest, AsyncSource, Scope};
use ascendcl_sys as sys;
use std::ffi::c_void;

raw_enum! {
    /// When a [`Scope::wait_value`] is satisfied: a comparison of the word in device memory
    /// with the given value (`ACL_STREAM_WAIT_VALUE_*`).
    pub enum ValueCompare: u32 {
        /// `ACL_STREAM_WAIT_VALUE_GEQ`: `word >= value`, counted with wrap-around (the word is
        /// at most half the range past the value).
        Geq = sys::ACL_STREAM_WAIT_VALUE_GEQ,
        /// `ACL_STREAM_WAIT_VALUE_EQ`: `word == value`.
        Eq = sys::ACL_STREAM_WAIT_VALUE_EQ,
        /// `ACL_STREAM_WAIT_VALUE_AND`: `word & value != 0`.
        And = sys::ACL_STREAM_WAIT_VALUE_AND,
        /// `ACL_STREAM_WAIT_VALUE_NOR`: `!(word | value) != 0`.
        Nor = sys::ACL_STREAM_WAIT_VALUE_NOR,
    }
}

/// The one word a value operation touches: a region of exactly one `u64` in device memory.
fn word_address(api: &'static str, region: crate::RawRegion<u64>) -> Result<*mut c_void> {
    if region.location().device().is_none() {
        return Err(Error::argument(api, "the word must be in device memory"));
    }
    if region.len() != 1 {
        return Err(Error::argument(
            api,
            format!(
                "the region must hold exactly one u64 word, not {}",
                region.len()
            ),
        ));
    }
    Ok(region.ptr().cast())
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues writing `value` into a one-word region of device memory when the stream reaches
    /// it (`aclrtValueWrite`). The region is a one-element slice or claimed region of a
    /// `u64` device buffer; another length, or host memory, is an [`Error::Argument`].
    pub fn write_value<D: AsyncDest<'scope, Elem = u64>>(
        &self,
        mut dst: D,
        value: u64,
    ) -> Result<()> {
        let r = dst.region();
        let p = word_address("aclrtValueWrite", r)?;
        self.enqueue_as("aclrtValueWrite", &[r.write()], |st| {
            // SAFETY: the word is device memory borrowed for 'scope, and the scope waits for
            // the stream before 'scope ends; flag 0 is the only defined one.
            unsafe { raw::aclrtValueWrite(p, value, 0, st.as_raw()) }
        })
    }

    /// Makes the stream wait, when it reaches this point, until the word in device memory
    /// satisfies `compare` with `value` (`aclrtValueWait`); later work of the stream waits too.
    /// The scope ends only after the wait is satisfied (or the stream aborted).
    pub fn wait_value<S: AsyncSource<'scope, Elem = u64>>(
        &self,
        src: S,
        value: u64,
        compare: ValueCompare,
    ) -> Result<()> {
        let r = src.region();
        let p = word_address("aclrtValueWait", r)?;
        self.enqueue_as("aclrtValueWait", &[r.read()], |st| {
            // SAFETY: the word is device memory borrowed for 'scope (read only), and the scope
            // waits for the stream before 'scope ends.
            unsafe { raw::aclrtValueWait(p, value, compare.into(), st.as_raw()) }
        })
    }

    /// [`Scope::write_value`] on a [`DeviceWord`], which other scopes may use at the same time.
    pub fn write_word(&self, word: &'scope DeviceWord, value: u64) -> Result<()> {
        self.stream().make_current()?;
        // SAFETY: the word's memory lives while it is borrowed for 'scope, and the scope waits
        // for the stream before 'scope ends; its device accesses are all atomic word operations.
        unsafe { raw::aclrtValueWrite(word.ptr(), value, 0, self.as_raw()) }
    }

    /// [`Scope::wait_value`] on a [`DeviceWord`], which other scopes may write at the same time.
    pub fn wait_word(
        &self,
        word: &'scope DeviceWord,
        value: u64,
        compare: ValueCompare,
    ) -> Result<()> {
        self.stream().make_current()?;
        // SAFETY: as for `write_word`.
        unsafe { raw::aclrtValueWait(word.ptr(), value, compare.into(), self.as_raw()) }
    }
}

/// One 64-bit word of device memory for streams to signal each other through
/// ([`Scope::write_word`], [`Scope::wait_word`]).
///
/// Shared (`&DeviceWord`, `Send + Sync`) by any number of scopes on any streams and threads,
/// like an `AtomicU64`: every device access to it is an atomic word operation, so concurrent
/// writes and waits are its purpose, not a race. The memory stays allocated while a scope
/// borrows it. [`DeviceWord::get`] and [`DeviceWord::set`] read and write it from the host
/// (synchronous copies).
#[derive(Debug)]
pub struct DeviceWord {
    buf: DeviceBuffer<u64>,
    /// The word's address, taken once (the buffer never moves its memory).
    addr: usize,
}

impl DeviceWord {
    /// Allocates a word on `device`, holding `initial`.
    pub fn new(device: &Device, initial: u64) -> Result<DeviceWord> {
        let mut buf = DeviceBuffer::from_slice(device, &[initial], MallocPolicy::NormalOnly)?;
        let addr = buf.as_mut_ptr() as usize;
        Ok(DeviceWord { buf, addr })
    }

    fn ptr(&self) -> *mut c_void {
        self.addr as *mut c_void
    }

    /// Reads the word (a synchronous copy to the host, `aclrtMemcpy`).
    pub fn get(&self) -> Result<u64> {
        let mut v = [0u64];
        self.buf.copy_to_host(&mut v)?;
        Ok(v[0])
    }

    /// Writes the word from the host (`aclrtMemcpy`); a stream waiting on it sees the new value.
    pub fn set(&self, value: u64) -> Result<()> {
        self.buf.device().ensure_current()?;
        let mut one = [value];
        // SAFETY: a synchronous 8-byte copy into the word; the device accesses it only with
        // atomic word operations, so a concurrent one sees the old or the new value.
        unsafe {
            raw::aclrtMemcpy(
                self.ptr(),
                8,
                one.as_mut_ptr().cast(),
                8,
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }
    }

    /// The device the word lives on.
    pub fn device_id(&self) -> i32 {
        self.buf.device_id()
    }

    /// The word's device address, for display and FFI (the memory never moves while the word
    /// exists).
    pub fn as_ptr(&self) -> *const u64 {
        self.addr as *const u64
    }

    /// Frees the word (`aclrtFree`); on failure it comes back with the error.
    pub fn free(self) -> crate::ReleaseResult<(), Self> {
        let addr = self.addr;
        self.buf.free().map_err(|e| {
            let (error, buf) = e.into_parts();
            crate::ReleaseError::new(error, DeviceWord { buf, addr })
        })
    }
}
