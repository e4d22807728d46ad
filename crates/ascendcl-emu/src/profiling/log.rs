//! The recorded trace: the stream tasks the engine hands over while recording is on, the user's
//! ranges and marks, and their rendering as a Chrome trace / Perfetto JSON document
//! (docs/emulator.md, "Profiling", describes the format).

use crate::base::lock::{Mutex, Rank};
use crate::engine::trace::{Arg, Lane, Span, Task};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::LazyLock;
use std::time::Instant;

/// The `pid` of the host's lane group (the user's ranges and marks, one `tid` per thread).
pub(crate) const HOST_PID: i64 = 1000;

/// One entry of the trace.
#[derive(Debug)]
pub(crate) enum Entry {
    /// A stream task (or a model step) that ran.
    Task(Span),
    /// A user's range (push/pop, range start/stop) on host thread `tid`.
    Range {
        name: String,
        tid: u32,
        start: Instant,
        end: Instant,
        /// `push`/`pop` (nested on one thread) or `range` (may end on another thread).
        kind: &'static str,
    },
    /// An instant: a user's mark, a step's timestamp.
    Mark {
        name: String,
        tid: u32,
        at: Instant,
        cat: &'static str,
    },
}

/// The time every timestamp counts from (the first use of profiling in the process).
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// The most entries kept (a few hundred bytes each): past it, entries are counted, not kept, so
/// that a long program traced by `ASCENDCL_EMU_TRACE` cannot exhaust the host's memory.
pub(crate) const MAX_ENTRIES: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// The entries recorded so far, and how many were dropped past [`MAX_ENTRIES`].
#[derive(Debug, Default)]
struct Log {
    entries: Vec<Entry>,
    dropped: u64,
}

static LOG: Mutex<Log> = Mutex::new(
    Rank::ProfilingLog,
    Log {
        entries: Vec::new(),
        dropped: 0,
    },
);

/// Fixes the epoch (before the first entry is timed).
pub(crate) fn start_clock() {
    LazyLock::force(&EPOCH);
}

/// The engine's sink: a task that ran while recording was on.
pub(crate) fn sink(span: Span) {
    push(Entry::Task(span));
}

/// Adds an entry (counts it as dropped when the log is full).
pub(crate) fn push(e: Entry) {
    let mut log = LOG.lock();
    if log.entries.len() < MAX_ENTRIES {
        log.entries.push(e);
    } else {
        log.dropped += 1;
    }
}

/// The number of entries recorded so far and of those dropped (where a session starts).
pub(crate) fn len() -> (usize, u64) {
    let log = LOG.lock();
    (log.entries.len(), log.dropped)
}

/// Drops every entry.
pub(crate) fn clear() {
    let mut log = LOG.lock();
    log.entries.clear();
    log.dropped = 0;
}

/// The JSON document of the entries from index `from` on; `about` (what recorded them) goes
/// into `otherData`.
pub(crate) fn render((from, dropped_before): (usize, u64), about: Value) -> Value {
    let log = LOG.lock();
    let entries = log.entries.get(from..).unwrap_or(&[]);
    let dropped = log.dropped - dropped_before.min(log.dropped);
    let us = |t: Instant| t.saturating_duration_since(*EPOCH).as_nanos() as f64 / 1000.0;
    let dur = |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as f64 / 1000.0;
    let mut events = Vec::with_capacity(entries.len() + 8);
    let mut lanes: BTreeSet<(i64, i64)> = BTreeSet::new();
    for e in entries {
        match e {
            Entry::Task(s) => {
                let (pid, tid) = lane_ids(s.lane);
                lanes.insert((pid, tid));
                let mut args = task_args(&s.task);
                if s.code != 0 {
                    args.insert("code".into(), json!(s.code));
                }
                events.push(json!({
                    "name": s.task.name,
                    "cat": s.task.cat,
                    "ph": "X",
                    "ts": us(s.start),
                    "dur": dur(s.start, s.end),
                    "pid": pid,
                    "tid": tid,
                    "args": args,
                }));
            }
            Entry::Range {
                name,
                tid,
                start,
                end,
                kind,
            } => {
                lanes.insert((HOST_PID, i64::from(*tid)));
                events.push(json!({
                    "name": name,
                    "cat": kind,
                    "ph": "X",
                    "ts": us(*start),
                    "dur": dur(*start, *end),
                    "pid": HOST_PID,
                    "tid": tid,
                }));
            }
            Entry::Mark { name, tid, at, cat } => {
                lanes.insert((HOST_PID, i64::from(*tid)));
                events.push(json!({
                    "name": name,
                    "cat": cat,
                    "ph": "i",
                    "s": "t",
                    "ts": us(*at),
                    "pid": HOST_PID,
                    "tid": tid,
                }));
            }
        }
    }
    drop(log);
    // Names for the viewer: a process per device (and the host), a thread per stream.
    let mut meta = Vec::new();
    let pids: BTreeSet<i64> = lanes.iter().map(|l| l.0).collect();
    for pid in pids {
        let name = if pid == HOST_PID {
            "host".to_string()
        } else {
            format!("device {pid}")
        };
        meta.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}));
        meta.push(json!({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}));
    }
    for (pid, tid) in &lanes {
        let name = match (*pid == HOST_PID, *tid) {
            (true, 0) => "streams no longer live".to_string(),
            (true, t) => format!("thread {t}"),
            (false, t) => format!("stream {t}"),
        };
        meta.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
    }
    meta.extend(events);
    json!({
        "traceEvents": meta,
        "displayTimeUnit": "ns",
        "otherData": {
            "producer": "ascendcl-emu",
            "version": env!("CARGO_PKG_VERSION"),
            "recorded": about,
            "dropped": dropped,
        },
    })
}

/// The `pid` and `tid` of a lane (a lane whose stream is gone goes to the host's tid 0).
fn lane_ids(l: Lane) -> (i64, i64) {
    if l.device < 0 {
        (HOST_PID, 0)
    } else {
        (i64::from(l.device), i64::from(l.stream))
    }
}

fn task_args(t: &Task) -> Map<String, Value> {
    t.args
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Arg::U(n) => json!(n),
                Arg::S(s) => json!(s),
            };
            ((*k).to_string(), v)
        })
        .collect()
}

/// Writes the document of the entries from `from` on to `path` (its directory made if needed).
pub(crate) fn write(
    path: &std::path::Path,
    from: (usize, u64),
    about: Value,
) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let doc = render(from, about);
    let text = serde_json::to_string(&doc).map_err(std::io::Error::other)?;
    // Written beside and renamed into place: a reader (or another process writing the same
    // file) never sees half a document.
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.partial", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_counts_what_it_drops() {
        clear();
        start_clock();
        let mark = |i: usize| Entry::Mark {
            name: format!("m{i}"),
            tid: 1,
            at: Instant::now(),
            cat: "mark",
        };
        for i in 0..MAX_ENTRIES + 6 {
            push(mark(i));
        }
        assert_eq!(len(), (MAX_ENTRIES, 6));
        let doc = render((0, 0), json!(null));
        assert_eq!(doc["otherData"]["dropped"], 6);
        let marks = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "i")
            .count();
        assert_eq!(marks, MAX_ENTRIES);
        // A session that started after the first two drops counts only its own.
        assert_eq!(
            render((MAX_ENTRIES, 2), json!(null))["otherData"]["dropped"],
            4
        );
        clear();
        assert_eq!(len(), (0, 0));
    }
}
