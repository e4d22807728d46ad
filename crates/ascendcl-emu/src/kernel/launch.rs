//! Kernel launches as stream tasks: the blocks of a launch run in parallel on the kernel thread
//! pool, each calling the kernel's entry with its block index; their printf output is written in
//! block order after the last block; a failed block fails the task with the runtime's code (a
//! vector-core or AI-core exception, or the matching timeout), which the stream reports through
//! its usual failure path (CONTINUE/STOP, the exception callback). The last kernel failure of a
//! device is kept for `aclrtGetErrorVerbose`.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Phase, Registration};
use crate::base::lock::{Mutex, Rank};
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use crate::kernel::binary::{self, Block, Core, Function};
use crate::memory::space::KernelAccess;
use crate::memory::{self, Kind, Side};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// Bytes of the message buffer of each block.
const FAULT_BYTES: usize = 1024;

/// Where a launch's arguments are.
#[derive(Debug)]
pub(crate) enum Args {
    /// A copy taken at launch (`aclrtLaunchKernelWithConfig`): 8-byte aligned storage of `len`
    /// bytes, placeholder buffers included.
    Copied { words: Box<[u64]>, len: usize },
    /// Device memory read when the kernel starts (`aclrtLaunchKernel`).
    Device { addr: usize, len: usize, side: Side },
}

/// One launch.
#[derive(Debug)]
pub(crate) struct Launch {
    pub func: Arc<Function>,
    pub blocks: u32,
    pub args: Args,
    /// The device of the stream.
    pub device: i32,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT[_US]` (None: no limit).
    pub timeout: Option<Duration>,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE`.
    pub engine: Option<Core>,
}

/// What a kernel's global-memory check may use besides the device's allocations.
struct Ctx {
    device: i32,
    /// The launch's copied arguments (placeholder buffers point into them): [start, end).
    args: (usize, usize),
    /// The launch's access to device memory, from its first block to its end.
    access: KernelAccess,
}

/// The state of one block, behind the `runtime` pointer of its [`Block`].
struct BlockRt<'a> {
    ctx: &'a Ctx,
    out: Vec<u8>,
}

/// The end of a block.
#[derive(Debug, Default)]
struct Outcome {
    out: Vec<u8>,
    failed: bool,
    message: String,
    kind: u32,
    core: u32,
    addr: u64,
    bytes: u64,
}

