//! Kernel argument lists (`aclrtKernelArgs*`): the parameters of one launch, appended in order,
//! each at the next multiple of 8 bytes (the AI Core layout; host-mode kernels have no system
//! parameters), placeholders whose data the launch copies to the device, and the sealing of the
//! list before a launch.
//!
//! As in the runtime, the state of a list lives in the handle's memory: the per-thread list of
//! `aclrtKernelArgsInit` (one per thread: the next `Init` on the thread starts it again) or
//! memory of the caller (`aclrtKernelArgsInitByUserMem`, with the argument buffer the caller
//! gives). The addresses of the lists made are kept, so that a value that is not one is refused
//! before it is read; a header with a magic word and the handle's own address detects memory
//! that no longer holds a list. A parameter handle is the address of its record in the list.

use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use crate::kernel::binary::{self, Function};
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

/// Parameters of a list made by `aclrtKernelArgsInit`.
pub(crate) const MAX_PARAMS: u32 = 128;
/// Argument bytes of a list made by `aclrtKernelArgsInit`.
pub(crate) const MAX_ARGS_BYTES: usize = 64 << 10;
/// Bytes `aclrtKernelArgsGetMemSize` reserves for system parameters (8 slots of 8 bytes).
const SYSTEM_RESERVE: usize = 8 * 8;

const MAGIC: u64 = 0x4b41_5247_5331_4c53; // "KARGS1LS"

/// The list, at the start of the handle's memory.
#[repr(C)]
#[derive(Debug)]
struct Header {
    magic: u64,
    /// The handle (this header's address).
    this: usize,
    /// The function handle it was made for.
    func: usize,
    buffer: usize,
    capacity: usize,
    /// Bytes used: the end of the last parameter or placeholder buffer.
    args_size: usize,
    max_params: u32,
    count: u32,
    /// A placeholder buffer was taken: no more parameters.
    got_buffer: u8,
    finalized: u8,
    /// A parameter was changed since the last `Finalize`.
    updating: u8,
    _reserved: [u8; 5],
}

/// One parameter, after the header; a parameter handle points here.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Para {
    offset: u32,
    size: u32,
    /// Offset of a placeholder's buffer (0: none taken).
    data_offset: u32,
    /// 0 an ordinary parameter, 1 a placeholder.
    placeholder: u32,
}

/// Bytes of handle memory for a list of `params` parameters.
pub(crate) fn handle_bytes(params: u32) -> usize {
    size_of::<Header>() + params as usize * size_of::<Para>()
}

/// `aclrtKernelArgsGetMemSize`: argument bytes for `user` bytes of parameters of `f`.
pub(crate) fn mem_size(f: &Function, user: usize) -> usize {
    user.saturating_add(SYSTEM_RESERVE)
        .saturating_add(8 * f.kernel().params)
}

/// The addresses of the lists made (per-thread lists while their thread lives; lists in user
/// memory from their first initialisation on).
static LISTS: LazyLock<Mutex<HashSet<usize>>> =
    LazyLock::new(|| Mutex::new(Rank::KernelArgs, HashSet::new()));

/// The per-thread list of `aclrtKernelArgsInit`: handle memory and argument buffer.
struct ThreadList {
    handle: Box<[u64]>,
    buffer: Box<[u64]>,
}

impl Drop for ThreadList {
    fn drop(&mut self) {
        LISTS.lock().remove(&(self.handle.as_ptr() as usize));
    }
}

thread_local! {
    static THREAD_LIST: RefCell<Option<ThreadList>> = const { RefCell::new(None) };
}

/// Writes a fresh list into `handle`'s memory.
///
/// # Safety
/// `handle` is valid for writing `handle_bytes(max_params)` bytes, 8-byte aligned; `buffer` for
/// `capacity` bytes.
unsafe fn init_at(handle: usize, f: &Function, buffer: usize, capacity: usize, max_params: u32) {
    let h = Header {
        magic: MAGIC,
        this: handle,
        func: f.handle,
        buffer,
        capacity,
        args_size: 0,
        max_params,
        count: 0,
        got_buffer: 0,
        finalized: 0,
        updating: 0,
        _reserved: [0; 5],
    };
    // SAFETY: the caller's contract.
    unsafe { std::ptr::write(handle as *mut Header, h) };
}

/// `aclrtKernelArgsInit`: the calling thread's list, started again for `f`.
pub(crate) fn init(f: &Function) -> usize {
    THREAD_LIST.with(|l| {
        let mut l = l.borrow_mut();
        let list = l.get_or_insert_with(|| {
            let list = ThreadList {
                handle: vec![0u64; handle_bytes(MAX_PARAMS).div_ceil(8)].into_boxed_slice(),
                buffer: vec![0u64; MAX_ARGS_BYTES / 8].into_boxed_slice(),
            };
            LISTS.lock().insert(list.handle.as_ptr() as usize);
            list
        });
        let h = list.handle.as_mut_ptr() as usize;
        let b = list.buffer.as_mut_ptr() as usize;
        // SAFETY: the thread's own memory, of the sizes written.
        unsafe { init_at(h, f, b, MAX_ARGS_BYTES, MAX_PARAMS) };
        h
    })
}

