//! The order in which the emulator's locks are taken: a thread that holds a lock of one rank takes
//! only locks of later ranks. Every lock of the crate is a [`crate::base::lock`] lock with one of
//! these ranks; docs/emulator.md shows the list.
//!
//! A debug build also records which ranks were taken with which other rank held (the nestings the
//! tests exercise); `ASCENDCL_EMU_LOCK_REPORT=<file>` appends each nesting to the file the first
//! time a process sees it, so a whole test run can be summed up (`cargo xtask lock-report`).

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! ranks {
    ($( $(#[doc = $doc:literal])* $name:ident = $text:literal, )*) => {
        /// A lock's place in the order; earlier variants are taken first.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub(crate) enum Rank {
            $( $(#[doc = $doc])* $name, )*
        }

        impl Rank {
            /// Every rank, in order.
            pub(crate) const ALL: &'static [Rank] = &[$(Rank::$name),*];

            /// What the lock guards, for messages.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $( Rank::$name => $text, )*
                }
            }

            /// The variant's name, as in the source.
            pub(crate) fn variant(self) -> &'static str {
                match self {
                    $( Rank::$name => stringify!($name), )*
                }
            }
        }
    };
}

ranks! {
    /// `aclInit` and `aclFinalize` run one at a time (their callbacks included).
    Lifecycle = "init and finalize",
    /// The registered init and finalize callbacks.
    InitCallbacks = "init and finalize callbacks",
    /// One execution of a model at a time; held while the execution's tasks run.
    ModelExecution = "model execution",
    /// Reservations and physical allocations of virtual memory.
    Vmm = "virtual memory",
    /// The table of live and freed allocations.
    MemoryTable = "allocation table",
    /// The free ranges of the device arena (a free returns a range while the table is held).
    Arena = "device arena",
    /// Devices (reference counts, default contexts) and peer access.
    Devices = "devices",
    /// The contexts registry.
    Contexts = "context registry",
    /// The streams registry.
    Streams = "stream registry",
    /// The events registry.
    Events = "event registry",
    /// The models registry.
    Models = "model registry",
    /// A stream's queue.
    Stream = "stream queue",
    /// A model's recorded steps and its running executions.
    ModelState = "model state",
    /// The task groups registry.
    TaskGroups = "task group registry",
    /// The replacement steps of a task group update.
    Update = "task group update",
    /// A task group's steps.
    TaskGroup = "task group",
    /// A context's failure in STOP mode.
    ContextFailure = "context failure",
    /// The labels registry.
    Labels = "label registry",
    /// The label lists registry.
    LabelLists = "label list registry",
    /// Where a label is set.
    Label = "label",
    /// The loaded kernel binaries registry.
    Binaries = "binary registry",
    /// The function handles a binary gave out.
    BinaryFunctions = "binary functions",
    /// The kernel functions registry.
    Functions = "function registry",
    /// The binary descriptors registry.
    BinaryDescriptors = "binary descriptor registry",
    /// The live kernel argument lists.
    KernelArgs = "kernel argument lists",
    /// The last kernel failure of each device.
    DeviceErrors = "device errors",
    /// The notifies registry.
    Notifies = "notify registry",
    /// This process's notify words.
    NotifyArena = "notify arena",
    /// Other processes' notify arenas mapped here.
    ForeignArenas = "foreign arenas",
    /// The export table of memory, notifies and events shared with other processes.
    IpcTable = "export table",
    /// The IPC memory this process imported.
    IpcImports = "IPC imports",
    /// An event's records.
    Event = "event",
    /// The streams subscribed to report threads (`aclrtSubscribeReport`).
    Reports = "report subscriptions",
    /// The streams subscribed to host-function threads (`aclrtSubscribeHostFunc`).
    HostFuncs = "host-function subscriptions",
    /// A subscribed thread's queue of callbacks.
    ReportQueue = "report queue",
    /// The completion of a blocking callback.
    Done = "callback completion",
    /// The stream state callbacks.
    StreamCallbacks = "stream state callbacks",
    /// The exception callback.
    ExceptionCallback = "exception callback",
    /// Resource limits of devices and streams.
    Limits = "resource limits",
    /// Allocator descriptors and their registrations.
    Allocators = "allocators",
    /// The data buffers registry.
    DataBuffers = "data buffer registry",
    /// What one data buffer describes.
    DataBuffer = "data buffer",
    /// The operator library's tensors, scalars and executors.
    Operators = "operator objects",
    /// The live data channels (`acl_tdt.h`).
    TdtChannels = "data channels",
    /// The queues of the process and their routes (`acl_tdt.h`, `acl_tdt_queue.h`).
    TdtQueues = "queues",
    /// The live data items and datasets.
    TdtObjects = "data items and datasets",
    /// The queue attributes, routes, route lists and route queries.
    TdtDescriptors = "queue descriptors",
    /// The SoC names handed out.
    SocNames = "SoC names",
    /// The state of one running model execution.
    ModelRun = "model run",
    /// One kernel block's outcome.
    KernelBlock = "kernel block",
    /// The kernel thread pool's jobs.
    KernelPool = "kernel pool",
    /// One kernel job's finished blocks.
    KernelJob = "kernel job",
    /// Work queued by a library layered on the runtime (run once).
    ExternalTask = "external task",
    /// The profiling session: its mode, path, configurations, stamps and open ranges.
    Profiling = "profiling session",
    /// The recorded trace (stream tasks, ranges, marks); taken by stream workers as tasks end.
    ProfilingLog = "profiling trace",
    /// The hooks concepts register for teardown.
    Hooks = "teardown hooks",
    /// Injected faults.
    Faults = "faults",
    /// Kept leak reports.
    Leaks = "leak reports",
    /// The configuration.
    Config = "configuration",
}

