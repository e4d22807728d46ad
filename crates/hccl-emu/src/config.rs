//! Configuration: HCCL's environment variables that change what a program can observe, the
//! emulator's own timeout overrides, the process-wide `HcclSetConfig` values, and the
//! validation of an `HcclCommConfig`.

use crate::algo::Pref;
use crate::error::*;
use hccl_sys::*;
use std::net::IpAddr;
use std::sync::RwLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Environment variable: the rendezvous timeout in milliseconds, overriding
/// `HCCL_CONNECT_TIMEOUT` (whose smallest value, 120 s, is long for tests).
pub const ENV_CONNECT_TIMEOUT_MS: &str = "HCCL_EMU_CONNECT_TIMEOUT_MS";
/// Environment variable: the execution timeout of one collective in milliseconds, overriding
/// `HCCL_EXEC_TIMEOUT` (a communicator's configuration still beats it).
pub const ENV_EXEC_TIMEOUT_MS: &str = "HCCL_EMU_EXEC_TIMEOUT_MS";

/// Environment variable: the bytes of one channel slot, the largest chunk an algorithm moves at
/// once (by default it depends on the number of ranks). Small slots make small operations
/// exercise the chunking, for tests; every rank of a communicator must use the same.
pub const ENV_SLOT_BYTES: &str = "HCCL_EMU_SLOT_BYTES";

/// The slot size set from Rust (0: not set).
static SLOT_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets the bytes of a channel slot of the communicators created afterwards (as
/// [`ENV_SLOT_BYTES`], which it beats; `None` restores the default). Rounded up to a multiple
/// of 64, at least 64.
pub fn set_slot_bytes(bytes: Option<usize>) {
    SLOT_BYTES.store(bytes.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// Settings made from Rust, which beat every environment variable (for tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The rendezvous timeout (instead of `HCCL_CONNECT_TIMEOUT`).
    pub connect_timeout: Option<Duration>,
    /// The time a collective waits for its peers before its stream fails (instead of
    /// `HCCL_EXEC_TIMEOUT`).
    pub exec_timeout: Option<Duration>,
}

static OVERRIDES: RwLock<Config> = RwLock::new(Config {
    connect_timeout: None,
    exec_timeout: None,
});

/// Replaces the settings made from Rust; communicators created afterwards use them.
pub fn set_config(c: Config) {
    *OVERRIDES.write().unwrap_or_else(|e| e.into_inner()) = c;
}

/// The settings made from Rust.
pub fn config() -> Config {
    OVERRIDES.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// HCCL's defaults.
const DEFAULT_CONNECT: Duration = Duration::from_secs(120);
const DEFAULT_EXEC: Duration = Duration::from_secs(1836);
const DEFAULT_BASE_PORT: u32 = 60000;

/// The environment as read by an initialisation call.
#[derive(Debug, Clone)]
pub(crate) struct Env {
    pub connect_timeout: Duration,
    /// `None`: wait forever (`HCCL_EXEC_TIMEOUT=0`).
    pub exec_timeout: Option<Duration>,
    /// The emulator's override of every other execution timeout.
    pub exec_override: Option<Duration>,
    pub if_ip: Option<IpAddr>,
    pub base_port: u32,
    /// Whether `HCCL_DETERMINISTIC` is set (then `HcclSetConfig` does nothing).
    pub deterministic_env: Option<u32>,
    /// `HCCL_ALGO`.
    pub algo: Pref,
    /// The slot size, when set ([`ENV_SLOT_BYTES`], [`set_slot_bytes`]).
    pub slot: Option<usize>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn bad<T>(name: &str, value: &str, want: &str) -> R<T> {
    fail(
        HCCL_E_PARA,
        format!("environment variable {name}={value:?} is malformed: {want}"),
    )
}

fn int_var(name: &str, lo: u64, hi: u64, want: &str) -> R<Option<u64>> {
    match var(name) {
        None => Ok(None),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            _ => bad(name, &v, want),
        },
    }
}

/// Reads HCCL's environment variables (and the emulator's overrides); a malformed value is
/// E_PARA, as at HCCL's first initialisation call.
pub(crate) fn env() -> R<Env> {
    let o = config();
    let connect = int_var(
        "HCCL_CONNECT_TIMEOUT",
        120,
        7200,
        "seconds from 120 to 7200",
    )?
    .map(Duration::from_secs);
    let exec = int_var(
        "HCCL_EXEC_TIMEOUT",
        0,
        i32::MAX as u64,
        "seconds from 0 (no timeout) to 2147483647",
    )?;
    let emu_connect = int_var(ENV_CONNECT_TIMEOUT_MS, 1, u32::MAX as u64, "milliseconds")?
        .map(Duration::from_millis);
    let emu_exec = int_var(ENV_EXEC_TIMEOUT_MS, 1, u32::MAX as u64, "milliseconds")?
        .map(Duration::from_millis);
    let if_ip = match var("HCCL_IF_IP") {
        None => None,
        Some(v) => match v.trim().parse::<IpAddr>() {
            Ok(ip) => Some(ip),
            Err(_) => return bad("HCCL_IF_IP", &v, "one IPv4 or IPv6 address"),
        },
    };
    let base_port = int_var("HCCL_IF_BASE_PORT", 1, 65535 - 32, "a port from 1 to 65503")?
        .map_or(DEFAULT_BASE_PORT, |p| p as u32);
    int_var("HCCL_BUFFSIZE", 1, u32::MAX as u64, "megabytes, at least 1")?;
    let deterministic_env = match var("HCCL_DETERMINISTIC") {
        None => None,
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "false" => Some(0),
            "true" => Some(1),
            "strict" => Some(2),
            _ => return bad("HCCL_DETERMINISTIC", &v, "true, false or strict"),
        },
    };
    let slot = match SLOT_BYTES.load(std::sync::atomic::Ordering::Relaxed) {
        0 => int_var(ENV_SLOT_BYTES, 1, 64 << 20, "bytes from 1 to 67108864")?,
        b => Some(b as u64),
    }
    .map(|b| (b as usize).div_ceil(64).max(1) * 64);
    let algo = match var("HCCL_ALGO") {
        None => Pref::default(),
        Some(v) => Pref::parse(&v)?,
    };
    let exec_timeout = match exec {
        Some(0) => None,
        Some(s) => Some(Duration::from_secs(s)),
        None => Some(DEFAULT_EXEC),
    };
    Ok(Env {
        connect_timeout: o
            .connect_timeout
            .or(emu_connect)
            .or(connect)
            .unwrap_or(DEFAULT_CONNECT),
        exec_timeout,
        exec_override: o.exec_timeout.or(emu_exec),
        if_ip,
        base_port,
        deterministic_env,
        algo,
        slot,
    })
}

/// `HcclSetConfig(HCCL_DETERMINISTIC, ..)`'s value, process-wide.
static DETERMINISTIC: AtomicI32 = AtomicI32::new(0);

/// `HcclSetConfig`.
pub(crate) fn set_global(key: HcclConfig, value: i32) -> R {
    if key != HCCL_DETERMINISTIC {
        // Other keys are accepted and ignored, as by the library.
        return Ok(());
    }
    if !(0..=2).contains(&value) {
        return fail(
            HCCL_E_PARA,
            format!("HCCL_DETERMINISTIC value {value} is not 0, 1 or 2 (strict)"),
        );
    }
    if value == 2 && !ascendcl_emu::config().soc.starts_with("Ascend910B") {
        return fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "strict determinism (2) is supported on Atlas A2 (Ascend910B*) only, not on {}",
                ascendcl_emu::config().soc
            ),
        );
    }
    if env()?.deterministic_env.is_some() {
        // The environment variable wins: the call succeeds and changes nothing.
        return Ok(());
    }
    DETERMINISTIC.store(value, Ordering::Relaxed);
    Ok(())
}

