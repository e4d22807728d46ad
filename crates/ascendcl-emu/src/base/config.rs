//! The emulator's configuration: read once from the environment, replaceable from Rust tests.

use crate::base::lock::{Rank, RwLock};
use std::sync::OnceLock;

/// Environment variable: number of emulated devices (default 2).
pub const ENV_DEVICES: &str = "ASCENDCL_EMU_DEVICES";
/// Environment variable: memory capacity of each device in bytes, `K`/`M`/`G` suffixes accepted
/// (default 8G).
pub const ENV_MEMORY: &str = "ASCENDCL_EMU_MEMORY";
/// Environment variable: the budget of pinned host memory (`aclrtMallocHost`) in bytes, for the
/// whole process, `K`/`M`/`G`/`T` suffixes accepted (default: half of the machine's physical
/// memory).
pub const ENV_HOST_MEMORY: &str = "ASCENDCL_EMU_HOST_MEMORY";
/// Environment variable: the SoC name reported by `aclrtGetSocName` (default `Ascend910B2`).
pub const ENV_SOC: &str = "ASCENDCL_EMU_SOC";
/// Environment variable: `auto` (use huge pages where the kernel offers them) or `off`.
pub const ENV_HUGEPAGES: &str = "ASCENDCL_EMU_HUGEPAGES";
/// Environment variable: fault injection, e.g. `aclrtMalloc:3,aclrtMemcpy:*`.
pub const ENV_FAULTS: &str = "ASCENDCL_EMU_FAULTS";
/// Environment variable: `1` prints a leak report to stderr when a device is released and at
/// `aclFinalize`.
pub const ENV_LEAK_REPORT: &str = "ASCENDCL_EMU_LEAK_REPORT";

/// Environment variable: `1` lets host code dereference device memory (by default a host access
/// to device memory faults, as on an NPU, with a message naming the allocation). Read once, when
/// the process first allocates device memory.
pub const ENV_HOST_ACCESS: &str = "ASCENDCL_EMU_HOST_ACCESS";

/// Environment variable: how long, in milliseconds, a synchronous copy or memset, a free, an
/// IPC close or an unmap waits for the kernels and copies already queued ahead of it on the
/// device's streams (default 1000; 0: no wait). Read once.
pub const ENV_DRAIN_WAIT: &str = "ASCENDCL_EMU_DRAIN_WAIT_MS";

/// Whether the emulator may use huge pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HugePages {
    /// `MAP_HUGETLB` for `HUGE_ONLY` (fails when the machine has none reserved) and transparent
    /// huge pages for `HUGE_FIRST` above 1 MiB, when the kernel enables them.
    Auto,
    /// Never: `HUGE_ONLY` allocations fail with 207001, `HUGE_FIRST` uses normal pages.
    Off,
}

/// The emulated machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Number of devices (`aclrtGetDeviceCount`).
    pub devices: u32,
    /// Memory capacity of each device, in bytes (`aclrtGetMemInfo`, enforced by `aclrtMalloc`).
    pub memory: u64,
    /// Budget of pinned host memory (`aclrtMallocHost`) for the whole process, in bytes: an
    /// allocation beyond it fails with 207001, as device memory does beyond [`Config::memory`].
    pub host_memory: u64,
    /// SoC name (`aclrtGetSocName`).
    pub soc: String,
    /// Huge page use.
    pub hugepages: HugePages,
    /// Print leak reports to stderr.
    pub leak_report: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            devices: 2,
            memory: 8 << 30,
            host_memory: default_host_memory(),
            soc: "Ascend910B2".to_string(),
            hugepages: HugePages::Auto,
            leak_report: false,
        }
    }
}

/// The default budget of pinned host memory: half of the machine's physical memory (pinned
/// memory cannot be swapped; the real runtime's users are told to keep it well below the total),
/// or 8 GiB when the system does not say.
pub fn default_host_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        (pages as u64).saturating_mul(page as u64) / 2
    } else {
        8 << 30
    }
}

/// Parses a byte count with an optional `K`, `M`, `G` or `T` suffix (binary multiples; an optional
/// trailing `B` or `iB` is accepted): `512M`, `8G`, `4096`.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (num, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a byte count (examples: 4096, 512M, 8G)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

impl Config {
    /// The configuration described by the `ASCENDCL_EMU_*` environment variables; each problem is
    /// returned as a message and the default is kept for that setting.
    pub fn from_env() -> (Config, Vec<String>) {
        let mut c = Config::default();
        let mut problems = Vec::new();
        if let Ok(v) = std::env::var(ENV_DEVICES) {
            match v.trim().parse::<u32>() {
                Ok(n) if (1..=64).contains(&n) => c.devices = n,
                _ => problems.push(format!("{ENV_DEVICES}={v:?} is not a count in 1..=64")),
            }
        }
        if let Ok(v) = std::env::var(ENV_MEMORY) {
            match parse_bytes(&v) {
                Ok(n) if n > 0 => c.memory = n,
                Ok(_) => problems.push(format!("{ENV_MEMORY}={v:?} must be positive")),
                Err(e) => problems.push(format!("{ENV_MEMORY}: {e}")),
            }
        }
        if let Ok(v) = std::env::var(ENV_HOST_MEMORY) {
            match parse_bytes(&v) {
                Ok(n) if n > 0 => c.host_memory = n,
                Ok(_) => problems.push(format!("{ENV_HOST_MEMORY}={v:?} must be positive")),
                Err(e) => problems.push(format!("{ENV_HOST_MEMORY}: {e}")),
            }
        }
        if let Ok(v) = std::env::var(ENV_SOC) {
            if v.trim().is_empty() || v.contains('\0') {
                problems.push(format!("{ENV_SOC}={v:?} is not a SoC name"));
            } else {
                c.soc = v.trim().to_string();
            }
        }
        if let Ok(v) = std::env::var(ENV_HUGEPAGES) {
            match v.trim().to_ascii_lowercase().as_str() {
                "" | "auto" | "on" => c.hugepages = HugePages::Auto,
                "off" | "0" | "no" => c.hugepages = HugePages::Off,
                _ => problems.push(format!("{ENV_HUGEPAGES}={v:?} is not auto or off")),
            }
        }
        if let Ok(v) = std::env::var(ENV_LEAK_REPORT) {
            c.leak_report = matches!(v.trim(), "1" | "true" | "yes" | "on");
        }
        (c, problems)
    }
}

fn cell() -> &'static RwLock<Config> {
    static CONFIG: OnceLock<RwLock<Config>> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let (c, problems) = Config::from_env();
        for p in problems {
            eprintln!("ascendcl-emu: ignoring {p}");
        }
        RwLock::new(Rank::Config, c)
    })
}

/// The configuration in effect (read from the environment on first use).
pub fn config() -> Config {
    cell().read().clone()
}

/// Reads one setting without cloning the whole configuration.
pub(crate) fn with<T>(f: impl FnOnce(&Config) -> T) -> T {
    f(&cell().read())
}

/// Replaces the configuration. The device count applies to later `aclrtSetDevice` calls and
/// queries; the capacity and the pinned host budget to later allocations; the SoC name to later `aclrtGetSocName` calls.
pub fn set_config(c: Config) {
    *cell().write() = c;
}
