//! Profiling (`acl_prof.h`): the session of `aclprofInit` … `aclprofFinalize`, its
//! configurations, and the trace it records while started — every stream task the engine runs
//! (through the engine's trace seam) and the user's ranges and marks — written as a Chrome trace /
//! Perfetto JSON file on `aclprofStop`. `ASCENDCL_EMU_TRACE=<file>` records the whole process
//! instead, written at `aclFinalize` and at exit.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the session: mode, output directory, settings, configurations, start and stop, the environment variable |
//! | `stamps.rs` | stamps, marks, push/pop, ranges, step timestamps |
//! | `mstx.rs` | mstx marks and ranges, in domains |
//! | `log.rs` | the recorded entries and their JSON rendering |

pub(crate) mod log;
pub(crate) mod mstx;
pub(crate) mod stamps;

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::lock::{Mutex, Rank};
use crate::engine::trace;
use ascendcl_sys::ACL_PROF_MSPROFTX;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The environment variable that records the whole process into a trace file.
pub const ENV_TRACE: &str = "ASCENDCL_EMU_TRACE";

/// The longest output path `aclprofInit` takes.
const MAX_PATH: usize = 4096;
/// The longest value `aclprofSetConfig` takes.
const MAX_CONFIG: usize = 256;

/// A configuration (`aclprofCreateConfig`).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub devices: Vec<u32>,
    pub metrics: u32,
    pub flags: u64,
}

/// The session's state.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Between `aclprofInit` (or an implicit init by `aclprofStart`) and `aclprofFinalize`.
    initialized: bool,
    /// The output directory.
    dir: Option<PathBuf>,
    /// `aclprofSetConfig` values, by type.
    settings: HashMap<u32, String>,
    configs: HashMap<usize, Config>,
    /// The configuration the session was started with (0: the built-in default) and where its
    /// entries start in the log (entries kept, entries dropped).
    started: Option<(usize, (usize, u64))>,
    /// Trace files written by this process's sessions.
    written: u32,
    /// The file of `ASCENDCL_EMU_TRACE`, when set.
    env: Option<PathBuf>,
    /// The stamps (`aclprofCreateStamp`) and their messages.
    pub(crate) stamps: HashMap<usize, String>,
    /// Open ranges (`aclprofRangeStart`), by id.
    pub(crate) ranges: HashMap<u32, stamps::Open>,
    pub(crate) next_range: u32,
    /// Step infos and the tags already stamped on them.
    pub(crate) steps: HashMap<usize, HashSet<u32>>,
    /// mstx domains (`mstxDomainCreateA`) and their names.
    pub(crate) domains: HashMap<usize, String>,
    /// Open mstx ranges, by id.
    pub(crate) mstx_ranges: HashMap<u64, mstx::Open>,
    pub(crate) next_mstx: u64,
}

impl State {
    /// Whether msproftx calls are accepted: a session is started, or the environment variable
    /// records the process.
    pub(crate) fn collecting(&self) -> bool {
        self.started.is_some() || self.env.is_some()
    }

    /// Switches the engine's timing on while anything records.
    fn update(&self) {
        trace::set_on(self.collecting());
    }
}

pub(crate) static STATE: Mutex<Option<State>> = Mutex::new(Rank::Profiling, None);

/// Runs `f` on the session state.
pub(crate) fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATE.lock();
    f(g.get_or_insert_with(State::default))
}

/// At `aclFinalize` the environment's trace is written (an API session still started is
/// stopped and written too).
static HOOKS: Registration = Registration::new(Hooks {
    name: "profiling",
    finalized: Some(|_| finalize_hook()),
    ..Hooks::NONE
});

fn finalize_hook() {
    with(|s| {
        if s.started.is_some() {
            let _ = stop_session(s);
        }
        write_env(s);
    });
}