/// `aclrtKernelArgsInitByUserMem`: a list in the caller's memory, for at most the kernel's own
/// number of parameters.
///
/// # Safety
/// `handle` is valid for writing `aclrtKernelArgsGetHandleMemSize` bytes; `mem` for `size`.
pub(crate) unsafe fn init_by_user_mem(f: &Function, handle: usize, mem: usize, size: usize) -> R {
    if !handle.is_multiple_of(align_of::<Header>()) {
        return fail(
            RT_PARAM_INVALID,
            format!("argsHandle {handle:#x} is not 8-byte aligned"),
        );
    }
    let params = f.kernel().params as u32;
    // SAFETY: the caller's contract.
    unsafe { init_at(handle, f, mem, size, params) };
    LISTS.lock().insert(handle);
    Ok(())
}

/// A list handle, checked.
fn header<'a>(handle: usize) -> R<&'a mut Header> {
    if !handle.is_multiple_of(align_of::<Header>()) || !LISTS.lock().contains(&handle) {
        return fail(
            RT_INVALID_HANDLE,
            format!(
                "argsHandle {handle:#x} is not an argument list (aclrtKernelArgsInit or \
                 aclrtKernelArgsInitByUserMem make one)"
            ),
        );
    }
    // SAFETY: a non-NULL, aligned handle of the C contract: memory of a list the runtime
    // initialised, which holds at least a header.
    let h = unsafe { &mut *(handle as *mut Header) };
    if h.magic != MAGIC || h.this != handle {
        return fail(
            RT_INVALID_HANDLE,
            format!(
                "argsHandle {handle:#x} is not an argument list (aclrtKernelArgsInit or \
                 aclrtKernelArgsInitByUserMem make one)"
            ),
        );
    }
    Ok(h)
}

fn params<'a>(h: &Header) -> &'a mut [Para] {
    // SAFETY: the records follow the header in the handle's memory, `max_params` of them.
    unsafe {
        std::slice::from_raw_parts_mut(
            (h.this + size_of::<Header>()) as *mut Para,
            h.max_params as usize,
        )
    }
}

/// The index of a parameter handle of the list.
fn para_index(h: &Header, p: usize) -> R<usize> {
    let base = h.this + size_of::<Header>();
    let at = p.wrapping_sub(base);
    if p < base
        || !at.is_multiple_of(size_of::<Para>())
        || at / size_of::<Para>() >= h.count as usize
    {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "paramHandle {p:#x} is not a parameter of the argument list {:#x}",
                h.this
            ),
        );
    }
    Ok(at / size_of::<Para>())
}

/// The checks shared by appends: not sealed, no placeholder buffer taken, room for one more.
fn can_append(h: &Header, what: &str) -> R {
    if h.finalized != 0 {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            format!("{what} after aclrtKernelArgsFinalize is not supported"),
        );
    }
    if h.got_buffer != 0 {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            format!(
                "{what} after aclrtKernelArgsGetPlaceHolderBuffer is not supported (placeholder \
                 data goes after every parameter)"
            ),
        );
    }
    if h.count >= h.max_params {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "the argument list holds {} parameter(s) already, its most",
                h.max_params
            ),
        );
    }
    Ok(())
}

/// Reserves `size` bytes at the next multiple of `align`; its offset.
fn reserve(h: &mut Header, size: usize, align: usize, what: &str) -> R<usize> {
    let at = h.args_size.next_multiple_of(align);
    let end = at.checked_add(size).filter(|&e| e <= h.capacity);
    let Some(end) = end else {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{what} of {size} byte(s) at offset {at} overflows the argument buffer of {} bytes",
                h.capacity
            ),
        );
    };
    h.args_size = end;
    Ok(at)
}

/// `aclrtKernelArgsAppend`: copies `size` bytes from `param`; the parameter's handle.
///
/// # Safety
/// `param` is valid for reading `size` bytes.
pub(crate) unsafe fn append(handle: usize, param: *const u8, size: usize) -> R<usize> {
    let h = header(handle)?;
    can_append(h, "appending a parameter")?;
    let at = reserve(h, size, 8, "the parameter")?;
    // SAFETY: `at + size` is within the buffer (reserve), `param` per the contract.
    unsafe { std::ptr::copy_nonoverlapping(param, (h.buffer + at) as *mut u8, size) };
    let i = h.count as usize;
    params(h)[i] = Para {
        offset: at as u32,
        size: size as u32,
        data_offset: 0,
        placeholder: 0,
    };
    h.count += 1;
    Ok(h.this + size_of::<Header>() + i * size_of::<Para>())
}