/// `HcclGetConfig`.
pub(crate) fn get_global(key: HcclConfig) -> R<i32> {
    if key != HCCL_DETERMINISTIC {
        return Ok(0);
    }
    match env()?.deterministic_env {
        Some(v) => Ok(v as i32),
        None => Ok(DETERMINISTIC.load(Ordering::Relaxed)),
    }
}

/// What an `HcclCommConfig` sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CommOptions {
    pub name: Option<String>,
    pub buffer_mb: Option<u32>,
    pub deterministic: Option<u32>,
    /// `Some(None)`: the configuration says 0, no timeout.
    pub exec_timeout: Option<Option<Duration>>,
    /// `hcclAlgo`, as `HCCL_ALGO`.
    pub algo: Option<Pref>,
}

impl Env {
    /// The algorithm preferences of a communicator configured with `o` (the configuration's
    /// `hcclAlgo` beats `HCCL_ALGO`).
    pub(crate) fn algo_for(&self, o: &CommOptions) -> Pref {
        o.algo.clone().unwrap_or_else(|| self.algo.clone())
    }

    /// The execution timeout of a communicator configured with `o`: the configuration, then
    /// the emulator's override, then `HCCL_EXEC_TIMEOUT` (a configuration value beats the
    /// environment, as in HCCL).
    pub(crate) fn exec_timeout_for(&self, o: &CommOptions) -> Option<Duration> {
        match (o.exec_timeout, self.exec_override) {
            (Some(c), _) => c,
            (None, Some(d)) => Some(d),
            (None, None) => self.exec_timeout,
        }
    }
}