/// Writes the whole process's trace to the environment variable's file, if set.
fn write_env(s: &State) {
    if let Some(p) = &s.env
        && let Err(e) = log::write(p, (0, 0), serde_json::json!({"session": ENV_TRACE}))
    {
        eprintln!(
            "ascendcl-emu: {ENV_TRACE}: cannot write {}: {e}",
            p.display()
        );
    }
}

extern "C" fn at_exit() {
    // No unwinding into C; a stream worker still running may hold the lock for a moment.
    let _ = std::panic::catch_unwind(|| {
        if let Some(s) = STATE.lock().as_ref() {
            write_env(s);
        }
    });
}

/// Reads `ASCENDCL_EMU_TRACE` once (the first `aclInit` or `aclrtSetDevice`): when set, every
/// stream task of the process is recorded from then on.
pub(crate) fn env_start() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Some(v) = std::env::var_os(ENV_TRACE).filter(|v| !v.is_empty()) else {
            return;
        };
        let path = PathBuf::from(env_path(&v.to_string_lossy(), std::process::id()));
        let path = if path.is_absolute() {
            path
        } else {
            std::env::current_dir().map_or(path.clone(), |d| d.join(&path))
        };
        start_recording();
        with(|s| {
            s.env = Some(path);
            s.update();
        });
        // SAFETY: registers a function with no preconditions to run at exit.
        unsafe { libc::atexit(at_exit) };
    });
}

/// The file `ASCENDCL_EMU_TRACE` names for process `pid`: `%p` stands for the process id, so
/// that the processes of a multi-process program (which inherit the variable) write a file each.
fn env_path(v: &str, pid: u32) -> String {
    v.replace("%p", &pid.to_string())
}

fn start_recording() {
    log::start_clock();
    trace::set_sink(log::sink);
    HOOKS.ensure();
}

/// `aclprofInit`: the session's output directory (made if missing).
pub(crate) fn init(path: &[u8]) -> R {
    if path.is_empty() || path.len() > MAX_PATH {
        return fail(
            INVALID_FILE,
            format!("the result path is {} bytes (1 to {MAX_PATH})", path.len()),
        );
    }
    let dir = std::str::from_utf8(path)
        .map_err(|_| Fail {
            code: INVALID_FILE,
            msg: "the result path is not valid UTF-8".into(),
        })?
        .to_string();
    with(|s| {
        if s.initialized {
            return fail(
                REPEAT_INITIALIZE,
                "aclprofInit was already called (aclprofFinalize first)",
            );
        }
        let dir = make_dir(&dir)?;
        s.initialized = true;
        s.dir = Some(dir);
        s.settings.clear();
        Ok(())
    })
}

/// The output directory `dir`, made if missing, as an absolute path.
fn make_dir(dir: &str) -> R<PathBuf> {
    let bad = |e: std::io::Error| Fail {
        code: INVALID_FILE,
        msg: format!("the result path {dir:?} cannot be used as a directory: {e}"),
    };
    std::fs::create_dir_all(dir).map_err(bad)?;
    Path::new(dir).canonicalize().map_err(bad)
}

/// `aclprofFinalize`: ends the session (a started one is stopped and written first).
pub(crate) fn finalize() -> R {
    with(|s| {
        if !s.initialized {
            return fail(PROF_NOT_RUN, "profiling is not initialised (aclprofInit)");
        }
        let r = if s.started.is_some() {
            stop_session(s)
        } else {
            Ok(())
        };
        s.initialized = false;
        s.settings.clear();
        r
    })
}