/// Bit `i` of entry `r`: rank `r` was taken while rank `i` was the highest held; bit 63: while
/// nothing was held.
static SEEN: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// Records a nesting (debug builds): the first time one is seen in this process, it is appended
/// to `ASCENDCL_EMU_LOCK_REPORT`'s file when set. Release builds do not check ranks and never
/// call it.
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub(crate) fn observe(outer: Option<Rank>, inner: Rank) {
    let bit = 1u64 << outer.map_or(63, |o| o as u32);
    let old = SEEN[inner as usize].fetch_or(bit, Ordering::Relaxed);
    if old & bit != 0 {
        return;
    }
    if let Some(path) = std::env::var_os("ASCENDCL_EMU_LOCK_REPORT") {
        use std::io::Write;
        let line = format!(
            "{} {}\n",
            outer.map_or("-", |o| o.variant()),
            inner.variant()
        );
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// The nestings this process has seen: (the highest rank held, the rank taken).
pub(crate) fn observed() -> Vec<(Option<Rank>, Rank)> {
    let mut v = Vec::new();
    for &inner in Rank::ALL {
        let bits = SEEN[inner as usize].load(Ordering::Relaxed);
        if bits & (1 << 63) != 0 {
            v.push((None, inner));
        }
        for &outer in Rank::ALL {
            if bits & (1 << outer as u32) != 0 {
                v.push((Some(outer), inner));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_follow_the_variants() {
        assert!(Rank::ALL.len() < 63);
        for (i, r) in Rank::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
            assert_eq!(r.variant(), format!("{r:?}"));
        }
    }

    #[cfg(debug_assertions)]
    #[test]
    fn nestings_are_recorded() {
        let a = crate::base::lock::Mutex::new(Rank::Stream, ());
        let b = crate::base::lock::Mutex::new(Rank::ContextFailure, ());
        let _ga = a.lock();
        let _gb = b.lock();
        let seen = observed();
        assert!(seen.contains(&(Some(Rank::Stream), Rank::ContextFailure)));
    }
}