/// `find_memory` of the ABI: the live allocation (or argument copy) holding `p`.
unsafe extern "C" fn find_memory(
    rt: *mut c_void,
    p: *const c_void,
    base: *mut *const c_void,
    bytes: *mut u64,
    writable: *mut u32,
) -> i32 {
    let run = || {
        // SAFETY: the entry passes back the `runtime` pointer of its block record, a live
        // `BlockRt` of `run_block`.
        let rt = unsafe { &*(rt as *const BlockRt<'_>) };
        let a = p as usize;
        let found = if a >= rt.ctx.args.0 && a < rt.ctx.args.1 {
            Some((rt.ctx.args.0, rt.ctx.args.1 - rt.ctx.args.0))
        } else {
            match memory::read().region_of(a) {
                Some((start, size, Kind::Device(d)))
                    if d == rt.ctx.device || crate::device::peer_enabled(rt.ctx.device, d) =>
                {
                    // The kernel is about to touch it: open it for the launch now rather than
                    // on the first fault.
                    rt.ctx.access.open(a);
                    Some((start, size))
                }
                Some((start, size, Kind::Pinned | Kind::Registered)) => Some((start, size)),
                _ => None,
            }
        };
        match found {
            Some((start, size)) => {
                // SAFETY: the entry passes valid out-pointers.
                unsafe {
                    *base = start as *const c_void;
                    *bytes = size as u64;
                    *writable = 1;
                }
                0
            }
            None => 1,
        }
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(1)
}

/// `print` of the ABI: appends to the block's output.
unsafe extern "C" fn print(rt: *mut c_void, data: *const c_char, bytes: u64) {
    let run = || {
        if data.is_null() || bytes == 0 {
            return;
        }
        // SAFETY: as in `find_memory`; the block is run by this thread only.
        let rt = unsafe { &mut *(rt as *mut BlockRt<'_>) };
        // SAFETY: the entry passes `bytes` bytes of its output.
        let s = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes as usize) };
        rt.out.extend_from_slice(s);
    };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
}

fn run_block(f: &Function, ctx: &Ctx, args: &[u8], idx: u32, num: u32) -> Outcome {
    let mut rt = BlockRt {
        ctx,
        out: Vec::new(),
    };
    let mut fault = [0u8; FAULT_BYTES];
    let mut b = Block {
        abi: binary::ABI,
        block_idx: idx,
        block_num: num,
        reserved: 0,
        args: args.as_ptr(),
        args_size: args.len() as u64,
        runtime: (&mut rt as *mut BlockRt<'_>).cast(),
        find_memory,
        print,
        fault: fault.as_mut_ptr().cast(),
        fault_capacity: FAULT_BYTES as u64,
        fault_kind: 0,
        core: 0,
        fault_addr: 0,
        fault_bytes: 0,
    };
    // SAFETY: the entry of a loaded binary (kept loaded by `f`), called with a block record
    // whose pointers live for the call, as the binary ABI states; it runs as device code, with
    // access to device memory at the program's addresses.
    let rc = ctx.access.run(|| unsafe { (f.kernel().entry)(&mut b) });
    let end = fault.iter().position(|&c| c == 0).unwrap_or(FAULT_BYTES);
    Outcome {
        out: rt.out,
        failed: rc != 0,
        message: String::from_utf8_lossy(&fault[..end]).into_owned(),
        kind: b.fault_kind,
        core: b.core,
        addr: b.fault_addr,
        bytes: b.fault_bytes,
    }
}

/// Writes kernel output after the program's: C stdio buffers are flushed first (a C program's
/// own lines), then the output goes through Rust's stdout (captured by the test harness like
/// the program's own prints).
fn emit(out: &[u8]) {
    if out.is_empty() {
        return;
    }
    // SAFETY: fflush(NULL) flushes every C output stream; no precondition.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let text = String::from_utf8_lossy(out);
    let _ = std::panic::catch_unwind(|| {
        print!("{text}");
        let _ = std::io::Write::flush(&mut std::io::stdout());
    });
}

/// The last kernel failure of each device, for `aclrtGetErrorVerbose`.
static DEVICE_ERRORS: LazyLock<Mutex<HashMap<i32, DeviceError>>> =
    LazyLock::new(|| Mutex::new(Rank::DeviceErrors, HashMap::new()));

/// A kernel failure as `aclrtGetErrorVerbose` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceError {
    /// Global memory outside every allocation: the access.
    Memory { addr: u64, bytes: u64 },
    /// Any other kernel failure.
    Other,
}

/// The last kernel failure on `device`, if any.
pub(crate) fn device_error(device: i32) -> Option<DeviceError> {
    DEVICE_ERRORS.lock().get(&device).copied()
}

/// A released device's last failure goes with it.
static HOOKS: Registration = Registration::new(Hooks {
    name: "kernel failures",
    device_released: Some((Phase::BeforeStreams, |r, _| forget_device(r.device))),
    ..Hooks::NONE
});

/// Forgets a released device's failure.
pub(crate) fn forget_device(device: i32) {
    DEVICE_ERRORS.lock().remove(&device);
}

impl Work for Launch {
    /// Any memory of its device: the pointers among its arguments are not known.
    fn devices(&self) -> u64 {
        crate::engine::work::device_bit(self.device)
    }

    /// The memory the launch reads when it starts (device-resident arguments).
    fn memory(&self) -> &[Side] {
        match &self.args {
            Args::Device { side, .. } => std::slice::from_ref(side),
            Args::Copied { .. } => &[],
        }
    }

    fn run(&self, _: &Cx<'_>) -> R {
        self.launch()
    }

    fn describe(&self) -> Task {
        Task::new(self.func.kernel().name.clone(), "kernel").num("blocks", u64::from(self.blocks))
    }
}

impl Launch {
    /// Whether a failure is reported as an AI-core (rather than a vector-core) exception.
    fn cube(&self, declared: u32) -> bool {
        match (self.engine, self.func.binary.core) {
            (Some(c), _) | (None, c @ (Core::Vector | Core::Cube)) => c == Core::Cube,
            (None, Core::Any) => declared != 0,
        }
    }

    /// Runs the kernel (on the stream's worker thread).
    fn launch(&self) -> R {
        let device_args;
        let (args, range): (&[u8], (usize, usize)) = match &self.args {
            Args::Copied { words, len } => {
                // SAFETY: the storage holds `len` initialised bytes.
                let bytes =
                    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), *len) };
                let start = words.as_ptr() as usize;
                (bytes, (start, start + len))
            }
            Args::Device { addr, len, .. } => {
                let t = memory::read();
                match t.check("argsData", *addr, *len) {
                    Ok(s) if s.loc == memory::Loc::Device(self.device) => {
                        let mut v = vec![0u8; *len];
                        // SAFETY: `len` bytes of live device memory, validated under the lock.
                        unsafe { memory::access::read(*addr, s, &mut v) };
                        device_args = v;
                    }
                    _ => {
                        return fail(
                            RT_VECTOR_CORE_EXCEPTION,
                            format!(
                                "kernel failed: {}: its arguments at {addr:#x} ({len} bytes) are \
                                 not live device memory of device {}",
                                self.func.kernel().name,
                                self.device
                            ),
                        );
                    }
                }
                (&device_args[..], (0, 0))
            }
        };
        let ctx = Ctx {
            device: self.device,
            args: range,
            access: KernelAccess::default(),
        };
        let f = &*self.func;
        let slots: Vec<Mutex<Outcome>> = (0..self.blocks)
            .map(|_| Mutex::new(Rank::KernelBlock, Outcome::default()))
            .collect();
        let start = Instant::now();
        crate::kernel::pool::run(self.blocks, &|b| {
            *slots[b as usize].lock() = run_block(f, &ctx, args, b, self.blocks);
        });
        let elapsed = start.elapsed();
        let stray = ctx.access.stray();
        let outcomes: Vec<Outcome> = slots.into_iter().map(Mutex::into_inner).collect();
        let out: Vec<u8> = outcomes
            .iter()
            .flat_map(|o| o.out.iter().copied())
            .collect();
        emit(&out);
        let name = &f.kernel().name;
        let failed: Vec<(usize, &Outcome)> = outcomes
            .iter()
            .enumerate()
            .filter(|(_, o)| o.failed)
            .collect();
        if let Some(addr) = stray {
            DEVICE_ERRORS.lock().insert(
                self.device,
                DeviceError::Memory {
                    addr: addr as u64,
                    bytes: 1,
                },
            );
            let declared = outcomes.first().map_or(0, |o| o.core);
            return fail(
                if self.cube(declared) {
                    RT_AICORE_EXCEPTION
                } else {
                    RT_VECTOR_CORE_EXCEPTION
                },
                format!(
                    "kernel failed: {name}: it touched device memory at {addr:#x}, in no live \
                     allocation (freed, or never allocated or mapped)"
                ),
            );
        }
        if let Some(&(first, o)) = failed.first() {
            let more = match failed.len() {
                1 => String::new(),
                n => format!(" (and {} more block(s) failed)", n - 1),
            };
            let err = if o.kind == binary::FAULT_MEMORY {
                DeviceError::Memory {
                    addr: o.addr,
                    bytes: o.bytes,
                }
            } else {
                DeviceError::Other
            };
            HOOKS.ensure();
            DEVICE_ERRORS.lock().insert(self.device, err);
            return fail(
                if self.cube(o.core) {
                    RT_AICORE_EXCEPTION
                } else {
                    RT_VECTOR_CORE_EXCEPTION
                },
                format!(
                    "kernel failed: {name}: block {first} of {}: {}{more}",
                    self.blocks, o.message
                ),
            );
        }
        if let Some(limit) = self.timeout
            && elapsed > limit
        {
            let declared = outcomes.first().map_or(0, |o| o.core);
            return fail(
                if self.cube(declared) {
                    RT_AICORE_TIMEOUT
                } else {
                    RT_VECTOR_CORE_TIMEOUT
                },
                format!(
                    "kernel {name} ran for {elapsed:?}, longer than its timeout of {limit:?} (its \
                     blocks ran to the end: host threads cannot be stopped)"
                ),
            );
        }
        Ok(())
    }
}