/// `aclprofCreateConfig` (`device_count`: the number of devices).
pub(crate) fn create_config(
    devices: Option<&[u32]>,
    metrics: u32,
    flags: u64,
    device_count: u32,
) -> R<usize> {
    let devices = devices.unwrap_or(&[]);
    if devices.is_empty() && flags & u64::from(ACL_PROF_MSPROFTX) == 0 {
        return fail(
            INVALID_PARAM,
            "no device is named and dataTypeConfig lacks ACL_PROF_MSPROFTX (only a msproftx \
             configuration may name no device)",
        );
    }
    if devices.len() > device_count as usize {
        return fail(
            INVALID_PARAM,
            format!(
                "{} devices are named, more than the {device_count} there are",
                devices.len()
            ),
        );
    }
    let mut seen = HashSet::new();
    for &d in devices {
        if d >= device_count {
            return fail(
                INVALID_PARAM,
                format!("device {d} does not exist ({device_count} devices)"),
            );
        }
        if !seen.insert(d) {
            return fail(INVALID_PARAM, format!("device {d} is named twice"));
        }
    }
    let h = crate::base::hub::new_handle();
    with(|s| {
        s.configs.insert(
            h,
            Config {
                devices: devices.to_vec(),
                metrics,
                flags,
            },
        )
    });
    Ok(h)
}

/// `aclprofDestroyConfig`.
pub(crate) fn destroy_config(h: usize) -> R {
    with(|s| match s.configs.remove(&h) {
        Some(_) => Ok(()),
        None => fail(
            INVALID_PARAM,
            format!("{h:#x} is not a live profiling configuration"),
        ),
    })
}

/// `aclprofSetConfig`: one setting, checked against its documented range.
pub(crate) fn set_config(kind: u32, value: &[u8]) -> R {
    use ascendcl_sys::*;
    if value.len() > MAX_CONFIG {
        return fail(
            INVALID_PARAM,
            format!("the value is {} bytes (at most {MAX_CONFIG})", value.len()),
        );
    }
    let v = std::str::from_utf8(value)
        .map_err(|_| Fail {
            code: INVALID_PARAM,
            msg: "the value is not valid UTF-8".into(),
        })?
        .trim_end_matches('\0')
        .to_string();
    let number = |lo: u64, hi: u64| -> R {
        match v.trim().parse::<u64>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(()),
            _ => fail(
                INVALID_PARAM,
                format!("{v:?} is not a number in [{lo}, {hi}] (config type {kind})"),
            ),
        }
    };
    match kind {
        ACL_PROF_STORAGE_LIMIT => {
            let digits = v.trim().trim_end_matches("MB");
            match digits.parse::<u64>() {
                Ok(n) if (200..=u64::from(u32::MAX)).contains(&n) => {}
                _ => {
                    return fail(
                        INVALID_PARAM,
                        format!("storage limit {v:?} is not in [200, 4294967295] MB"),
                    );
                }
            }
        }
        ACL_PROF_SYS_HARDWARE_MEM_FREQ | ACL_PROF_SYS_IO_FREQ | ACL_PROF_DVPP_FREQ => {
            number(1, 100)?
        }
        ACL_PROF_SYS_INTERCONNECTION_FREQ | ACL_PROF_HOST_SYS_USAGE_FREQ => number(1, 50)?,
        ACL_PROF_LLC_MODE => {
            if v != "read" && v != "write" {
                return fail(
                    INVALID_PARAM,
                    format!("LLC mode {v:?} is neither \"read\" nor \"write\""),
                );
            }
        }
        ACL_PROF_HOST_SYS => {
            if v.is_empty() || !v.split(',').all(|p| p == "cpu" || p == "mem") {
                return fail(
                    INVALID_PARAM,
                    format!("host sys {v:?} is not a list of \"cpu\" and \"mem\""),
                );
            }
        }
        ACL_PROF_OPTYPE => {
            return fail(
                FEATURE_UNSUPPORTED,
                "ACL_PROF_OPTYPE is supported on no product",
            );
        }
        ACL_PROF_NTS_METRICS => {
            if v != "PipeUtilization" {
                return fail(
                    INVALID_PARAM,
                    format!("NTS metrics {v:?}: only \"PipeUtilization\" is supported"),
                );
            }
        }
        ACL_PROF_PATH => {
            if v.is_empty() {
                return fail(INVALID_PARAM, "the path is empty");
            }
        }
        k if k > ACL_PROF_ARGS_MIN && k < ACL_PROF_ARGS_MAX => {}
        k => {
            return fail(
                INVALID_PARAM,
                format!(
                    "config type {k} is not one of aclprofConfigType ({} to {})",
                    ACL_PROF_ARGS_MIN + 1,
                    ACL_PROF_ARGS_MAX - 1
                ),
            );
        }
    }
    with(|s| {
        if s.started.is_some() {
            return fail(
                PROF_ALREADY_RUN,
                "aclprofSetConfig comes before aclprofStart",
            );
        }
        s.settings.insert(kind, v);
        Ok(())
    })
}