/// `aclrtKernelArgsAppendPlaceHolder`: an 8-byte pointer slot filled at launch.
pub(crate) fn append_placeholder(handle: usize) -> R<usize> {
    let h = header(handle)?;
    can_append(h, "appending a placeholder")?;
    let at = reserve(h, 8, 8, "the placeholder")?;
    let i = h.count as usize;
    params(h)[i] = Para {
        offset: at as u32,
        size: 8,
        data_offset: 0,
        placeholder: 1,
    };
    h.count += 1;
    Ok(h.this + size_of::<Header>() + i * size_of::<Para>())
}

/// `aclrtKernelArgsGetPlaceHolderBuffer`: `size` bytes of host memory after every parameter,
/// copied to the device at launch, whose device address the launch puts in the slot.
pub(crate) fn placeholder_buffer(handle: usize, p: usize, size: usize) -> R<usize> {
    let h = header(handle)?;
    let i = para_index(h, p)?;
    if params(h)[i].placeholder == 0 {
        return fail(
            RT_PARAM_INVALID,
            format!("paramHandle {p:#x} is an ordinary parameter, not a placeholder"),
        );
    }
    if h.finalized != 0 {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            "taking a placeholder buffer after aclrtKernelArgsFinalize is not supported",
        );
    }
    let at = reserve(h, size, 8, "the placeholder buffer")?;
    h.got_buffer = 1;
    params(h)[i].data_offset = at as u32;
    Ok(h.buffer + at)
}

/// `aclrtKernelArgsParaUpdate`: replaces the bytes of an ordinary parameter (same size); the
/// list must be finalised again before a launch.
///
/// # Safety
/// `param` is valid for reading `size` bytes.
pub(crate) unsafe fn update(handle: usize, p: usize, param: *const u8, size: usize) -> R {
    let h = header(handle)?;
    let i = para_index(h, p)?;
    let rec = params(h)[i];
    if rec.placeholder != 0 {
        return fail(
            RT_PARAM_INVALID,
            format!("paramHandle {p:#x} is a placeholder: its data is in its buffer"),
        );
    }
    if rec.size as usize != size {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "paramSize {size} differs from the parameter's {} byte(s)",
                rec.size
            ),
        );
    }
    // SAFETY: the record lies in the buffer; `param` per the contract.
    unsafe {
        std::ptr::copy_nonoverlapping(param, (h.buffer + rec.offset as usize) as *mut u8, size)
    };
    h.updating = 1;
    Ok(())
}

/// `aclrtKernelArgsFinalize`.
pub(crate) fn finalize(handle: usize) -> R {
    let h = header(handle)?;
    crate::device::context::current_ids()?;
    h.finalized = 1;
    h.updating = 0;
    Ok(())
}

/// What a launch takes from a list: its function and a copy of its bytes with every
/// placeholder slot pointing at the copy of its buffer.
pub(crate) struct Snapshot {
    pub func: Arc<Function>,
    /// 8-byte aligned storage of `len` bytes.
    pub words: Box<[u64]>,
    pub len: usize,
}

/// Checks that the list is ready for a launch of `func` and copies it.
pub(crate) fn snapshot(handle: usize, func: usize) -> R<Snapshot> {
    let h = header(handle)?;
    if h.func != func {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "argsHandle {handle:#x} was made for function {:#x}, not {func:#x}",
                h.func
            ),
        );
    }
    if h.finalized == 0 {
        return fail(
            RT_PARAM_INVALID,
            "the argument list is not finalized (aclrtKernelArgsFinalize)",
        );
    }
    if h.updating != 0 {
        return fail(
            RT_PARAM_INVALID,
            "a parameter was updated after aclrtKernelArgsFinalize: finalize the list again",
        );
    }
    let f = binary::function(h.func)?;
    let mut words = vec![0u64; h.args_size.div_ceil(8).max(1)].into_boxed_slice();
    // SAFETY: `args_size` bytes of the buffer were written by the appends (or are placeholder
    // buffers the caller filled); the copy is at least that long.
    unsafe {
        std::ptr::copy_nonoverlapping(
            h.buffer as *const u8,
            words.as_mut_ptr().cast::<u8>(),
            h.args_size,
        )
    };
    let base = words.as_ptr() as usize;
    for rec in params(h).iter().take(h.count as usize) {
        if rec.placeholder != 0 {
            let addr = (base + rec.data_offset as usize) as u64;
            // SAFETY: the slot lies within the copy (it was reserved in the list).
            unsafe {
                std::ptr::write_unaligned(
                    words
                        .as_mut_ptr()
                        .cast::<u8>()
                        .add(rec.offset as usize)
                        .cast::<u64>(),
                    addr,
                )
            };
        }
    }
    Ok(Snapshot {
        func: f,
        words,
        len: h.args_size,
    })
}