/// Reads a NUL-terminated string from a fixed field; E_PARA without a NUL or for non-UTF-8.
fn field_str(field: &[std::os::raw::c_char], what: &str) -> R<String> {
    let bytes: Vec<u8> = field.iter().map(|c| *c as u8).collect();
    let Some(end) = bytes.iter().position(|b| *b == 0) else {
        return fail(
            HCCL_E_PARA,
            format!(
                "config {what} is not NUL-terminated within its {} bytes",
                field.len()
            ),
        );
    };
    String::from_utf8(bytes[..end].to_vec()).map_err(|_| Fail {
        code: HCCL_E_PARA,
        msg: format!("config {what} is not valid UTF-8"),
    })
}

/// Validates an `HcclCommConfig` as the library loads it: the magic word, then the fields that
/// its version has. The leading size bounds what is read.
///
/// # Safety
/// `p` is NULL or valid for reading the size its first 8 bytes give (at most the whole
/// structure is read).
pub(crate) unsafe fn comm_options(p: *const HcclCommConfig) -> R<CommOptions> {
    if p.is_null() {
        return fail(HCCL_E_PARA, "config is NULL");
    }
    let full = std::mem::size_of::<HcclCommConfig>();
    let mut c = comm_config();
    // SAFETY: the first 24 bytes (size, magic, version, reserved) exist in every version.
    let head = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), 24) };
    let size = u64::from_ne_bytes(head[0..8].try_into().expect("8 bytes")) as usize;
    let magic = u32::from_ne_bytes(head[8..12].try_into().expect("4 bytes"));
    let version = u32::from_ne_bytes(head[12..16].try_into().expect("4 bytes"));
    if magic != HCCL_COMM_CONFIG_MAGIC_WORD {
        return fail(
            HCCL_E_PARA,
            format!(
                "config magic word is {magic:#x}, not {HCCL_COMM_CONFIG_MAGIC_WORD:#x} (initialise \
                 the config with HcclCommConfigInit)"
            ),
        );
    }
    let n = size.clamp(24, full);
    // SAFETY: the caller's structure holds `size` bytes (its own size field), and n <= size
    // unless size < 24, when only the always-present header is read.
    unsafe {
        std::ptr::copy_nonoverlapping(p.cast::<u8>(), (&mut c as *mut HcclCommConfig).cast(), n)
    };
    let mut o = CommOptions::default();
    if version >= 1 {
        match c.hcclBufferSize {
            HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET => {}
            0 => return fail(HCCL_E_PARA, "config hcclBufferSize is 0 (at least 1 MB)"),
            v => o.buffer_mb = Some(v),
        }
        match c.hcclDeterministic {
            HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET => {}
            v @ 0..=2 => o.deterministic = Some(v),
            v => {
                return fail(
                    HCCL_E_PARA,
                    format!("config hcclDeterministic is {v} (0, 1 or 2)"),
                );
            }
        }
    }
    if version >= 2 {
        let name = field_str(&c.hcclCommName, "hcclCommName")?;
        if !name.is_empty() {
            o.name = Some(name);
        }
    }
    if version >= 3 {
        field_str(&c.hcclUdi, "hcclUdi")?;
    }
    if version >= 5 {
        let tc = c.hcclRdmaTrafficClass;
        if tc != HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET && (tc > 255 || !tc.is_multiple_of(4)) {
            return fail(
                HCCL_E_PARA,
                format!("config hcclRdmaTrafficClass is {tc} (0 to 255 in steps of 4)"),
            );
        }
        let sl = c.hcclRdmaServiceLevel;
        if sl != HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET && sl > 7 {
            return fail(
                HCCL_E_PARA,
                format!("config hcclRdmaServiceLevel is {sl} (0 to 7)"),
            );
        }
    }
    if version >= 7 && c.aclGraphZeroCopyEnable > 1 {
        return fail(
            HCCL_E_PARA,
            format!(
                "config aclGraphZeroCopyEnable is {} (0 or 1)",
                c.aclGraphZeroCopyEnable
            ),
        );
    }
    if version >= 8 {
        match c.hcclExecTimeOut {
            HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET => {}
            t if t < 0 => {
                return fail(
                    HCCL_E_PARA,
                    format!("config hcclExecTimeOut is {t} (seconds, or -1 for not set)"),
                );
            }
            0 => o.exec_timeout = Some(None),
            t => o.exec_timeout = Some(Some(Duration::from_secs(t as u64))),
        }
        let algo = field_str(&c.hcclAlgo, "hcclAlgo")?;
        if !algo.trim().is_empty() {
            o.algo = Some(Pref::parse(&algo)?);
        }
        field_str(&c.hcclRetryEnable, "hcclRetryEnable")?;
        field_str(&c.hcclRetryParams, "hcclRetryParams")?;
    }
    if version >= 9 {
        field_str(&c.hcclBufferName, "hcclBufferName")?;
    }
    Ok(o)
}