/// `aclprofStart` with configuration `h` (0: the built-in default): recording begins. Without
/// `aclprofInit` the session initialises itself (the path of `ACL_PROF_PATH`, else `./`).
pub(crate) fn start(h: usize) -> R {
    start_recording();
    with(|s| {
        if h != 0 && !s.configs.contains_key(&h) {
            return fail(
                INVALID_PARAM,
                format!("{h:#x} is not a live profiling configuration"),
            );
        }
        if s.started.is_some() {
            return fail(
                PROF_ALREADY_RUN,
                "profiling is already started (aclprofStop first)",
            );
        }
        if !s.initialized {
            let dir = s
                .settings
                .get(&ascendcl_sys::ACL_PROF_PATH)
                .cloned()
                .unwrap_or_else(|| "./".to_string());
            s.dir = Some(make_dir(&dir)?);
            s.initialized = true;
        }
        if let Some(p) = s.settings.get(&ascendcl_sys::ACL_PROF_PATH).cloned() {
            s.dir = Some(make_dir(&p)?);
        }
        s.started = Some((h, log::len()));
        s.update();
        Ok(())
    })
}

/// `aclprofStop` with the configuration the session was started with: recording ends and the
/// trace is written.
pub(crate) fn stop(h: usize) -> R {
    with(|s| {
        if !s.initialized {
            return fail(PROF_NOT_RUN, "profiling is not initialised (aclprofInit)");
        }
        match s.started {
            None => fail(PROF_NOT_RUN, "profiling is not started (aclprofStart)"),
            Some((c, _)) if c != h => fail(
                INVALID_PARAM,
                format!(
                    "aclprofStop takes the configuration aclprofStart was given ({c:#x}), not \
                     {h:#x}"
                ),
            ),
            Some(_) => stop_session(s),
        }
    })
}

/// Ends the started session and writes its trace.
fn stop_session(s: &mut State) -> R {
    let Some((h, from)) = s.started.take() else {
        return Ok(());
    };
    s.update();
    s.written += 1;
    let dir = s.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let file = dir.join(format!(
        "ascendcl_emu_trace_{}_{}.json",
        std::process::id(),
        s.written
    ));
    let about = match s.configs.get(&h) {
        Some(c) => serde_json::json!({
            "session": "aclprofStart",
            "devices": c.devices,
            "aicoreMetrics": c.metrics,
            "dataTypeConfig": c.flags,
        }),
        None => serde_json::json!({"session": "aclprofStart", "config": "default"}),
    };
    let r = log::write(&file, from, about);
    if s.env.is_none() {
        log::clear();
    }
    r.map_err(|e| Fail {
        code: PROFILING_FAILURE,
        msg: format!("cannot write the trace {}: {e}", file.display()),
    })
}

/// The trace file the last session of this process wrote, if any.
pub fn last_trace_file() -> Option<PathBuf> {
    with(|s| {
        let dir = s.dir.clone()?;
        (s.written > 0).then(|| {
            dir.join(format!(
                "ascendcl_emu_trace_{}_{}.json",
                std::process::id(),
                s.written
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_s_percent_p_is_the_process_id() {
        assert_eq!(env_path("t-%p.json", 42), "t-42.json");
        assert_eq!(env_path("/tmp/trace.json", 42), "/tmp/trace.json");
    }
}
